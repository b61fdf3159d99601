// Searching one stretch of the leak that its piece's mapping does not explain for a mapping of its own: its bins vote
// together on slower fingerprints, and the best places are fitted and kept over what they explain better (see
// explain-stretches.ts).
import { ALIGN_RATE, buildIndex, castVotes, clearVotes, fingerprints, type Index, type Probes, type Votes, votePeaks } from './fingerprint-votes.js';
import { SIGNATURE_CELLS } from './frame-signature.js';
import { binSimilarity, featureAt, mappedPearson, refine, SCALE_STEP, UNIT_SCALE_SLACK, unitScaleFit, WINDOW_BINS, type WindowFit } from './window-fit.js';

/** Cells per signature, as a module constant: the loops below read it per cell, and reads of an import are slower. */
const CELLS = SIGNATURE_CELLS;

/** A bin is unexplained when its 8-s neighbourhood correlates below this (or half its mapping's own) under its mapping. */
const LOCAL_MIN_R = 0.2;
/** Shorter unexplained runs are not searched: too few bins to place them. */
export const STRETCH_MIN_BINS = WINDOW_BINS / 2;
/**
 * A find must beat the current mapping over what it takes by this much correlation (and per bin by this much
 * similarity).
 */
const STRETCH_GAIN_R = 0.15;
const STRETCH_GAIN_BIN = 0.1;
const STRETCH_CANDIDATES = 3;
const PLACE_SPREAD_BINS = 10;

export interface Mapping {
  scale: number;
  offset: number;
  score: number;
}

export interface SearchContext {
  l: Float64Array;
  o: Float64Array;
  oBins: number;
  lBins: number;
  /** Which leak bins move (a fingerprint of their own). */
  moving: Int32Array;
  scales: number[];
  votes: Votes;
  /** The stretch search's own lookups, built on first use. */
  stretchIndex?: { index: Index; probes: Probes };
}

/**
 * A splice (or a scene cut) is one huge change, which alone decides a correlation over seconds: the stretch stage
 * works on features clipped at CLIP_LEVEL x their median size (about 4 sigma).
 */
const CLIP_LEVEL = 6;

export function clipFeatures(f: Float64Array): Float64Array {
  const sample: number[] = [];
  const step = Math.max(1, Math.floor(f.length / 20000));
  for (let k = 0; k < f.length; k += step) if (!Number.isNaN(f[k]!)) sample.push(Math.abs(f[k]!));
  sample.sort((x, y) => x - y);
  const limit = CLIP_LEVEL * (sample[sample.length >> 1] ?? 0);
  return limit > 0 ? f.map((x) => Math.max(-limit, Math.min(limit, x))) : f;
}

/**
 * The stretch search looks up changes over STRETCH_LAG bins (0.5 s) rather than one: over smooth motion the change
 * grows with the lag while the noise does not, and 8 of 16 bits survive noise far more often.
 */
const STRETCH_LAG = 5;

function lagFeatures(f: Float64Array, lag: number): Float64Array {
  const bins = f.length / CELLS;
  const out = new Float64Array(f.length).fill(NaN);
  for (let c = 0; c < CELLS; c++) {
    let sum = 0,
      missing = 0;
    for (let b = 0; b < bins; b++) {
      const x = f[b * CELLS + c]!;
      if (Number.isNaN(x)) missing++;
      else sum += x;
      if (b >= lag) {
        const y = f[(b - lag) * CELLS + c]!;
        if (Number.isNaN(y)) missing--;
        else sum -= y;
      }
      if (b >= lag - 1 && missing === 0) out[b * CELLS + c] = sum;
    }
  }
  return out;
}

/**
 * Exactly 8 of a fingerprint's 16 bits are set, so noise swaps a cell just above the median with one just below: the
 * lookups are the fingerprint and its swaps of the two least certain set bits with the two least certain clear ones.
 */
function swapProbes(features: Float64Array): Probes {
  const bins = features.length / CELLS;
  const { hash } = fingerprints(features);
  const keys = new Int32Array(bins * 5).fill(-1);
  const order = Array.from({ length: CELLS }, (_, c) => c);
  for (let b = 0; b < bins; b++) {
    const h = hash[b]!;
    if (h < 0) continue;
    const row = features.subarray(b * CELLS, (b + 1) * CELLS);
    order.sort((x, y) => row[x]! - row[y]!);
    // order[7], order[6]: the clear bits nearest the median; order[8], order[9]: the set ones.
    const u1 = 1 << order[7]!,
      u2 = 1 << order[6]!,
      s1 = 1 << order[8]!,
      s2 = 1 << order[9]!;
    keys.set([h, h ^ u1 ^ s1, h ^ u2 ^ s1, h ^ u1 ^ s2, h ^ u1 ^ s1 ^ u2 ^ s2], b * 5);
  }
  return { keys, per: 5 };
}

/** Prefix sums (from bin a0) of the Pearson terms of leak bins [a0, b0), each under the mapping that owns it. */
function ownedPrefix(c: SearchContext, maps: Mapping[], owner: Int32Array, a0 = 0, b0 = c.lBins): Float64Array[] {
  const P = Array.from({ length: 6 }, () => new Float64Array(b0 - a0 + 1));
  const [N, SX, SY, SXX, SYY, SXY] = P as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
  for (let i = 0; i < b0 - a0; i++) {
    let n = 0,
      sx = 0,
      sy = 0,
      sxx = 0,
      syy = 0,
      sxy = 0;
    const m = owner[a0 + i]! >= 0 ? maps[owner[a0 + i]!]! : undefined;
    const j = m ? m.scale * (a0 + i + 0.5) + m.offset * ALIGN_RATE - 0.5 : -1;
    if (m && j >= 0 && j <= c.oBins - 1) {
      for (let k = 0; k < CELLS; k++) {
        const x = c.l[(a0 + i) * CELLS + k]!;
        const y = featureAt(c.o, c.oBins, j, k);
        if (Number.isNaN(x) || Number.isNaN(y)) continue;
        n++;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
      }
    }
    N[i + 1] = N[i]! + n;
    SX[i + 1] = SX[i]! + sx;
    SY[i + 1] = SY[i]! + sy;
    SXX[i + 1] = SXX[i]! + sxx;
    SYY[i + 1] = SYY[i]! + syy;
    SXY[i + 1] = SXY[i]! + sxy;
  }
  return P;
}

function prefixPearson(P: Float64Array[], a: number, b: number): number {
  const d = P.map((p) => p[b]! - p[a]!);
  const [n, sx, sy, sxx, syy, sxy] = d as [number, number, number, number, number, number];
  if (n < CELLS * 10) return 0;
  const den = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
  return den > 0 ? (sxy - (sx * sy) / n) / den : 0;
}

/** Runs of bins (at least STRETCH_MIN_BINS long) whose 8-s neighbourhood moves but its owners' mappings do not explain. */
export function unexplainedRuns(c: SearchContext, maps: Mapping[], owner: Int32Array): [number, number][] {
  const P = ownedPrefix(c, maps, owner);
  const moving = new Int32Array(c.lBins + 1);
  for (let i = 0; i < c.lBins; i++) moving[i + 1] = moving[i]! + c.moving[i]!;
  const runs: [number, number][] = [];
  let start = -1;
  for (let i = 0; i <= c.lBins; i++) {
    let bad = false;
    if (i < c.lBins) {
      const a = Math.max(0, i - WINDOW_BINS / 2),
        b = Math.min(c.lBins, i + WINDOW_BINS / 2);
      // A still stretch says nothing against its mapping.
      if (moving[b]! - moving[a]! >= 0.5 * (b - a)) bad = owner[i]! < 0 || prefixPearson(P, a, b) < Math.max(LOCAL_MIN_R, 0.5 * maps[owner[i]!]!.score);
    }
    if (bad && start < 0) start = i;
    if (!bad && start >= 0) {
      if (i - start >= STRETCH_MIN_BINS) runs.push([start, i]);
      start = -1;
    }
  }
  return runs;
}

/** A mapping found for part of a stretch: it explains leak bins [i0, i1) better than what owned them. */
interface StretchFit extends WindowFit {
  gain: number;
}

/**
 * The stretch's own vote peaks (distinct places), each tried at every speed about its place, refined, and kept only
 * over the bins it explains better than their current mapping (a stretch may hold the end of one excerpt and the start
 * of the next): the maximum-sum run of (its similarity - the current one - STRETCH_GAIN_BIN), searched up to a
 * window beyond the stretch. Returns the candidate that gains most (correlation gain x bins) among those that reach
 * minR over what they take.
 */
export function searchStretch(c: SearchContext, maps: Mapping[], owner: Int32Array, a: number, b: number, minR: number): StretchFit | undefined {
  c.stretchIndex ??= { index: buildIndex(fingerprints(lagFeatures(c.o, STRETCH_LAG)).hash), probes: swapProbes(lagFeatures(c.l, STRETCH_LAG)) };
  const ic = (a + b) / 2;
  clearVotes(c.votes);
  castVotes(c.stretchIndex.probes, c.stretchIndex.index, c.scales, a, b, ic, c.votes);
  const places: number[] = [];
  for (const { key } of votePeaks(c.votes)) {
    const jc = Math.floor(key / 64);
    // One place, whatever speed its votes spread over: a short stretch hardly tells speeds apart.
    if (places.some((p) => Math.abs(p - jc) <= PLACE_SPREAD_BINS)) continue;
    places.push(jc);
    if (places.length === STRETCH_CANDIDATES) break;
  }
  const lo = Math.max(0, a - WINDOW_BINS),
    hi = Math.min(c.lBins, b + WINDOW_BINS);
  const current = new Float64Array(hi - lo);
  for (let i = lo; i < hi; i++) current[i - lo] = owner[i]! >= 0 ? binSimilarity(c.l, c.o, c.oBins, i, maps[owner[i]!]!.scale, maps[owner[i]!]!.offset) : 0;
  let best: StretchFit | undefined;
  for (const jc of places) {
    // Slow footage spreads a place's votes over a second or more: every other speed, within 1 s of the place, on
    // every 4th bin of a long stretch (this scan is most of the search's cost; the refinement uses every bin).
    let fit: WindowFit | undefined;
    const stride = b - a >= 2 * WINDOW_BINS ? 4 : b - a >= WINDOW_BINS ? 2 : 1;
    for (let si = 0; si < c.scales.length; si += 2) {
      const s = c.scales[si]!;
      for (let d = -PLACE_SPREAD_BINS; d <= PLACE_SPREAD_BINS; d++) {
        const off = (jc + d + 0.5 - s * (ic + 0.5)) / ALIGN_RATE;
        const { r } = mappedPearson(c.l, c.o, c.oBins, a, b, s, off, stride);
        if (!fit || r > fit.r) fit = { i0: a, i1: b, scale: s, offset: off, r };
      }
    }
    fit = refine(c.l, c.o, c.oBins, a, b, fit!.scale, fit!.offset, SCALE_STEP, 0.15, 3);
    // The run of bins this mapping explains better (Kadane's maximum-sum subarray).
    let sum = 0,
      start = lo,
      bestSum = 0,
      i0 = lo,
      i1 = lo;
    for (let i = lo; i < hi; i++) {
      if (sum <= 0) {
        sum = 0;
        start = i;
      }
      sum += binSimilarity(c.l, c.o, c.oBins, i, fit.scale, fit.offset) - current[i - lo]! - STRETCH_GAIN_BIN;
      if (sum > bestSum) [bestSum, i0, i1] = [sum, start, i + 1];
    }
    if (i1 - i0 < STRETCH_MIN_BINS) continue;
    fit = refine(c.l, c.o, c.oBins, i0, i1, fit.scale, fit.offset, SCALE_STEP / 3, 0.05, 2);
    fit = refine(c.l, c.o, c.oBins, i0, i1, fit.scale, fit.offset, 0.002, 0.06, 3);
    const unit = unitScaleFit(c.l, c.o, c.oBins, i0, i1, fit.scale, fit.offset);
    if (unit.r >= fit.r - UNIT_SCALE_SLACK) fit = unit;
    const was = prefixPearson(ownedPrefix(c, maps, owner, i0, i1), 0, i1 - i0);
    if (fit.r < Math.max(i1 - i0 >= WINDOW_BINS ? minR : 0.75, was + STRETCH_GAIN_R)) continue;
    const gain = (fit.r - was) * (i1 - i0);
    if (!best || gain > best.gain) best = { ...fit, i0, i1, gain };
  }
  return best;
}
