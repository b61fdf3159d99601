// The leak's geometry against the original: a projective warp (homography) after a radial lens term, estimated from
// mean pictures by Gauss-Newton, starting from the best crop. Covers crops and rescales (a special homography) and the
// camcorder case: a screen filmed from slightly off-axis through a lens with some barrel distortion.
//
// Coordinates: a point (u, v) of a frame, both in [0, 1], is centred and put in width units, X = u - 0.5,
// Y = (v - 0.5) / aspect, so the model does not depend on the pixel size the pictures are compared at.
import { solveLinear } from './linear-solve.js';
import { toneCurveResiduals } from './tone-curve.js';

/** Maps leak coordinates to original coordinates: undistort (1 + k1 r^2), then the homography h (row-major 3x3). */
export interface Warp {
  h: number[];
  k1: number;
}

const IDENTITY_WARP: Warp = { h: [1, 0, 0, 0, 1, 0, 0, 0, 1], k1: 0 };

/** The crop [x0, x0+w] x [y0, y0+h] of the original shown full-frame, as a warp. */
export function cropWarp(g: { x0: number; y0: number; w: number; h: number }, aspect: number): Warp {
  return { h: [g.w, 0, g.x0 + g.w / 2 - 0.5, 0, g.h, (g.y0 + g.h / 2 - 0.5) / aspect, 0, 0, 1], k1: 0 };
}

export function isIdentity(w: Warp): boolean {
  return w.k1 === 0 && w.h.every((v, i) => v === IDENTITY_WARP.h[i]);
}

/** Original coordinates (u, v in [0, 1]) of the leak point (u, v). */
export function mapPoint(w: Warp, u: number, v: number, aspect: number): [number, number] {
  const X = u - 0.5;
  const Y = (v - 0.5) / aspect;
  const f = 1 + w.k1 * (X * X + Y * Y);
  const xu = X * f,
    yu = Y * f;
  const h = w.h;
  const d = h[6]! * xu + h[7]! * yu + h[8]!;
  return [(h[0]! * xu + h[1]! * yu + h[2]!) / d + 0.5, ((h[3]! * xu + h[4]! * yu + h[5]!) / d) * aspect + 0.5];
}

/** The original's region the leak frame shows, as a bounding box (for reports). */
export function warpBox(w: Warp, aspect: number): { x0: number; y0: number; w: number; h: number } {
  const pts = [
    [0, 0],
    [1, 0],
    [0, 1],
    [1, 1],
    [0.5, 0],
    [0.5, 1],
    [0, 0.5],
    [1, 0.5],
  ].map(([u, v]) => mapPoint(w, u!, v!, aspect));
  const xs = pts.map((p) => p[0]),
    ys = pts.map((p) => p[1]);
  const x0 = Math.min(...xs),
    y0 = Math.min(...ys);
  return { x0, y0, w: Math.max(...xs) - x0, h: Math.max(...ys) - y0 };
}

/** The picture at a point between pixels, interpolated from its four neighbours (clamped to the picture). */
export function sampleBilinear(img: Float32Array, width: number, height: number, x: number, y: number): number {
  const cx = Math.min(Math.max(x, 0), width - 1);
  const cy = Math.min(Math.max(y, 0), height - 1);
  const x0 = Math.floor(cx),
    y0 = Math.floor(cy);
  const x1 = Math.min(x0 + 1, width - 1),
    y1 = Math.min(y0 + 1, height - 1);
  const fx = cx - x0,
    fy = cy - y0;
  return (img[y0 * width + x0]! * (1 - fx) + img[y0 * width + x1]! * fx) * (1 - fy) + (img[y1 * width + x0]! * (1 - fx) + img[y1 * width + x1]! * fx) * fy;
}

/**
 * The original picture `img` (iw x ih) as the leak (ow x oh) shows it: for each leak pixel, the original sampled
 * where the warp maps it. `mask` (optional) gets 1 where that point lies inside the original frame, else 0.
 */
export function warpImage(
  img: Float32Array,
  iw: number,
  ih: number,
  w: Warp,
  ow: number,
  oh: number,
  out = new Float32Array(ow * oh),
  mask?: Uint8Array,
): Float32Array {
  const aspect = ow / oh;
  for (let y = 0; y < oh; y++) {
    const v = (y + 0.5) / oh;
    for (let x = 0; x < ow; x++) {
      const [uo, vo] = mapPoint(w, (x + 0.5) / ow, v, aspect);
      out[y * ow + x] = sampleBilinear(img, iw, ih, uo * iw - 0.5, vo * ih - 0.5);
      if (mask) mask[y * ow + x] = uo >= -0.002 && uo <= 1.002 && vo >= -0.002 && vo <= 1.002 ? 1 : 0;
    }
  }
  return out;
}

/** Pearson correlation over the pixels where mask is set (all when no mask). */
function maskedPearson(a: Float32Array, b: Float32Array, mask?: Uint8Array): number {
  let n = 0,
    sa = 0,
    sb = 0,
    saa = 0,
    sbb = 0,
    sab = 0;
  for (let i = 0; i < a.length; i++) {
    if (mask && !mask[i]) continue;
    const x = a[i]!,
      y = b[i]!;
    n++;
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  if (n < 16) return 0;
  const den = Math.sqrt((saa - (sa * sa) / n) * (sbb - (sb * sb) / n));
  return den > 0 ? (sab - (sa * sb) / n) / den : 0;
}

/** 3x3 box blur, twice (a cheap Gaussian): widens the basin of the optimiser. */
function smooth(img: Float32Array, width: number, height: number): Float32Array {
  let src = img;
  for (let pass = 0; pass < 2; pass++) {
    const out = new Float32Array(width * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let s = 0,
          c = 0;
        for (let dy = -1; dy <= 1; dy++) {
          const yy = y + dy;
          if (yy < 0 || yy >= height) continue;
          for (let dx = -1; dx <= 1; dx++) {
            const xx = x + dx;
            if (xx < 0 || xx >= width) continue;
            s += src[yy * width + xx]!;
            c++;
          }
        }
        out[y * width + x] = s / c;
      }
    }
    src = out;
  }
  return src;
}

const toParams = (w: Warp): number[] => [w.h[0]! - 1, w.h[1]!, w.h[2]!, w.h[3]!, w.h[4]! - 1, w.h[5]!, w.h[6]!, w.h[7]!, w.k1];
const fromParams = (p: number[]): Warp => ({ h: [1 + p[0]!, p[1]!, p[2]!, p[3]!, 1 + p[4]!, p[5]!, p[6]!, p[7]!, 1], k1: p[8]! });

export interface ImagePair {
  original: Float32Array;
  leak: Float32Array;
}

/**
 * Mean Pearson correlation of the leak pictures with the warped originals (the registration's figure of merit), over
 * the leak pixels in `live` (all when absent) that the warp maps inside the original.
 */
function warpScore(pairs: ImagePair[], width: number, height: number, w: Warp, live?: Uint8Array): number {
  const scratch = new Float32Array(width * height);
  const mask = new Uint8Array(width * height);
  let s = 0;
  for (const p of pairs) {
    warpImage(p.original, width, height, w, width, height, scratch, mask);
    if (live) for (let q = 0; q < mask.length; q++) mask[q]! &= live[q]!;
    s += maskedPearson(scratch, p.leak, mask);
  }
  return s / pairs.length;
}

/** `live` with every pixel within `radius` (Chebyshev) of an excluded one excluded too. */
function erodeMask(live: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  if (radius <= 0) return live;
  const out = new Uint8Array(live.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let keep = live[y * width + x]!;
      for (let dy = -radius; dy <= radius && keep; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -radius; dx <= radius; dx++) {
          const xx = x + dx;
          if (xx >= 0 && xx < width && !live[yy * width + xx]) {
            keep = 0;
            break;
          }
        }
      }
      out[y * width + x] = keep;
    }
  }
  return out;
}

/** How far above the typical pixel's residual a pixel must be to count as not showing the original (see liveMask). */
const DEAD_RESIDUAL_FACTOR = 4;
/** ... and at least this many 8-bit levels (RMS over the pairs): the mark itself is 1.25. */
const DEAD_RESIDUAL_FLOOR = 2;

/**
 * Leak pixels that show the original under the warp `w`. Per pair, the leak is fitted as a quadratic tone curve of the
 * warped original (gamma and contrast changes are not outliers; the fit is done twice, the second time without the
 * pixels the first left far off); a pixel whose residual (RMS over the pairs) stands far above the median pixel's does
 * not show the original: a camcorder's unlit lens border, the screen's bezel, a logo or subtitles burnt in. Those
 * pixels, and their neighbours (blur spreads them), are left out. Pixels the warp maps a little outside the original
 * are judged against its nearest edge, so a dark border is found even where a poor warp pushes it off the picture.
 * Returns 1 = live.
 */
export function liveMask(pairs: ImagePair[], width: number, height: number, w: Warp): Uint8Array {
  const n = width * height;
  const sq = new Float64Array(n);
  const inside = new Uint8Array(n).fill(1);
  const img = new Float32Array(n);
  const mask = new Uint8Array(n);
  const res = new Float32Array(n);
  for (const pair of pairs) {
    warpImage(pair.original, width, height, w, width, height, img, mask);
    if (!toneCurveResiduals(img, mask, pair.leak, res, DEAD_RESIDUAL_FLOOR)) return new Uint8Array(n).fill(1);
    for (let q = 0; q < n; q++) {
      sq[q]! += res[q]! * res[q]!;
      if (!mask[q]) inside[q] = 0;
    }
  }
  const rms = Float64Array.from(sq, (v) => Math.sqrt(v / pairs.length));
  const typical = rms.filter((_, q) => inside[q]).sort();
  if (!typical.length) return new Uint8Array(n).fill(1);
  const limit = Math.max(DEAD_RESIDUAL_FACTOR * typical[typical.length >> 1]!, DEAD_RESIDUAL_FLOOR);
  const kept = Uint8Array.from(rms, (v) => (v > limit ? 0 : 1));
  return erodeMask(kept, width, height, 1);
}

/**
 * Gauss-Newton (Levenberg-Marquardt damped) on the 9 warp parameters: leak ~ a_i * warp(original_i) + b_i per pair,
 * with a numeric Jacobian. Pixels that map outside the original are left out.
 */
function refineWarp(pairs: ImagePair[], width: number, height: number, start: Warp, iterations = 25, fixed: number[] = [], live?: Uint8Array): Warp {
  const n = width * height;
  let p = toParams(start);
  const eps = 1e-3;
  const residuals = (params: number[]): { r: Float64Array; cost: number } => {
    const w = fromParams(params);
    const r = new Float64Array(pairs.length * n);
    const img = new Float32Array(n);
    const mask = new Uint8Array(n);
    let cost = 0;
    pairs.forEach((pair, i) => {
      warpImage(pair.original, width, height, w, width, height, img, mask);
      if (live) for (let q = 0; q < n; q++) mask[q]! &= live[q]!;
      let c = 0,
        sx = 0,
        sy = 0,
        sxx = 0,
        sxy = 0;
      for (let q = 0; q < n; q++) {
        if (!mask[q]) continue;
        const x = img[q]!,
          y = pair.leak[q]!;
        c++;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
      }
      const varx = sxx - (sx * sx) / Math.max(1, c);
      const a = varx > 1e-9 ? (sxy - (sx * sy) / c) / varx : 0;
      const b = (sy - a * sx) / Math.max(1, c);
      for (let q = 0; q < n; q++) {
        // Outside the original: a fixed penalty-free zero residual, so moving the border does not pay by itself.
        const v = mask[q] ? pair.leak[q]! - (a * img[q]! + b) : 0;
        r[i * n + q] = v;
        cost += v * v;
      }
    });
    return { r, cost };
  };
  let lambda = 1e-3;
  let cur = residuals(p);
  const free = Array.from({ length: 9 }, (_, i) => i).filter((i) => !fixed.includes(i));
  for (let it = 0; it < iterations; it++) {
    const J = free.map((i) => {
      const q = [...p];
      q[i]! += eps;
      const { r } = residuals(q);
      return r.map((v, k) => (v - cur.r[k]!) / eps);
    });
    const m = free.length;
    const JtJ = Array.from({ length: m }, () => new Array<number>(m).fill(0));
    const Jtr = new Array<number>(m).fill(0);
    for (let a = 0; a < m; a++) {
      for (let b = a; b < m; b++) {
        let s = 0;
        const ja = J[a]!,
          jb = J[b]!;
        for (let k = 0; k < ja.length; k++) s += ja[k]! * jb[k]!;
        JtJ[a]![b] = s;
        JtJ[b]![a] = s;
      }
      let s = 0;
      const ja = J[a]!;
      for (let k = 0; k < ja.length; k++) s += ja[k]! * cur.r[k]!;
      Jtr[a] = s;
    }
    let improved = false;
    for (let tries = 0; tries < 6 && !improved; tries++) {
      const A = JtJ.map((row, i) => row.map((v, j) => (i === j ? v * (1 + lambda) + 1e-9 : v)));
      const downhill = Jtr.map((v) => -v);
      const step = solveLinear(A, downhill);
      if (!step) break;
      const q = [...p];
      for (let j = 0; j < free.length; j++) q[free[j]!]! += step[j]!;
      const next = residuals(q);
      if (next.cost < cur.cost) {
        p = q;
        cur = next;
        lambda = Math.max(1e-7, lambda / 3);
        improved = true;
        if (Math.max(...step.map(Math.abs)) < 1e-5) it = iterations;
      } else lambda *= 8;
    }
    if (!improved) break;
  }
  return fromParams(p);
}

/**
 * Registers the leak against the original from one or more pairs of mean pictures (same stretch of the timeline).
 * `start` is a coarse estimate (the best crop); the result is the refined warp when it explains the leak better, and
 * `live`, the leak pixels that show the original under it (see liveMask). Those that do not (a camcorder's dark lens
 * border) would otherwise pull the fit and, far worse, every slot's reading: a residual of 100 levels on a few hundred
 * pixels outweighs a mark of 1.25.
 */
export function registerWarp(
  pairs: ImagePair[],
  width: number,
  height: number,
  start: Warp,
): { warp: Warp; score: number; startScore: number; live: Uint8Array } {
  // Coarse to fine: blurred pictures first (a wider basin), then the pictures themselves; the lens term last.
  const blurred = pairs.map((p) => ({ original: smooth(p.original, width, height), leak: smooth(p.leak, width, height) }));
  let w = refineWarp(blurred, width, height, start, 15, [8]);
  w = refineWarp(blurred, width, height, w, 15);
  w = refineWarp(pairs, width, height, w, 15);
  // Then again without the pixels that do not show the original (the blurred pictures spread them 2 pixels further).
  // Twice: the first mask is judged under a warp that the dead pixels pulled.
  let live = liveMask(pairs, width, height, w);
  for (let round = 0; round < 2 && live.includes(0); round++) {
    w = refineWarp(blurred, width, height, w, 15, [], erodeMask(live, width, height, 2));
    w = refineWarp(pairs, width, height, w, 15, [], live);
    live = liveMask(pairs, width, height, w);
  }
  const startLive = liveMask(pairs, width, height, start);
  const score = warpScore(pairs, width, height, w, live);
  const startScore = warpScore(pairs, width, height, start, startLive);
  return score > startScore + 1e-4 ? { warp: w, score, startScore, live } : { warp: start, score: startScore, startScore, live: startLive };
}
