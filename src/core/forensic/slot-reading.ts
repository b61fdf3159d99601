// Reading one soft A/B bit per code slot: the leak's frames mapped into each slot are averaged and fitted against the
// sidecar's mean and mark for that slot.
import type { Geometry } from './crop-search.js';
import type { LeakFrames, Sidecar } from './detect-inputs.js';
import type { SignatureOffset } from './frame-signature.js';
import { isIdentity, type Warp, warpImage } from './geometry.js';
import { solveLinear } from './linear-solve.js';
import type { SegmentReading } from './score.js';
import { mapTime, pieceAt, type TimeMap } from './time-map.js';

/** Median interval between entries (the frame duration of a plain leak). */
function medianStep(times: Float64Array): number {
  if (times.length < 2) return 0.04;
  const steps = Array.from({ length: Math.min(times.length - 1, 999) }, (_, i) => times[i + 1]! - times[i]!).sort((a, b) => a - b);
  return steps[steps.length >> 1]!;
}

/** Index of the slot whose interval holds original time t (binary search), or -1. */
function slotAt(starts: number[], durations: number[], t: number): number {
  let lo = 0,
    hi = starts.length - 1;
  if (hi < 0 || t < starts[0]!) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= t) lo = mid;
    else hi = mid - 1;
  }
  return t < starts[lo]! + durations[lo]! ? lo : -1;
}

/** Bilinear 2x area downsample of the sidecar's mean to the diff's size is not needed: images are warped to the leak's size. */
function toLeakSize(img: Float32Array, iw: number, ih: number, warp: Warp, ow: number, oh: number, mask: Uint8Array): Float32Array {
  if (iw === ow && ih === oh && isIdentity(warp)) {
    mask.fill(1);
    return img;
  }
  return warpImage(img, iw, ih, warp, ow, oh, new Float32Array(ow * oh), mask);
}

/**
 * Per code slot covered by the leak: the mean of the leak entries that map (through `map`) wholly inside the slot,
 * less `marginSeconds` at each end, with the sidecar's mean (m) and mark (d) warped into the leak's frame; `visit` gets
 * them with the mask of pixels to use. A slot seen for less than `minSeconds` of the original is skipped: it carries
 * too little of its mark. `live` (leak pixels that show the original, from registration) leaves the rest out.
 */
function eachSlot(
  sidecar: Sidecar,
  leak: LeakFrames,
  map: TimeMap,
  warp: Warp,
  marginSeconds: number,
  minSeconds: number,
  live: Uint8Array | undefined,
  visit: (k: number, leakMean: Float32Array, m: Float32Array, d: Float32Array, mask: Uint8Array, frames: number) => void,
): void {
  const n = leak.width * leak.height;
  const step = medianStep(leak.times);
  const entries = leak.times.length;
  const slotOf = new Int32Array(entries).fill(-1);
  const covered = new Float64Array(sidecar.slotStarts.length);
  for (let i = 0; i < entries; i++) {
    const t0 = leak.times[i]!;
    const span = leak.spans ? leak.spans[i]! : step;
    const t1 = t0 + Math.max(span, 1e-6) - 1e-6;
    const p = pieceAt(map, t0);
    if (p < 0 || pieceAt(map, t1) !== p) continue;
    const o0 = mapTime(map, t0),
      o1 = mapTime(map, t1 + (leak.spans ? 0 : 1e-6));
    const k = slotAt(sidecar.slotStarts, sidecar.slotDurations, o0);
    if (k < 0) continue;
    const start = sidecar.slotStarts[k]! + marginSeconds;
    const end = sidecar.slotStarts[k]! + sidecar.slotDurations[k]! - marginSeconds;
    if (o0 < start || o1 > end || o0 > end) continue;
    slotOf[i] = k;
    covered[k]! += leak.spans ? o1 - o0 : map.pieces[p]!.scale * step;
  }
  const order = Array.from({ length: entries }, (_, i) => i)
    .filter((i) => slotOf[i]! >= 0)
    .sort((a, b) => slotOf[a]! - slotOf[b]! || a - b);
  const sum = new Float64Array(n);
  const leakMean = new Float32Array(n);
  const mask = new Uint8Array(n);
  const dmask = new Uint8Array(n);
  for (let a = 0; a < order.length; ) {
    const k = slotOf[order[a]!]!;
    let b = a;
    sum.fill(0);
    let frames = 0;
    for (; b < order.length && slotOf[order[b]!] === k; b++) {
      const i = order[b]!;
      const w = leak.counts ? leak.counts[i]! : 1;
      const base = i * n;
      for (let p = 0; p < n; p++) sum[p]! += leak.frames[base + p]! * w;
      frames += w;
    }
    a = b;
    if (covered[k]! < minSeconds - 1e-9 || frames < 3) continue;
    for (let p = 0; p < n; p++) leakMean[p] = sum[p]! / frames / 256;
    const { width, height, diffWidth, diffHeight } = sidecar;
    const m = toLeakSize(sidecar.mean.subarray(k * width * height, (k + 1) * width * height), width, height, warp, leak.width, leak.height, mask);
    const d = toLeakSize(
      sidecar.diff.subarray(k * diffWidth * diffHeight, (k + 1) * diffWidth * diffHeight),
      diffWidth,
      diffHeight,
      warp,
      leak.width,
      leak.height,
      dmask,
    );
    if (live) for (let p = 0; p < n; p++) mask[p]! &= live[p]!;
    visit(k, leakMean, m, d, mask, frames);
  }
}

/** One soft bit per code slot covered by the leak (see eachSlot): `fitSlot` of its mean against the sidecar's. */
export function readSlots(
  sidecar: Sidecar,
  leak: LeakFrames,
  map: TimeMap,
  warp: Warp,
  marginSeconds = 0.15,
  minSeconds = 1,
  live?: Uint8Array,
): SegmentReading[] {
  const readings: SegmentReading[] = [];
  eachSlot(sidecar, leak, map, warp, marginSeconds, minSeconds, live, (k, leakMean, m, d, mask, frames) => {
    const value = fitSlot(m, d, leakMean, mask);
    if (value !== undefined) readings.push({ segment: k, value, frames });
  });
  return readings;
}

/**
 * How well the leak's slot pictures match the original's under `map` (see eachSlot): per slot, the RMS residual of
 * the leak's mean picture after a quadratic tone curve of the original's, averaged over the slots. It does not look at
 * the mark, so it says the same for every payload; a map that reads slots from the wrong stretch of the leak mixes
 * neighbouring pictures and fits worse.
 */
export function slotContentResidual(sidecar: Sidecar, leak: LeakFrames, map: TimeMap, warp: Warp, live?: Uint8Array): { slots: number; residual: number } {
  let slots = 0,
    total = 0;
  eachSlot(sidecar, leak, map, warp, 0.15, 1, live, (_k, leakMean, m, _d, mask) => {
    let cnt = 0,
      mu = 0;
    for (let p = 0; p < m.length; p++)
      if (mask[p]) {
        cnt++;
        mu += m[p]!;
      }
    if (cnt < 16) return;
    mu /= cnt;
    let v = 0;
    for (let p = 0; p < m.length; p++) if (mask[p]) v += (m[p]! - mu) ** 2;
    const sd = Math.sqrt(v / cnt) || 1;
    const A = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    const b = [0, 0, 0];
    for (let p = 0; p < m.length; p++) {
      if (!mask[p]) continue;
      const x = (m[p]! - mu) / sd;
      const row = [1, x, x * x];
      for (let i = 0; i < 3; i++) {
        b[i]! += row[i]! * leakMean[p]!;
        for (let j = 0; j < 3; j++) A[i]![j]! += row[i]! * row[j]!;
      }
    }
    const c = solveLinear(A, b);
    if (!c) return;
    let sq = 0;
    for (let p = 0; p < m.length; p++) {
      if (!mask[p]) continue;
      const x = (m[p]! - mu) / sd;
      sq += (leakMean[p]! - (c[0]! + c[1]! * x + c[2]! * x * x)) ** 2;
    }
    slots++;
    total += Math.sqrt(sq / cnt);
  });
  return { slots, residual: slots ? total / slots : Infinity };
}

/** readSlots with one offset and a crop (the v1 detector's interface, kept for its tests and callers). */
export function readSegments(
  sidecar: Sidecar,
  leak: LeakFrames,
  alignment: SignatureOffset,
  geometry: Omit<Geometry, 'score'>,
  marginSeconds = 0.15,
): SegmentReading[] {
  const map: TimeMap = { pieces: [{ leakStart: -Infinity, leakEnd: Infinity, scale: 1, offset: alignment.offset, score: alignment.score }] };
  const aspect = leak.width / leak.height;
  const warp: Warp = { h: [geometry.w, 0, geometry.x0 + geometry.w / 2 - 0.5, 0, geometry.h, (geometry.y0 + geometry.h / 2 - 0.5) / aspect, 0, 0, 1], k1: 0 };
  return readSlots(sidecar, leak, map, warp, marginSeconds);
}

/**
 * Least squares leak = f(m) + s * f'(m) * d, with the tone curve f quadratic in m (a gamma or contrast curve applied
 * by the leaker bends it), returning s clamped to [-2, 2]. Where the original picture is nearly flat the curve cannot
 * be estimated, so only an offset is fitted (gain 1). Pixels with mask 0 (outside the original) are left out.
 */
function fitSlot(m: Float32Array, d: Float32Array, leak: Float32Array, mask?: Uint8Array): number | undefined {
  const n = m.length;
  let cnt = 0,
    sm = 0,
    smm = 0,
    sd = 0,
    sdd = 0;
  for (let p = 0; p < n; p++) {
    if (mask && !mask[p]) continue;
    cnt++;
    sm += m[p]!;
    smm += m[p]! * m[p]!;
    sd += d[p]!;
    sdd += d[p]! * d[p]!;
  }
  if (cnt < 16) return undefined;
  const mu = sm / cnt;
  const varM = smm / cnt - mu * mu;
  const varD = sdd / cnt - (sd / cnt) ** 2;
  if (!(varD > 0)) return undefined;
  const clamp = (v: number) => Math.max(-2, Math.min(2, v));
  const curved = varM > 4 ? toneCurveFit(m, d, leak, mask, mu, Math.sqrt(varM)) : undefined;
  if (curved !== undefined) return clamp(curved);
  // Flat picture (or an implausible curve): leak - m = o + s*d, fitted for o and s.
  let sr = 0,
    srd = 0;
  for (let p = 0; p < n; p++) {
    if (mask && !mask[p]) continue;
    const r = leak[p]! - m[p]!;
    sr += r;
    srd += r * d[p]!;
  }
  return clamp((srd / cnt - (sr / cnt) * (sd / cnt)) / varD);
}

/**
 * The mark's strength s where the picture has enough tone to fit its curve: pass 1 fits columns [1, x, x^2, d] with x
 * the standardised original (mean `mu`, deviation `sdM`); pass 2 weights the mark column by the fitted slope f'(m).
 * Undefined when the fit fails or its gain is implausible (the caller then fits an offset alone).
 */
function toneCurveFit(m: Float32Array, d: Float32Array, leak: Float32Array, mask: Uint8Array | undefined, mu: number, sdM: number): number | undefined {
  const n = m.length;
  let slope: (p: number) => number = () => 1;
  for (let pass = 0; pass < 2; pass++) {
    const A = [
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ];
    const rhs = [0, 0, 0, 0];
    for (let p = 0; p < n; p++) {
      if (mask && !mask[p]) continue;
      const x = (m[p]! - mu) / sdM;
      const row = [1, x, x * x, d[p]! * slope(p)];
      const y = leak[p]!;
      for (let i = 0; i < 4; i++) {
        rhs[i]! += row[i]! * y;
        for (let j = i; j < 4; j++) A[i]![j]! += row[i]! * row[j]!;
      }
    }
    for (let i = 0; i < 4; i++) for (let j = 0; j < i; j++) A[i]![j] = A[j]![i]!;
    const sol = solveLinear(A, rhs);
    if (!sol) return undefined;
    const [, b1, b2, c] = sol as [number, number, number, number];
    // f(m) = b0 + b1 x + b2 x^2, so f'(m) = (b1 + 2 b2 x) / sdM: the leak's gain at each pixel.
    const gain = b1 / sdM;
    if (!(gain > 0.3 && gain < 3)) return undefined;
    if (pass === 1) return c;
    slope = (p) => {
      const x = (m[p]! - mu) / sdM;
      return Math.max(0.2, (b1 + 2 * b2 * x) / sdM);
    };
    if (b2 === 0) return c / gain;
  }
  return undefined;
}

/** The v1 name of fitSlot (no mask). */
export function fitSegment(m: Float32Array, d: Float32Array, leak: Float32Array): number | undefined {
  return fitSlot(m, d, leak);
}
