// The crop search: which region of the original a leak shows full-frame, found from mean pictures (the starting
// point of the warp registration in geometry.ts).
import type { LeakFrames } from './detect-inputs.js';
import { sampleBilinear } from './geometry.js';

/** Mean picture of the leak (8-bit levels). */
export function leakMeanImage(leak: LeakFrames): Float32Array {
  const n = leak.width * leak.height;
  const sum = new Float64Array(n);
  const count = leak.times.length;
  for (let i = 0; i < count; i++) for (let p = 0; p < n; p++) sum[p]! += leak.frames[i * n + p]!;
  return Float32Array.from(sum, (v) => v / Math.max(1, count) / 256);
}

export interface Geometry {
  /** The leak frame shows the original's region [x0, x0+w] x [y0, y0+h] (fractions of the frame). */
  x0: number;
  y0: number;
  w: number;
  h: number;
  score: number;
}

/** Resamples the region g of an image (width x height) back to width x height. */
export function warp(img: Float32Array, width: number, height: number, g: Omit<Geometry, 'score'>, out = new Float32Array(width * height)): Float32Array {
  for (let y = 0; y < height; y++) {
    const sy = (g.y0 + ((y + 0.5) / height) * g.h) * height - 0.5;
    for (let x = 0; x < width; x++) out[y * width + x] = sampleBilinear(img, width, height, (g.x0 + ((x + 0.5) / width) * g.w) * width - 0.5, sy);
  }
  return out;
}

function pearson(a: Float32Array, b: Float32Array): number {
  let sa = 0,
    sb = 0,
    saa = 0,
    sbb = 0,
    sab = 0;
  const n = a.length;
  for (let i = 0; i < n; i++) {
    const x = a[i]!,
      y = b[i]!;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  const den = Math.sqrt((saa - (sa * sa) / n) * (sbb - (sb * sb) / n));
  return den > 0 ? (sab - (sa * sb) / n) / den : 0;
}

/** Searches crops (up to 15 % per axis, any position) for the one that best explains the leak's mean picture. */
export function registerGeometry(original: Float32Array, leak: Float32Array, width: number, height: number): Geometry {
  let best: Geometry = { x0: 0, y0: 0, w: 1, h: 1, score: pearson(original, leak) };
  const scratch = new Float32Array(width * height);
  const scales = [1, 0.97, 0.94, 0.92, 0.9, 0.88, 0.85];
  for (const w of scales) {
    for (const h of scales) {
      const stepX = 1 / width,
        stepY = 1 / height;
      for (let x0 = 0; x0 <= 1 - w + 1e-9; x0 += stepX * 2) {
        for (let y0 = 0; y0 <= 1 - h + 1e-9; y0 += stepY * 2) {
          const score = pearson(warp(original, width, height, { x0, y0, w, h }, scratch), leak);
          if (score > best.score) best = { x0, y0, w, h, score };
        }
      }
    }
  }
  if (best.w === 1 && best.h === 1) return best;
  // Refine around the coarse optimum at one-pixel steps.
  const coarse = best;
  for (let dx = -1; dx <= 1; dx++) {
    for (let dy = -1; dy <= 1; dy++) {
      for (const dw of [-0.01, 0, 0.01]) {
        for (const dh of [-0.01, 0, 0.01]) {
          const g = { x0: coarse.x0 + dx / width, y0: coarse.y0 + dy / height, w: Math.min(1, coarse.w + dw), h: Math.min(1, coarse.h + dh) };
          if (g.x0 < 0 || g.y0 < 0 || g.x0 + g.w > 1 + 1e-9 || g.y0 + g.h > 1 + 1e-9) continue;
          const score = pearson(warp(original, width, height, g, scratch), leak);
          if (score > best.score) best = { ...g, score };
        }
      }
    }
  }
  return best;
}
