// Fitting a linear mapping (original time = scale x leak time + offset) to a stretch of the leak: the windows' size,
// the speeds searched, the correlation of the features under a mapping, and its refinement by grid search.
import { ALIGN_RATE } from './fingerprint-votes.js';
import { SIGNATURE_CELLS } from './frame-signature.js';

/** Cells per signature, as a module constant: the loops below read it per cell, and reads of an import are slower. */
const CELLS = SIGNATURE_CELLS;

/** The leak is fitted in windows of 8 s (80 bins). */
export const WINDOW_BINS = 80;
/** Speeds searched: 0.90x .. 1.10x of the original. */
export const SCALE_MIN = 0.9;
export const SCALE_MAX = 1.1;
export const SCALE_STEP = 0.01;
/** A window is trusted when its features correlate at least this well with the original under its mapping. */
export const WINDOW_MIN_R = 0.4;

/** Linear interpolation of the original's features at fractional bin j (NaN outside). */
export function featureAt(o: Float64Array, bins: number, j: number, c: number): number {
  if (j < 0 || j > bins - 1) return NaN;
  const j0 = Math.floor(j);
  const f = j - j0;
  const a = o[j0 * CELLS + c]!;
  if (f === 0) return a;
  const b = o[Math.min(bins - 1, j0 + 1) * CELLS + c]!;
  return a + (b - a) * f;
}

/** Pearson correlation of leak bins [i0, i1) (every step-th) with the original under t_o = s*t_l + off (bin centres). */
export function mappedPearson(
  l: Float64Array,
  o: Float64Array,
  oBins: number,
  i0: number,
  i1: number,
  s: number,
  off: number,
  step = 1,
): { r: number; n: number } {
  let n = 0,
    sx = 0,
    sy = 0,
    sxx = 0,
    syy = 0,
    sxy = 0;
  for (let i = i0; i < i1; i += step) {
    const j = s * (i + 0.5) + off * ALIGN_RATE - 0.5;
    if (j < 0 || j > oBins - 1) continue;
    for (let c = 0; c < CELLS; c++) {
      const x = l[i * CELLS + c]!;
      if (Number.isNaN(x)) continue;
      const y = featureAt(o, oBins, j, c);
      if (Number.isNaN(y)) continue;
      n++;
      sx += x;
      sy += y;
      sxx += x * x;
      syy += y * y;
      sxy += x * y;
    }
  }
  if (n < CELLS * 10) return { r: 0, n };
  const den = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
  return { r: den > 0 ? (sxy - (sx * sy) / n) / den : 0, n };
}

/** Cosine similarity of leak bin i with the original under a mapping (0 when either is missing). */
export function binSimilarity(l: Float64Array, o: Float64Array, oBins: number, i: number, s: number, off: number): number {
  const j = s * (i + 0.5) + off * ALIGN_RATE - 0.5;
  if (j < 0 || j > oBins - 1) return 0;
  let xx = 0,
    yy = 0,
    xy = 0;
  for (let c = 0; c < CELLS; c++) {
    const x = l[i * CELLS + c]!;
    const y = featureAt(o, oBins, j, c);
    if (Number.isNaN(x) || Number.isNaN(y)) return 0;
    xx += x * x;
    yy += y * y;
    xy += x * y;
  }
  return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
}

export interface WindowFit {
  i0: number;
  i1: number;
  scale: number;
  offset: number;
  r: number;
}

export function refine(
  l: Float64Array,
  o: Float64Array,
  oBins: number,
  i0: number,
  i1: number,
  s0: number,
  off0: number,
  ds: number,
  dOff: number,
  steps: number,
): WindowFit {
  let best: WindowFit = { i0, i1, scale: s0, offset: off0, r: -Infinity };
  for (let a = -steps; a <= steps; a++) {
    const s = s0 + (a * ds) / steps;
    for (let b = -steps; b <= steps; b++) {
      const off = off0 + (b * dOff) / steps;
      const { r } = mappedPearson(l, o, oBins, i0, i1, s, off);
      if (r > best.r) best = { i0, i1, scale: s, offset: off, r };
    }
  }
  return best;
}

/**
 * Most leaks play at the original speed, and 8-s windows of slow, grainy content cannot tell 0.97x from 1.00x: the
 * windows' least squares then lands a few % off and the piece drifts out of step. Each piece is therefore also fitted
 * at exactly 1x (same original time at its centre, offset searched +-1.5 s), and that fit is kept when it explains
 * the piece about as well (within UNIT_SCALE_SLACK of the correlation); a real 4 % speed change drifts seconds over
 * a piece and loses far more than that.
 */
export const UNIT_SCALE_SLACK = 0.01;

export function unitScaleFit(l: Float64Array, o: Float64Array, oBins: number, i0: number, i1: number, scale: number, offset: number): WindowFit {
  const centre = (i0 + i1) / 2 / ALIGN_RATE;
  const off0 = scale * centre + offset - centre;
  let best: WindowFit = { i0, i1, scale: 1, offset: off0, r: -Infinity };
  for (let k = -30; k <= 30; k++) {
    const off = off0 + k * 0.05;
    const { r } = mappedPearson(l, o, oBins, i0, i1, 1, off);
    if (r > best.r) best = { i0, i1, scale: 1, offset: off, r };
  }
  for (let k = -5; k <= 5; k++) {
    const off = best.offset + k * 0.01;
    const { r } = mappedPearson(l, o, oBins, i0, i1, 1, off);
    if (r > best.r) best = { i0, i1, scale: 1, offset: off, r };
  }
  return best;
}

/**
 * One mapping through windows that tell the same story: least squares over their centres' original times (the
 * speed an 8-s window alone gives is only good to about 1 %; over minutes that is seconds of drift).
 */
export function lineThrough(fits: Pick<WindowFit, 'i0' | 'i1' | 'scale' | 'offset'>[]): { scale: number; offset: number } {
  let sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  for (const f of fits) {
    const x = (f.i0 + f.i1) / 2 / ALIGN_RATE;
    const y = f.scale * x + f.offset;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const n = fits.length;
  const varx = sxx - (sx * sx) / n;
  const scale = n >= 3 && varx > 1 ? (sxy - (sx * sy) / n) / varx : fits.reduce((a, f) => a + f.scale, 0) / n;
  return { scale, offset: (sy - scale * sx) / n };
}
