// The forensic layouts a title can be ingested with: the names a request may ask for, and the default.

/**
 * How a title's segments carry the forensic code, chosen at ingest (each trades one cost for another; docs/forensic.md):
 * - 'whole': two code slots per segment (one per half), each of the four variants aa..bb encoded as the segment's one
 *   GOP. Leaks from 2 minutes; delivery about as lean as an unmarked title; four encodes per segment at ingest.
 * - 'split': two slots, each half encoded as a GOP of its own (+P and -P), the four combinations joined by stream copy.
 *   Leaks from 2 minutes and two encodes per segment, but a second keyframe in every segment, paid in bytes per view.
 * - 'single': one slot per segment, files a and b. Two encodes, delivery as lean as 'whole'; leaks from about 3.5 minutes.
 */
export const FORENSIC_LAYOUTS = ['whole', 'split', 'single'] as const;
export type ForensicLayoutChoice = (typeof FORENSIC_LAYOUTS)[number];
export const DEFAULT_FORENSIC_LAYOUT: ForensicLayoutChoice = 'whole';
