// A forensic title's layout: how many code slots each segment carries, which variant file a viewer's codeword picks
// for a segment, each segment's pattern grids, and the sidecar and layout files made from the measured encodes.
//
// In the 'whole' and 'split' layouts a segment of 3 s or more carries two slots, one per half, in four segment files
// aa/ab/ba/bb; shorter segments, and every segment in the 'single' layout, carry one slot in files a/b. Titles
// prepared before slots existed have no layout file: one slot per segment, files a/b (layout v1). Serving and
// detection read the layout file and the sidecar, never the layout choice, so titles prepared any way live side by side.
import { DEFAULT_FORENSIC_LAYOUT, type ForensicLayoutChoice } from '../forensic-layout.js';
import { forensicKey, patternGrid } from './keyed-bits.js';
import { encodeSidecar } from './sidecar-format.js';
import { buildSidecar, type SegmentMeasure, slotsOfSegments, splitFrame, variantFileName } from './variant-plan.js';

export interface ForensicLayout {
  version: 1 | 2;
  /** Code slots per segment (1 or 2). */
  slotsPerSegment: number[];
  /** Index of each segment's first slot (derived). */
  firstSlot: number[];
  /** Total code bits of the title. */
  slots: number;
}

export function makeLayout(version: 1 | 2, slotsPerSegment: number[]): ForensicLayout {
  const firstSlot: number[] = [];
  let at = 0;
  for (const s of slotsPerSegment) {
    firstSlot.push(at);
    at += s;
  }
  return { version, slotsPerSegment, firstSlot, slots: at };
}

/** The layout from a title's layout file (its text), or, without one, a v1 title's: one slot per segment. */
export function parseLayout(text: string | undefined, segments: number): ForensicLayout {
  if (text === undefined) return makeLayout(1, new Array<number>(segments).fill(1));
  const json = JSON.parse(text) as { version: 2; slotsPerSegment: number[] };
  return makeLayout(json.version, json.slotsPerSegment);
}

/** The variant file a viewer with codeword `code` (±1 per slot) receives for segment `index`. */
export function variantFileFor(layout: ForensicLayout, code: ArrayLike<number>, index: number): string {
  const first = layout.firstSlot[index]!;
  let letters = '';
  for (let s = 0; s < layout.slotsPerSegment[index]!; s++) letters += code[first + s]! > 0 ? 'a' : 'b';
  return variantFileName(letters, index);
}

/**
 * Each segment's split frame, the pattern grids of its code slots (derived from the secret, which stays with the
 * caller), and whether its halves are encoded as GOPs of their own.
 */
export function segmentPatterns(
  secret: Buffer,
  videoId: string,
  segmentDurations: readonly number[],
  fps: number,
  choice: ForensicLayoutChoice = DEFAULT_FORENSIC_LAYOUT,
): { split: number; grids: Int8Array[]; halves: boolean }[] {
  const key = forensicKey(secret);
  const layout = makeLayout(2, slotsOfSegments(segmentDurations, fps, choice));
  return segmentDurations.map((d, k) => ({
    split: splitFrame(d, fps),
    grids: Array.from({ length: layout.slotsPerSegment[k]! }, (_, s) => patternGrid(key, videoId, layout.firstSlot[k]! + s)),
    halves: choice === 'split' && layout.slotsPerSegment[k] === 2,
  }));
}

/** The sidecar's bytes and the layout file, from every segment's measurement (in this process or from workers). */
export function forensicFiles(
  segmentDurations: readonly number[],
  fps: number,
  measures: readonly SegmentMeasure[],
): { sidecar: Buffer; layout: string; slots: number } {
  const slotsPerSegment = measures.map((m) => m.slots);
  return {
    sidecar: encodeSidecar(buildSidecar(segmentDurations, fps, measures)),
    layout: JSON.stringify({ version: 2, slotsPerSegment }),
    slots: slotsPerSegment.reduce((a, b) => a + b, 0),
  };
}
