// How much a picture changes between two frames, per pixel and per cell of the forensic mark's 16x9 grid.
import { describe, expect, it } from 'vitest';
import { cellMeans, meanAbsDiff } from '../lib/frame-steps.js';

describe('frame steps', () => {
  it('averages the absolute per-pixel difference', () => {
    expect(meanAbsDiff(Uint8Array.from([10, 20, 30, 40]), Uint8Array.from([12, 18, 30, 44]))).toBe(2);
    expect(meanAbsDiff(new Uint8Array(9).fill(7), new Uint8Array(9).fill(7))).toBe(0);
  });

  it('finds a step confined to one grid cell, and cancels what averages out inside a cell', () => {
    const [w, h] = [32, 18];
    // One cell of the 16x9 grid is 2x2 pixels: +9 in the top-left cell only.
    const oneCell = cellMeans((i) => (i % w < 2 && Math.floor(i / w) < 2 ? 9 : 0), w, h);
    expect(oneCell.maxAbs).toBe(9);
    expect(oneCell.meanAbs).toBeCloseTo(9 / 144);
    // +5 and -5 in alternate columns: no low-frequency change at the grid's scale.
    expect(cellMeans((i) => (i % 2 ? 5 : -5), w, h)).toEqual({ meanAbs: 0, maxAbs: 0 });
    // A uniform shift of -3 is -3 in every cell.
    expect(cellMeans(() => -3, w, h)).toEqual({ meanAbs: 3, maxAbs: 3 });
  });
});
