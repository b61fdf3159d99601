// How a video is cut into working segments: the GOP length, the shorter lead segments at the opening, frame counts, cut points and file names.

export const SEGMENT_SECONDS = 4;

/** Frames per working segment: the GOP length, so every segment is exactly one closed GOP (the last may be shorter). */
export function framesPerSegment(fps: { num: number; den: number }, seconds = SEGMENT_SECONDS): number {
  return Math.max(1, Math.round((seconds * fps.num) / fps.den));
}

/**
 * The opening of a video is cut into shorter segments (0.5 s, 0.5 s, 1 s, 2 s, then one GOP each), so a watermark is
 * playable once its first half second is rendered rather than its first four, and the next segments follow in time.
 */
const LEAD_SEGMENT_SECONDS = [0.5, 0.5, 1, 2] as const;

/**
 * Frames of the lead segments at this rate: they add up to exactly one GOP, so every later boundary falls on a
 * multiple of the GOP (the last lead segment takes what rounding left). Empty when the rate is too low to give every
 * lead segment a frame of its own.
 */
export function leadSegmentFrames(fps: { num: number; den: number }): number[] {
  const gop = framesPerSegment(fps);
  const rate = fps.num / fps.den;
  const first = LEAD_SEGMENT_SECONDS.slice(0, -1).map((s) => Math.max(1, Math.round(s * rate)));
  const last = gop - first.reduce((a, b) => a + b, 0);
  return last >= 1 ? [...first, last] : [];
}

/**
 * Frame counts of a video's segments: with `lead`, the lead segments, then one GOP each; the last holds what is left.
 * `totalFrames` is the number of frames the encode produced.
 */
export function segmentFrameCounts(fps: { num: number; den: number }, totalFrames: number, lead: boolean): number[] {
  const gop = framesPerSegment(fps);
  const counts: number[] = [];
  let left = totalFrames;
  for (const n of [...(lead ? leadSegmentFrames(fps) : []), ...new Array<number>(Math.ceil(totalFrames / gop)).fill(gop)]) {
    if (left <= 0) break;
    counts.push(Math.min(n, left));
    left -= n;
  }
  return counts;
}

/** Frame numbers where a new segment starts: after each lead segment, then every GOP, up to `maxFrames`. */
export function segmentBoundaries(lead: number[], gop: number, maxFrames = 0): number[] {
  const cuts: number[] = [];
  let at = 0;
  for (const n of lead) {
    at += n;
    cuts.push(at);
  }
  for (at += gop; at < maxFrames; at += gop) cuts.push(at);
  return cuts;
}

export function segmentFileName(index: number): string {
  return `seg_${String(index).padStart(5, '0')}.ts`;
}
