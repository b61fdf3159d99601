// Renders a segment's ±1 grid into a smooth full-frame luma offset: the grey frame that ffmpeg's blend adds (A) or subtracts (B).
import { GRID_COLUMNS, GRID_ROWS } from './keyed-bits.js';

/**
 * Luma amplitude of the mark in 8-bit levels: small enough that the mark alone, with the ordered dither, stays above
 * 47 dB PSNR-Y, large enough to survive the attacks docs/forensic.md lists.
 */
export const MARK_AMPLITUDE = 1.25;

const BAYER4 = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5].map((v) => (v + 0.5) / 16 - 0.5);

/** Smooth interpolation of the grid at fractional cell coordinates (cosine-weighted bilinear: no kinks at cell centres). */
export function gridValue(grid: Int8Array, gx: number, gy: number): number {
  const cx = Math.min(Math.max(gx, 0), GRID_COLUMNS - 1);
  const cy = Math.min(Math.max(gy, 0), GRID_ROWS - 1);
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const x1 = Math.min(x0 + 1, GRID_COLUMNS - 1);
  const y1 = Math.min(y0 + 1, GRID_ROWS - 1);
  const sx = (1 - Math.cos(Math.PI * (cx - x0))) / 2;
  const sy = (1 - Math.cos(Math.PI * (cy - y0))) / 2;
  const at = (x: number, y: number) => grid[y * GRID_COLUMNS + x]!;
  return (at(x0, y0) * (1 - sx) + at(x1, y0) * sx) * (1 - sy) + (at(x0, y1) * (1 - sx) + at(x1, y1) * sx) * sy;
}

/** The pattern sampled at width x height (cell centres spread evenly over the frame), in units of the amplitude. */
export function patternField(grid: Int8Array, width: number, height: number): Float32Array {
  const field = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const gy = ((y + 0.5) / height) * GRID_ROWS - 0.5;
    for (let x = 0; x < width; x++) {
      field[y * width + x] = gridValue(grid, ((x + 0.5) / width) * GRID_COLUMNS - 0.5, gy);
    }
  }
  return field;
}

/**
 * One yuv420p frame: luma 128 + amplitude x pattern (ordered dithering keeps the sub-level amplitude on average),
 * chroma 128. Blend's grainmerge adds (Y - 128) to the video's luma; grainextract subtracts it.
 */
export function patternFrameYuv420(grid: Int8Array, width: number, height: number, amplitude = MARK_AMPLITUDE): Buffer {
  const field = patternField(grid, width, height);
  const ySize = width * height;
  const frame = Buffer.alloc(ySize + 2 * (Math.ceil(width / 2) * Math.ceil(height / 2)), 128);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = 128 + amplitude * field[y * width + x]! + BAYER4[(y & 3) * 4 + (x & 3)]!;
      frame[y * width + x] = Math.round(v);
    }
  }
  return frame;
}
