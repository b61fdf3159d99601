// How much a picture changes between two frames: per pixel, and per cell of the grid the forensic mark is built on.
// Pure: the forensic bench reads the frames (F3's segment edges).
import { GRID_COLUMNS, GRID_ROWS } from '../../src/core/forensic/keyed-bits.js';

export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
  return s / a.length;
}

/**
 * Per pattern cell (the 16x9 grid the mark is built on), the mean of `diff(i)`: the low-frequency change at that scale.
 * Returns the mean and the largest absolute cell mean.
 */
export function cellMeans(diff: (i: number) => number, width: number, height: number): { meanAbs: number; maxAbs: number } {
  let sum = 0,
    max = 0;
  for (let cy = 0; cy < GRID_ROWS; cy++) {
    for (let cx = 0; cx < GRID_COLUMNS; cx++) {
      const x0 = Math.floor((cx * width) / GRID_COLUMNS),
        x1 = Math.floor(((cx + 1) * width) / GRID_COLUMNS);
      const y0 = Math.floor((cy * height) / GRID_ROWS),
        y1 = Math.floor(((cy + 1) * height) / GRID_ROWS);
      let s = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) s += diff(y * width + x);
      const m = Math.abs(s / ((x1 - x0) * (y1 - y0)));
      sum += m;
      max = Math.max(max, m);
    }
  }
  return { meanAbs: sum / (GRID_ROWS * GRID_COLUMNS), maxAbs: max };
}
