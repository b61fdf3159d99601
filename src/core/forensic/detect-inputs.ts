// What detection reads: the original's sidecar (decoded, see sidecar-format.ts) and the leak's decoded frames.

export interface Sidecar {
  /** 1: one code slot per 4-s segment (videos ingested before slots); 2: one or two slots per segment. */
  version: 1 | 2;
  width: number;
  height: number;
  fps: number;
  /** Start (s, video timeline) and duration of each segment. */
  segmentStarts: number[];
  segmentDurations: number[];
  /** Code slots: each carries one bit of the viewer's codeword (bit j = slot j); start, duration, segment. */
  slotStarts: number[];
  slotDurations: number[];
  slotSegments: number[];
  /** Per slot, the mean frame of (A+B)/2 (width x height) and of (A-B)/2 (diffWidth x diffHeight). */
  mean: Float32Array;
  diffWidth: number;
  diffHeight: number;
  diff: Float32Array;
  /** Per original frame: time (s) and 4x4 cell means. */
  signatureTimes: Float64Array;
  signature: Float32Array;
}

export interface LeakFrames {
  width: number;
  height: number;
  /** Start time of each entry (leak seconds). */
  times: Float64Array;
  /** width*height luma per entry, 16-bit (8-bit level x 256) as ffmpeg's gray16le gives it. */
  frames: Uint16Array;
  /**
   * A long leak is kept as the means of short runs of frames (chunks): how many frames each entry averages, and the
   * seconds it spans. Absent: every entry is one frame, spanning the median frame interval.
   */
  counts?: Uint16Array;
  spans?: Float64Array;
}
