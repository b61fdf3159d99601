// Pure forensic detection: align a leak to the original timeline, register its geometry, read one soft A/B bit per
// segment against the sidecar, and score every 16-bit payload (accusing only on overwhelming evidence).
import { PAYLOAD_COUNT } from './keyed-bits.js';

/** Accuse only when the best payload stands this many standard deviations above all 65,536 scores. */
export const Z_THRESHOLD = 6.5;
export const SIGNATURE_CELLS = 16;
const SIGNATURE_RATE = 10;

export interface Sidecar {
  width: number;
  height: number;
  fps: number;
  /** Start (s, video timeline) and duration of each segment. */
  segmentStarts: number[];
  segmentDurations: number[];
  /** Per segment, the mean frame of (A+B)/2 and of (A-B)/2, width*height each. */
  mean: Float32Array;
  diff: Float32Array;
  /** Per original frame: time (s) and 4x4 cell means. */
  signatureTimes: Float64Array;
  signature: Float32Array;
}

export interface LeakFrames {
  width: number;
  height: number;
  times: Float64Array;
  /** width*height luma per frame, 16-bit (8-bit level x 256) as ffmpeg's gray16le gives it. */
  frames: Uint16Array;
}

/** Mean picture of the leak (8-bit levels). */
export function leakMeanImage(leak: LeakFrames): Float32Array {
  const n = leak.width * leak.height;
  const sum = new Float64Array(n);
  const count = leak.times.length;
  for (let i = 0; i < count; i++) for (let p = 0; p < n; p++) sum[p]! += leak.frames[i * n + p]!;
  return Float32Array.from(sum, (v) => v / Math.max(1, count) / 256);
}

/** 4x4 cell means of one frame (the alignment signature). */
export function frameSignature(frame: Float32Array | Uint16Array, width: number, height: number, out: Float32Array, at = 0): void {
  const sums = new Float64Array(SIGNATURE_CELLS);
  const counts = new Float64Array(SIGNATURE_CELLS);
  for (let y = 0; y < height; y++) {
    const cy = Math.min(3, Math.floor((y * 4) / height));
    for (let x = 0; x < width; x++) {
      const c = cy * 4 + Math.min(3, Math.floor((x * 4) / width));
      sums[c]! += frame[y * width + x]!;
      counts[c]!++;
    }
  }
  for (let c = 0; c < SIGNATURE_CELLS; c++) out[at + c] = sums[c]! / counts[c]!;
}

/** Averages per-frame signatures into bins of 1/SIGNATURE_RATE s; empty bins are NaN. */
function binSignature(times: Float64Array, sig: Float32Array, origin: number, bins: number): Float64Array {
  const out = new Float64Array(bins * SIGNATURE_CELLS);
  const counts = new Float64Array(bins);
  for (let i = 0; i < times.length; i++) {
    const b = Math.floor((times[i]! - origin) * SIGNATURE_RATE);
    if (b < 0 || b >= bins) continue;
    counts[b]!++;
    for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c]! += sig[i * SIGNATURE_CELLS + c]!;
  }
  for (let b = 0; b < bins; b++) for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c] = counts[b] ? out[b * SIGNATURE_CELLS + c]! / counts[b]! : NaN;
  return out;
}

/** Temporal differences of each cell: robust to brightness/contrast changes and to the leak's own gain. */
function temporalDiff(binned: Float64Array, bins: number): Float64Array {
  const out = new Float64Array(bins * SIGNATURE_CELLS).fill(NaN);
  for (let b = 1; b < bins; b++) {
    for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c] = binned[b * SIGNATURE_CELLS + c]! - binned[(b - 1) * SIGNATURE_CELLS + c]!;
  }
  return out;
}

export interface Alignment {
  /** original time = leak time + offset */
  offset: number;
  /** Pearson correlation of the signatures at that offset. */
  score: number;
  overlapSeconds: number;
}

/** Finds where the leak sits on the original timeline by correlating signature changes at every 0.1 s lag. */
export function alignLeak(sidecar: Pick<Sidecar, 'signatureTimes' | 'signature'>, leakTimes: Float64Array, leakSig: Float32Array): Alignment {
  const origEnd = sidecar.signatureTimes[sidecar.signatureTimes.length - 1] ?? 0;
  const leakEnd = leakTimes[leakTimes.length - 1] ?? 0;
  const oBins = Math.ceil(origEnd * SIGNATURE_RATE) + 1;
  const lBins = Math.ceil(leakEnd * SIGNATURE_RATE) + 1;
  const o = temporalDiff(binSignature(sidecar.signatureTimes, sidecar.signature, 0, oBins), oBins);
  const l = temporalDiff(binSignature(leakTimes, leakSig, 0, lBins), lBins);
  let best: Alignment = { offset: 0, score: -Infinity, overlapSeconds: 0 };
  const minOverlap = Math.min(lBins, 10 * SIGNATURE_RATE);
  for (let lag = -(lBins - minOverlap); lag <= oBins - minOverlap; lag++) {
    let sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, n = 0;
    const from = Math.max(0, -lag);
    const to = Math.min(lBins, oBins - lag);
    for (let b = from; b < to; b++) {
      const lb = b * SIGNATURE_CELLS;
      const ob = (b + lag) * SIGNATURE_CELLS;
      for (let c = 0; c < SIGNATURE_CELLS; c++) {
        const x = l[lb + c]!;
        const y = o[ob + c]!;
        if (Number.isNaN(x) || Number.isNaN(y)) continue;
        sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y; n++;
      }
    }
    if (n < SIGNATURE_CELLS * 20) continue;
    const cov = sxy - (sx * sy) / n;
    const den = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
    const r = den > 0 ? cov / den : 0;
    if (r > best.score) best = { offset: lag / SIGNATURE_RATE, score: r, overlapSeconds: (to - from) / SIGNATURE_RATE };
  }
  return best;
}

export interface Geometry {
  /** The leak frame shows the original's region [x0, x0+w] x [y0, y0+h] (fractions of the frame). */
  x0: number;
  y0: number;
  w: number;
  h: number;
  score: number;
}

function sampleBilinear(img: Float32Array, width: number, height: number, x: number, y: number): number {
  const cx = Math.min(Math.max(x, 0), width - 1);
  const cy = Math.min(Math.max(y, 0), height - 1);
  const x0 = Math.floor(cx), y0 = Math.floor(cy);
  const x1 = Math.min(x0 + 1, width - 1), y1 = Math.min(y0 + 1, height - 1);
  const fx = cx - x0, fy = cy - y0;
  return (img[y0 * width + x0]! * (1 - fx) + img[y0 * width + x1]! * fx) * (1 - fy) + (img[y1 * width + x0]! * (1 - fx) + img[y1 * width + x1]! * fx) * fy;
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
  let sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  const n = a.length;
  for (let i = 0; i < n; i++) {
    const x = a[i]!, y = b[i]!;
    sa += x; sb += y; saa += x * x; sbb += y * y; sab += x * y;
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
      const stepX = 1 / width, stepY = 1 / height;
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

export interface SegmentReading {
  segment: number;
  /** Soft bit: about +1 for variant A, -1 for B, near 0 when unreadable. */
  value: number;
  frames: number;
}

/** Per covered segment: fit the leak's mean frame to the sidecar mean (gain + offset), project the residual on (A-B)/2. */
export function readSegments(sidecar: Sidecar, leak: LeakFrames, alignment: Alignment, geometry: Omit<Geometry, 'score'>, marginSeconds = 0.15): SegmentReading[] {
  const { width, height } = sidecar;
  const n = width * height;
  const identity = geometry.x0 === 0 && geometry.y0 === 0 && geometry.w === 1 && geometry.h === 1;
  const readings: SegmentReading[] = [];
  const sum = new Float64Array(n);
  for (let k = 0; k < sidecar.segmentStarts.length; k++) {
    const start = sidecar.segmentStarts[k]! + marginSeconds;
    const end = sidecar.segmentStarts[k]! + sidecar.segmentDurations[k]! - marginSeconds;
    sum.fill(0);
    let count = 0;
    for (let i = 0; i < leak.times.length; i++) {
      const t = leak.times[i]! + alignment.offset;
      if (t < start || t > end) continue;
      const base = i * n;
      for (let p = 0; p < n; p++) sum[p]! += leak.frames[base + p]!;
      count++;
    }
    // A segment seen for less than a second carries too little of its mark to read reliably.
    if (count < Math.max(3, sidecar.fps * 1)) continue;
    const leakMean = Float32Array.from(sum, (v) => v / count / 256);
    const m = identity ? sidecar.mean.subarray(k * n, (k + 1) * n) : warp(sidecar.mean.subarray(k * n, (k + 1) * n), width, height, geometry);
    const d = identity ? sidecar.diff.subarray(k * n, (k + 1) * n) : warp(sidecar.diff.subarray(k * n, (k + 1) * n), width, height, geometry);
    const value = fitSegment(m, d, leakMean);
    if (value === undefined) continue;
    readings.push({ segment: k, value, frames: count });
  }
  return readings;
}

/**
 * Least squares leak = g*m + o + g*s*d, returning s (clamped to [-2, 2]). Where the original picture is nearly flat
 * the gain cannot be estimated, so it is taken as 1 and only the offset and s are fitted.
 */
export function fitSegment(m: Float32Array, d: Float32Array, leak: Float32Array): number | undefined {
  const n = m.length;
  let sm = 0, sd = 0, sl = 0, smm = 0, sdd = 0, smd = 0, sml = 0, sdl = 0;
  for (let p = 0; p < n; p++) {
    const mv = m[p]!, dv = d[p]!, lv = leak[p]!;
    sm += mv; sd += dv; sl += lv; smm += mv * mv; sdd += dv * dv; smd += mv * dv; sml += mv * lv; sdl += dv * lv;
  }
  const varM = smm / n - (sm / n) ** 2;
  const varD = sdd / n - (sd / n) ** 2;
  if (varD <= 0) return undefined;
  let g = 1;
  let gs: number;
  if (varM > 4) {
    const sol = solve3([[smm, smd, sm], [smd, sdd, sd], [sm, sd, n]], [sml, sdl, sl]);
    if (sol && sol[0]! > 0.3 && sol[0]! < 3) {
      g = sol[0]!;
      gs = sol[1]!;
      return Math.max(-2, Math.min(2, gs / g));
    }
  }
  // Flat picture (or an implausible gain): leak - m = o + s*d, fitted for o and s.
  const covRd = (sdl - smd) / n - ((sl - sm) / n) * (sd / n);
  gs = covRd / varD;
  return Math.max(-2, Math.min(2, gs / g));
}

function solve3(A: number[][], b: number[]): number[] | undefined {
  const m = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < 3; c++) {
    let pivot = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    if (Math.abs(m[pivot]![c]!) < 1e-12) return undefined;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k < 4; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return [m[0]![3]! / m[0]![0]!, m[1]![3]! / m[1]![1]!, m[2]![3]! / m[2]![2]!];
}

/** Every payload's score S_u = sum_k s_k * c_u,k, with the mean and standard deviation over all of them. */
export function payloadScores(readings: SegmentReading[], codewords: Int8Array, segments: number): { scores: Float64Array; mean: number; sd: number } {
  const scores = new Float64Array(PAYLOAD_COUNT);
  for (let u = 0; u < PAYLOAD_COUNT; u++) {
    const row = u * segments;
    let s = 0;
    for (const r of readings) s += r.value * codewords[row + r.segment]!;
    scores[u] = s;
  }
  let mean = 0;
  for (const s of scores) mean += s;
  mean /= PAYLOAD_COUNT;
  let variance = 0;
  for (const s of scores) variance += (s - mean) ** 2;
  return { scores, mean, sd: Math.sqrt(variance / PAYLOAD_COUNT) || 1 };
}

export interface Candidate {
  payload: number;
  z: number;
}

export interface Verdict {
  segmentsRead: number;
  /** Highest-scoring payloads, best first. */
  candidates: Candidate[];
  best?: Candidate & { rank: 1; gap: number };
  /** Payloads accused: one, or two when a pair of averaged copies explains the leak (collusion). */
  accused: number[];
  collusion: { suspected: boolean; payloads: number[]; z: number };
  threshold: number;
}

/**
 * Scores every payload: S_u = sum_k s_k * c_u,k, standardised over all 65,536 payloads. Also tests pairs among the
 * top candidates, because averaging two viewers' copies halves each one's score but is explained well by the pair.
 */
export function scorePayloads(readings: SegmentReading[], codewords: Int8Array, segments: number, top = 20): Verdict {
  const { scores, mean, sd } = payloadScores(readings, codewords, segments);
  const order = Array.from({ length: PAYLOAD_COUNT }, (_, u) => u).sort((a, b) => scores[b]! - scores[a]!);
  const candidates = order.slice(0, top).map((u) => ({ payload: u, z: (scores[u]! - mean) / sd }));
  const verdict: Verdict = { segmentsRead: readings.length, candidates, accused: [], collusion: { suspected: false, payloads: [], z: 0 }, threshold: Z_THRESHOLD };
  if (readings.length === 0) return verdict;
  const [first, second] = candidates as [Candidate, Candidate];
  verdict.best = { ...first, rank: 1, gap: first.z - (second?.z ?? 0) };

  // Pair test: correlate the readings with the average of two codewords; null distribution ~ N(0, 1).
  const rms = Math.sqrt(readings.reduce((a, r) => a + r.value * r.value, 0) / readings.length) || 1;
  let bestPair = { a: -1, b: -1, z: -Infinity };
  for (let i = 0; i < candidates.length; i++) {
    for (let j = i + 1; j < candidates.length; j++) {
      const ua = candidates[i]!.payload * segments;
      const ub = candidates[j]!.payload * segments;
      let dot = 0, norm = 0;
      for (const r of readings) {
        const p = (codewords[ua + r.segment]! + codewords[ub + r.segment]!) / 2;
        dot += r.value * p;
        norm += p * p;
      }
      const z = norm > 0 ? dot / (rms * Math.sqrt(norm)) : 0;
      if (z > bestPair.z) bestPair = { a: candidates[i]!.payload, b: candidates[j]!.payload, z };
    }
  }
  const singleZ = first.z;
  const zOf = (u: number) => candidates.find((c) => c.payload === u)?.z ?? 0;
  // The pair must clearly beat the single best explanation, and each member must stand out from the noise on its own.
  if (bestPair.z >= Z_THRESHOLD && bestPair.z > singleZ + 1 && Math.min(zOf(bestPair.a), zOf(bestPair.b)) >= 4.5) {
    verdict.collusion = { suspected: true, payloads: [bestPair.a, bestPair.b], z: bestPair.z };
    verdict.accused = [bestPair.a, bestPair.b];
  } else if (singleZ >= Z_THRESHOLD) {
    verdict.accused = [first.payload];
  }
  return verdict;
}
