// A leak's time map: pieces of the leak, each following the original's timeline linearly at its own speed and offset.

export interface TimePiece {
  /** Leak seconds [leakStart, leakEnd) follow original time = scale * t + offset. */
  leakStart: number;
  leakEnd: number;
  scale: number;
  offset: number;
  /** Pearson correlation of the features over the piece. */
  score: number;
}

export interface TimeMap {
  pieces: TimePiece[];
}

/** Original time of leak time t, or NaN where no piece covers it. */
export function mapTime(map: TimeMap, t: number): number {
  for (const p of map.pieces) if (t >= p.leakStart && t < p.leakEnd) return p.scale * t + p.offset;
  return NaN;
}

/** The piece covering leak time t (index), or -1. */
export function pieceAt(map: TimeMap, t: number): number {
  return map.pieces.findIndex((p) => t >= p.leakStart && t < p.leakEnd);
}

/** Two mappings tell the same story at leak time `at` (s): speeds within `scale`, original times within `seconds`. */
export function sameStory(m: { scale: number; offset: number }, n: { scale: number; offset: number }, at: number, scale = 0.002, seconds = 0.1): boolean {
  return Math.abs(m.scale - n.scale) < scale && Math.abs(m.scale * at + m.offset - (n.scale * at + n.offset)) < seconds;
}
