// The leak as a tone curve of the original: a gamma or contrast change the leaker applied bends the picture's levels
// without making any pixel an outlier, so pixels are judged by how far they sit from the fitted curve.
import { solveLinear } from './linear-solve.js';

/**
 * The leak's residuals (`res`, every pixel) after fitting it, over the pixels `mask` marks, as a quadratic tone curve
 * of the warped original `img`: fitted twice, the second time without the pixels the first fit left far off (over
 * three times the median residual, and over `floor`). False when too few pixels are marked to fit.
 */
export function toneCurveResiduals(img: Float32Array, mask: Uint8Array, leak: Float32Array, res: Float32Array, floor: number): boolean {
  const n = img.length;
  let cnt = 0,
    mu = 0;
  for (let q = 0; q < n; q++)
    if (mask[q]) {
      cnt++;
      mu += img[q]!;
    }
  if (cnt < 16) return false;
  mu /= cnt;
  let v = 0;
  for (let q = 0; q < n; q++) if (mask[q]) v += (img[q]! - mu) ** 2;
  const sd = Math.sqrt(v / cnt) || 1;
  let use = (q: number) => mask[q] === 1;
  for (let pass = 0; pass < 2; pass++) {
    const A = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    const b = [0, 0, 0];
    for (let q = 0; q < n; q++) {
      if (!use(q)) continue;
      const x = (img[q]! - mu) / sd;
      const row = [1, x, x * x];
      for (let i = 0; i < 3; i++) {
        b[i]! += row[i]! * leak[q]!;
        for (let j = 0; j < 3; j++) A[i]![j]! += row[i]! * row[j]!;
      }
    }
    const c = solveLinear(A, b) ?? [mu, 0, 0];
    for (let q = 0; q < n; q++) {
      const x = (img[q]! - mu) / sd;
      res[q] = leak[q]! - (c[0]! + c[1]! * x + c[2]! * x * x);
    }
    if (pass === 0) {
      const abs = Float32Array.from({ length: cnt }, () => 0);
      let k = 0;
      for (let q = 0; q < n; q++) if (mask[q]) abs[k++] = Math.abs(res[q]!);
      abs.sort();
      const cut = Math.max(3 * abs[k >> 1]!, floor);
      use = (q: number) => mask[q] === 1 && Math.abs(res[q]!) <= cut;
    }
  }
  return true;
}
