// Scoring a leak's soft bits against every payload, accusing viewers one at a time (peeling), and the probability
// that an accusation is false.
//
// Score of payload u: S_u = sum_j s_j c_u,j over the slots j read (s_j: soft bit, c_u,j = ±1). z_u standardises S_u
// over all 65,536 payloads. An innocent payload's codeword is independent of the leak, so t_u = S_u / ||s|| obeys
// Hoeffding's inequality whatever the readings are: P(t_u >= t) <= exp(-t^2 / 2). That gives a bound on the
// false-accusation probability that needs no model of the noise; a Gaussian tail gives the (smaller) estimate.
//
// Collusion: averaging k copies leaves each colluder 1/k of the mark. After accusing the strongest payload, its
// codeword is projected out of the readings and every payload is scored again on what is left, so the next colluder
// is not drowned by the first one's share (each stage is held to the same threshold).
import { PAYLOAD_COUNT, type PackedCodebook } from './keyed-bits.js';
import { solveLinear } from './linear-solve.js';

/** Accuse only when the best payload stands this many standard deviations above all 65,536 scores. */
export const Z_THRESHOLD = 6.5;
/** At most this many colluders are peeled off one leak. */
const MAX_ACCUSED = 4;

export interface SegmentReading {
  /** Code position (slot) read: the bit index in every payload's codeword. */
  segment: number;
  /** Soft bit: about +1 for A, -1 for B, near 0 when unreadable. */
  value: number;
  frames: number;
}

/** Every payload's score for soft values `values[i]` at bit positions `bits[i]`: one table lookup per byte of code. */
export function scoreBook(bits: ArrayLike<number>, values: ArrayLike<number>, book: PackedCodebook, payloads = PAYLOAD_COUNT): Float64Array {
  const byByte = new Map<number, Float64Array>();
  for (let i = 0; i < bits.length; i++) {
    const bit = bits[i]!;
    if (bit >= book.bits) throw new RangeError(`bit ${bit} is beyond the codebook (${book.bits} bits)`);
    const g = bit >>> 3;
    let table = byByte.get(g);
    if (!table) {
      table = new Float64Array(256);
      byByte.set(g, table);
    }
    const mask = 1 << (7 - (bit & 7));
    const v = values[i]!;
    for (let b = 0; b < 256; b++) table[b]! += b & mask ? v : -v;
  }
  const groups = [...byByte.keys()];
  const tables = groups.map((g) => byByte.get(g)!);
  const scores = new Float64Array(payloads);
  const { bytes, stride } = book;
  for (let u = 0; u < payloads; u++) {
    const row = u * stride;
    let s = 0;
    for (let k = 0; k < groups.length; k++) s += tables[k]![bytes[row + groups[k]!]!]!;
    scores[u] = s;
  }
  return scores;
}

export function meanSd(scores: Float64Array): { mean: number; sd: number } {
  let mean = 0;
  for (const s of scores) mean += s;
  mean /= scores.length;
  let variance = 0;
  for (const s of scores) variance += (s - mean) ** 2;
  return { mean, sd: Math.sqrt(variance / scores.length) || 1 };
}

/** Complementary error function (Numerical Recipes' erfcc: relative error < 1.2e-7 everywhere, so tails stay exact). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** P(Z >= z) for a standard normal Z. */
export const normalTail = (z: number): number => 0.5 * erfc(z / Math.SQRT2);

/** Chance that any of `innocents` payloads reaches t or more by chance: Hoeffding's bound (any readings) and a Gaussian estimate. */
export function falseAccusation(t: number, z: number, innocents: number): { bound: number; estimate: number } {
  return { bound: Math.min(1, innocents * Math.exp(-(t * t) / 2)), estimate: Math.min(1, innocents * normalTail(z)) };
}

interface Candidate {
  payload: number;
  z: number;
}

export interface Stage {
  payload: number;
  z: number;
  /** S_u / ||readings||: the statistic the bound is computed from. */
  t: number;
  accused: boolean;
  /** Chance that an innocent payload scores this high at this stage. */
  falseAccusationBound: number;
  falseAccusationEstimate: number;
  gap: number;
}

export interface Verdict {
  segmentsRead: number;
  /** Highest-scoring payloads of the first stage, best first. */
  candidates: Candidate[];
  best?: Candidate & { rank: 1; gap: number };
  accused: number[];
  collusion: { suspected: boolean; payloads: number[]; z: number };
  threshold: number;
  /** One entry per stage: the accused ones, then the first one that fell short (what stopped the search). */
  stages: Stage[];
  /** For the verdict as a whole: the chance that it names anyone innocent (sum over accusing stages); when nobody is accused, the chance of a first stage this strong by chance. */
  falseAccusation: { bound: number; estimate: number };
}

/**
 * The z a verdict must reach when `tests` times as many innocent scores were looked at: the smallest whose chance
 * over them all is no larger than the chance of one set of scores at `threshold` (the union bound; an innocent's z
 * is ~N(0,1)).
 */
export function raisedThreshold(threshold: number, tests: number): number {
  if (tests <= 1) return threshold;
  const target = normalTail(threshold);
  let lo = threshold,
    hi = threshold + 10;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tests * normalTail(mid) > target) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The z a pair of payloads must reach to be accused: ~2 x 10^9 pairs held to the chance of 65,536 payloads at `threshold`. */
export function pairThreshold(threshold: number, payloads: number): number {
  return raisedThreshold(threshold, (payloads - 1) / 2);
}

/** Least squares: the readings minus their projection on the accused payloads' codewords (over the bits read). */
function residual(values: Float64Array, bits: ArrayLike<number>, codes: Int8Array[]): Float64Array {
  const k = codes.length;
  const A = Array.from({ length: k }, (_, a) =>
    Array.from({ length: k }, (_, b) => {
      let s = 0;
      for (let i = 0; i < values.length; i++) s += codes[a]![i]! * codes[b]![i]!;
      return s;
    }),
  );
  const rhs = Array.from({ length: k }, (_, a) => {
    let s = 0;
    for (let i = 0; i < values.length; i++) s += codes[a]![i]! * values[i]!;
    return s;
  });
  const alpha = solveLinear(A, rhs) ?? new Array<number>(k).fill(0);
  const out = Float64Array.from(values);
  for (let a = 0; a < k; a++) for (let i = 0; i < out.length; i++) out[i]! -= alpha[a]! * codes[a]![i]!;
  void bits;
  return out;
}

/** The pair of top candidates whose averaged codewords best explain the readings (z of the pair, ~N(0,1) by chance). */
function bestPair(
  candidates: Candidate[],
  bits: ArrayLike<number>,
  values: Float64Array,
  book: PackedCodebook,
  norm: number,
): { a: number; b: number; z: number; za: number; zb: number } | undefined {
  let best: { a: number; b: number; z: number; za: number; zb: number } | undefined;
  const codes = candidates.map((c) => codeOf(book, c.payload, bits));
  for (let i = 0; i < candidates.length; i++) {
    for (let j = i + 1; j < candidates.length; j++) {
      let dot = 0,
        nn = 0;
      for (let k = 0; k < values.length; k++) {
        const p = (codes[i]![k]! + codes[j]![k]!) / 2;
        dot += values[k]! * p;
        nn += p * p;
      }
      // Under innocence dot has variance ~ ||s||^2 / 2 (p is 0 half the time): scaled to ~N(0, 1).
      const z = nn > 0 ? (dot * Math.sqrt(values.length)) / (norm * Math.sqrt(nn)) : 0;
      if (!best || z > best.z) best = { a: candidates[i]!.payload, b: candidates[j]!.payload, z, za: candidates[i]!.z, zb: candidates[j]!.z };
    }
  }
  return best;
}

function codeOf(book: PackedCodebook, payload: number, bits: ArrayLike<number>): Int8Array {
  const out = new Int8Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const bit = bits[i]!;
    out[i] = (book.bytes[payload * book.stride + (bit >>> 3)]! >>> (7 - (bit & 7))) & 1 ? 1 : -1;
  }
  return out;
}

/**
 * The verdict on a leak's readings: stage by stage, the best payload not yet accused is accused when its z reaches
 * the threshold; its codeword is then projected out and the rest scored again (see the file comment).
 */
export function scorePayloads(
  readings: SegmentReading[],
  book: PackedCodebook,
  options: { threshold?: number; maxAccused?: number; top?: number; payloads?: number; alignments?: number } = {},
): Verdict {
  // Readings taken at several candidate alignments, the best kept: every payload was scored once per alignment, so
  // the bar rises and each chance counts them all (see docs/forensic.md).
  const alignments = Math.max(1, options.alignments ?? 1);
  const threshold = raisedThreshold(options.threshold ?? Z_THRESHOLD, alignments);
  const maxAccused = options.maxAccused ?? MAX_ACCUSED;
  const top = options.top ?? 20;
  const payloads = options.payloads ?? PAYLOAD_COUNT;
  const verdict: Verdict = {
    segmentsRead: readings.length,
    candidates: [],
    accused: [],
    collusion: { suspected: false, payloads: [], z: 0 },
    threshold,
    stages: [],
    falseAccusation: { bound: 1, estimate: 1 },
  };
  if (readings.length === 0) return verdict;
  const bits = Int32Array.from(readings, (r) => r.segment);
  const values = Float64Array.from(readings, (r) => r.value);
  let current: Float64Array = values;
  const codes: Int8Array[] = [];
  for (let stage = 0; stage <= maxAccused; stage++) {
    const norm = Math.sqrt(current.reduce((a, v) => a + v * v, 0));
    if (!(norm > 1e-9)) break;
    const scores = scoreBook(bits, current, book, payloads);
    const { mean, sd } = meanSd(scores);
    let best = -1,
      second = -1;
    for (let u = 0; u < payloads; u++) {
      if (verdict.accused.includes(u)) continue;
      if (best < 0 || scores[u]! > scores[best]!) {
        second = best;
        best = u;
      } else if (second < 0 || scores[u]! > scores[second]!) second = u;
    }
    const z = (scores[best]! - mean) / sd;
    const gap = z - (second >= 0 ? (scores[second]! - mean) / sd : 0);
    const t = scores[best]! / norm;
    const fa = falseAccusation(t, z, (payloads - verdict.accused.length) * alignments);
    if (stage === 0) {
      const order = Array.from({ length: payloads }, (_, u) => u)
        .sort((a, b) => scores[b]! - scores[a]!)
        .slice(0, top);
      verdict.candidates = order.map((u) => ({ payload: u, z: (scores[u]! - mean) / sd }));
      verdict.best = { payload: best, z, rank: 1, gap };
      verdict.falseAccusation = { bound: fa.bound, estimate: fa.estimate };
    }
    const accused = z >= threshold && stage < maxAccused;
    verdict.stages.push({ payload: best, z, t, accused, falseAccusationBound: fa.bound, falseAccusationEstimate: fa.estimate, gap });
    if (!accused && stage === 0 && verdict.candidates.length > 1) {
      // Two averaged copies leave each 1/2 of the mark: on a short code neither may reach the threshold alone, while
      // the pair explains the readings well. Pairs among the top candidates, each member standing out on its own.
      // The pair is held to the same false-accusation chance as a single accusation at the threshold: there are
      // ~2 x 10^9 pairs, so it needs z ~7.9, not 6.5.
      const pair = bestPair(verdict.candidates, bits, current, book, norm);
      if (pair && pair.z >= pairThreshold(threshold, payloads) && pair.z > z + 1 && Math.min(pair.za, pair.zb) >= 4.5) {
        // Multiplicity: every pair of payloads (the search looks at a subset, so this over-counts).
        const pairs = ((payloads * (payloads - 1)) / 2) * alignments;
        const est = Math.min(1, pairs * normalTail(pair.z)),
          bound = Math.min(1, pairs * Math.exp(-(pair.z * pair.z) / 2));
        verdict.stages[0] = { payload: pair.a, z: pair.z, t, accused: true, falseAccusationBound: bound, falseAccusationEstimate: est, gap };
        verdict.stages.push({ payload: pair.b, z: pair.z, t: pair.z, accused: true, falseAccusationBound: 0, falseAccusationEstimate: 0, gap: 0 });
        verdict.accused.push(pair.a, pair.b);
        codes.push(codeOf(book, pair.a, bits), codeOf(book, pair.b, bits));
        current = residual(values, bits, codes);
        continue;
      }
    }
    if (!accused) break;
    verdict.accused.push(best);
    codes.push(codeOf(book, best, bits));
    current = residual(values, bits, codes);
  }
  const accusing = verdict.stages.filter((s) => s.accused);
  if (accusing.length) {
    verdict.falseAccusation = {
      bound: Math.min(
        1,
        accusing.reduce((a, s) => a + s.falseAccusationBound, 0),
      ),
      estimate: Math.min(
        1,
        accusing.reduce((a, s) => a + s.falseAccusationEstimate, 0),
      ),
    };
  }
  if (verdict.accused.length >= 2) {
    verdict.collusion = { suspected: true, payloads: [...verdict.accused], z: Math.min(...accusing.map((s) => s.z)) };
  }
  return verdict;
}
