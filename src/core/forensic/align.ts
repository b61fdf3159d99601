// Aligns a leak to the original timeline when it may be any mix of excerpts, in any order, played at a slightly
// different speed. Output: pieces of the leak, each mapped linearly (original time = scale x leak time + offset).
//
// 1. Both timelines become 10 Hz bins of 16-cell temporal differences (robust to brightness, contrast and the leak's
//    own gain). 2. Each bin gets a 16-bit fingerprint: which cells change more than the bin's median cell. The
//    original's fingerprints go into a hash index (O(original), built once). 3. Every 8 s window of the leak looks its
//    fingerprints up (the exact hash, and its two least certain bits swapped) and votes, per candidate speed, for where
//    its centre sits in the original: O(leak x matches per lookup), never leak x original. 4. The winning vote of each
//    window is refined by correlating the real-valued features; windows that agree are merged into pieces, and the cut
//    between two pieces is placed where the leak stops resembling one and starts resembling the other. 5. Stretches
//    their piece's mapping does not explain are searched for on their own, and left unread when nothing explains them
//    (explainStretches).

export const ALIGN_RATE = 10;
/** Cells per frame signature (detect-math's SIGNATURE_CELLS; not imported: detect-math imports this module). */
const CELLS = 16;
const WINDOW_BINS = 80;
const HOP_BINS = 40;
/** Speeds searched: 0.90x .. 1.10x of the original. */
export const SCALE_MIN = 0.9;
export const SCALE_MAX = 1.1;
const SCALE_STEP = 0.01;
/** A window is trusted when its features correlate at least this well with the original under its mapping. */
const WINDOW_MIN_R = 0.4;

export interface TimePiece {
  /** Leak seconds [leakStart, leakEnd) follow original time = scale * t + offset. */
  leakStart: number;
  leakEnd: number;
  scale: number;
  offset: number;
  /** Pearson correlation of the features over the piece. */
  score: number;
}

export interface TimeMap {
  pieces: TimePiece[];
}

/** Original time of leak time t, or NaN where no piece covers it. */
export function mapTime(map: TimeMap, t: number): number {
  for (const p of map.pieces) if (t >= p.leakStart && t < p.leakEnd) return p.scale * t + p.offset;
  return NaN;
}

/** The piece covering leak time t (index), or -1. */
export function pieceAt(map: TimeMap, t: number): number {
  return map.pieces.findIndex((p) => t >= p.leakStart && t < p.leakEnd);
}

/** 10 Hz bins of per-frame signatures, then temporal differences; NaN where a bin (or its predecessor) is empty. */
export function binFeatures(times: ArrayLike<number>, sig: ArrayLike<number>, bins: number): Float64Array {
  const sum = new Float64Array(bins * CELLS);
  const count = new Float64Array(bins);
  for (let i = 0; i < times.length; i++) {
    const b = Math.floor(times[i]! * ALIGN_RATE);
    if (b < 0 || b >= bins) continue;
    count[b]!++;
    for (let c = 0; c < CELLS; c++) sum[b * CELLS + c]! += sig[i * CELLS + c]!;
  }
  const out = new Float64Array(bins * CELLS).fill(NaN);
  for (let b = 1; b < bins; b++) {
    if (!count[b] || !count[b - 1]) continue;
    for (let c = 0; c < CELLS; c++) out[b * CELLS + c] = sum[b * CELLS + c]! / count[b]! - sum[(b - 1) * CELLS + c]! / count[b - 1]!;
  }
  return out;
}

/** Fingerprint of one bin: bit c set when cell c changes more than the median cell. -1 for an empty or still bin. */
export function fingerprints(features: Float64Array): { hash: Int32Array; weak: Int32Array } {
  const bins = features.length / CELLS;
  const hash = new Int32Array(bins).fill(-1);
  const weak = new Int32Array(bins);
  const dev = new Float64Array(CELLS);
  for (let b = 0; b < bins; b++) {
    const row = features.subarray(b * CELLS, (b + 1) * CELLS);
    if (Number.isNaN(row[0]!)) continue;
    const sorted = Array.from(row).sort((x, y) => x - y);
    const med = (sorted[7]! + sorted[8]!) / 2;
    let energy = 0, h = 0;
    for (let c = 0; c < CELLS; c++) {
      dev[c] = row[c]! - med;
      energy += Math.abs(dev[c]!);
      if (dev[c]! > 0) h |= 1 << c;
    }
    // A still picture (less than ~0.02 levels of change per cell) says nothing about where it is.
    if (energy < 0.3) continue;
    let w1 = 0, w2 = 1;
    if (Math.abs(dev[w2]!) < Math.abs(dev[w1]!)) [w1, w2] = [w2, w1];
    for (let c = 2; c < CELLS; c++) {
      const a = Math.abs(dev[c]!);
      if (a < Math.abs(dev[w1]!)) [w1, w2] = [c, w1];
      else if (a < Math.abs(dev[w2]!)) w2 = c;
    }
    hash[b] = h;
    weak[b] = (1 << w1) | ((1 << w2) << 16);
  }
  return { hash, weak };
}

interface Index {
  starts: Int32Array;
  entries: Int32Array;
  maxBucket: number;
}

function buildIndex(hash: Int32Array): Index {
  const starts = new Int32Array(65537);
  for (const h of hash) if (h >= 0) starts[h + 1]!++;
  for (let i = 0; i < 65536; i++) starts[i + 1]! += starts[i]!;
  const fill = starts.slice(0, 65536);
  const entries = new Int32Array(starts[65536]!);
  hash.forEach((h, b) => {
    if (h >= 0) entries[fill[h]!++] = b;
  });
  // Very common fingerprints (a fade, a global flicker) match everywhere and vote for nothing: skip them.
  return { starts, entries, maxBucket: Math.max(40, Math.ceil((entries.length / 65536) * 30)) };
}

/** Linear interpolation of the original's features at fractional bin j (NaN outside). */
function featureAt(o: Float64Array, bins: number, j: number, c: number): number {
  if (j < 0 || j > bins - 1) return NaN;
  const j0 = Math.floor(j);
  const f = j - j0;
  const a = o[j0 * CELLS + c]!;
  if (f === 0) return a;
  const b = o[Math.min(bins - 1, j0 + 1) * CELLS + c]!;
  return a + (b - a) * f;
}

/** Pearson correlation of leak bins [i0, i1) (every step-th) with the original under t_o = s*t_l + off (bin centres). */
function mappedPearson(l: Float64Array, o: Float64Array, oBins: number, i0: number, i1: number, s: number, off: number, step = 1): { r: number; n: number } {
  let n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (let i = i0; i < i1; i += step) {
    const j = s * (i + 0.5) + off * ALIGN_RATE - 0.5;
    if (j < 0 || j > oBins - 1) continue;
    for (let c = 0; c < CELLS; c++) {
      const x = l[i * CELLS + c]!;
      if (Number.isNaN(x)) continue;
      const y = featureAt(o, oBins, j, c);
      if (Number.isNaN(y)) continue;
      n++; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
    }
  }
  if (n < CELLS * 10) return { r: 0, n };
  const den = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
  return { r: den > 0 ? (sxy - (sx * sy) / n) / den : 0, n };
}

/** Cosine similarity of leak bin i with the original under a mapping (0 when either is missing). */
function binSimilarity(l: Float64Array, o: Float64Array, oBins: number, i: number, s: number, off: number): number {
  const j = s * (i + 0.5) + off * ALIGN_RATE - 0.5;
  if (j < 0 || j > oBins - 1) return 0;
  let xx = 0, yy = 0, xy = 0;
  for (let c = 0; c < CELLS; c++) {
    const x = l[i * CELLS + c]!;
    const y = featureAt(o, oBins, j, c);
    if (Number.isNaN(x) || Number.isNaN(y)) return 0;
    xx += x * x; yy += y * y; xy += x * y;
  }
  return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
}

interface WindowFit {
  i0: number;
  i1: number;
  scale: number;
  offset: number;
  r: number;
}

function refine(l: Float64Array, o: Float64Array, oBins: number, i0: number, i1: number, s0: number, off0: number, ds: number, dOff: number, steps: number): WindowFit {
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
const UNIT_SCALE_SLACK = 0.01;

function unitScaleFit(l: Float64Array, o: Float64Array, oBins: number, i0: number, i1: number, scale: number, offset: number): WindowFit {
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

/** Per leak bin, `per` fingerprints to look up (-1: none). */
interface Probes {
  keys: Int32Array;
  per: number;
}

/**
 * The main pass's lookups: each bin's fingerprint, and it with its two least certain bits flipped when one is set and
 * the other clear. A fingerprint has 8 of its 16 bits set (cells above the median; fewer only on exact ties: 2.9 % of a
 * 2-hour generated title's bins), so flipping one bit, or two alike, names a fingerprint the index almost never holds.
 * Those lookups are not made, which halves the main pass's lookups.
 */
function windowProbes(fp: { hash: Int32Array; weak: Int32Array }): Probes {
  const keys = new Int32Array(fp.hash.length * 2).fill(-1);
  fp.hash.forEach((h, i) => {
    if (h < 0) return;
    keys[i * 2] = h;
    const w1 = fp.weak[i]! & 0xffff, w2 = fp.weak[i]! >>> 16;
    if (!(h & w1) !== !(h & w2)) keys[i * 2 + 1] = h ^ w1 ^ w2;
  });
  return { keys, per: 2 };
}

/**
 * Vote counts per (place in the original, speed): a flat table over the original's bins (plus a margin either side,
 * as a centre may land a little outside), cleared through the list of entries it touched. A Map of the same cost
 * most of alignment's time on long titles.
 */
interface Votes {
  counts: Int32Array;
  speeds: number;
  /** Entries with votes, in the order of their first vote. */
  touched: number[];
}

/** Centres land at most this far outside the original: half the longest run of bins that votes together, sped up. */
const VOTE_MARGIN = 256;

function voteTable(oBins: number, speeds: number): Votes {
  return { counts: new Int32Array((oBins + 2 * VOTE_MARGIN) * speeds), speeds, touched: [] };
}

function clearVotes(votes: Votes): void {
  for (const e of votes.touched) votes.counts[e] = 0;
  votes.touched.length = 0;
}

/**
 * Votes of leak bins [i0, i1) for where their centre ic sits in the original, per candidate speed (jc in original
 * bins, si the speed's index).
 */
function castVotes(probes: Probes, index: Index, scales: number[], i0: number, i1: number, ic: number, votes: Votes): number {
  let cast = 0;
  const places = votes.counts.length / votes.speeds;
  for (let i = i0; i < i1; i++) {
    for (let q = 0; q < probes.per; q++) {
      const probe = probes.keys[i * probes.per + q]!;
      if (probe < 0) continue;
      const from = index.starts[probe]!, to = index.starts[probe + 1]!;
      if (to - from > index.maxBucket) continue;
      for (let e = from; e < to; e++) {
        const j = index.entries[e]!;
        for (let si = 0; si < scales.length; si++) {
          // Where the centre lands in the original (in bins), if bin i matches bin j at this speed.
          const place = Math.round(j - scales[si]! * (i - ic)) + VOTE_MARGIN;
          if (place < 0 || place >= places) continue;
          const entry = place * votes.speeds + si;
          if (votes.counts[entry]!++ === 0) votes.touched.push(entry);
          cast++;
        }
      }
    }
  }
  return cast;
}

/** Vote peaks, smoothed over neighbouring offsets and speeds, strongest first: key jc * 64 + speed index. */
function votePeaks(votes: Votes): { key: number; v: number }[] {
  const scored: { key: number; v: number }[] = [];
  const { counts, speeds } = votes;
  const places = counts.length / speeds;
  for (const entry of votes.touched) {
    if (counts[entry]! < 2) continue;
    const place = Math.floor(entry / speeds), si = entry - place * speeds;
    let sum = 0;
    for (let dp = -1; dp <= 1; dp++) {
      if (place + dp < 0 || place + dp >= places) continue;
      for (let ds = -1; ds <= 1; ds++) if (si + ds >= 0 && si + ds < speeds) sum += counts[(place + dp) * speeds + si + ds]!;
    }
    scored.push({ key: (place - VOTE_MARGIN) * 64 + si, v: sum });
  }
  return scored.sort((a, b) => b.v - a.v);
}

/**
 * A piece's mapping reaches its neighbours' stretches through the cuts, so an excerpt no window voted for is read
 * under its neighbour's mapping: noise that dilutes the true viewer's score (a 6 x 40 s re-edit with two excerpts
 * missed: z 5.9 instead of 10.6). Every stretch of the leak that its mapping does not explain (8-s correlation well
 * below the piece's own, where the leak moves) is searched for on its own: all its bins vote together, on slower
 * fingerprints than the windows', the best few places are tried at every speed, and a mapping that explains part of
 * the stretch clearly better than the current one takes that part. What no search explains is left unread: a slot
 * read under a wrong mapping only adds noise. Cost: the stretches' votes (at most the leak's again) and a few hundred
 * correlations over each 40-s stretch, only where the windows left something unexplained.
 */
const LOCAL_MIN_R = 0.2;
const STRETCH_MIN_BINS = WINDOW_BINS / 2;
/** Longer stretches are searched in parts: one vote over minutes smears a speed change across offsets. */
const STRETCH_MAX_BINS = 400;
/**
 * A find must beat the current mapping over what it takes by this much correlation (and per bin by this much
 * similarity), and correlate at least this fraction of the windows' pieces' correlation.
 */
const STRETCH_GAIN_R = 0.15;
const STRETCH_GAIN_BIN = 0.1;
const STRETCH_REL_R = 0.75;
const STRETCH_CANDIDATES = 3;
const PLACE_SPREAD_BINS = 10;
const SEARCH_ROUNDS = 6;

interface Mapping {
  scale: number;
  offset: number;
  score: number;
}

interface SearchContext {
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

function clipFeatures(f: Float64Array): Float64Array {
  const sample: number[] = [];
  const step = Math.max(1, Math.floor(f.length / 20000));
  for (let k = 0; k < f.length; k += step) if (!Number.isNaN(f[k]!)) sample.push(Math.abs(f[k]!));
  sample.sort((x, y) => x - y);
  const limit = CLIP_LEVEL * (sample[sample.length >> 1] ?? 0);
  return limit > 0 ? f.map((x) => Math.max(-limit, Math.min(limit, x))) : f;
}

/**
 * The stretch search looks up changes over STRETCH_LAG bins (0.5 s) rather than one: over smooth motion the change
 * grows with the lag while the noise does not, and 8 of 16 bits survive noise far more often (synthetic: 44 % of
 * bins match their true place, 2 % at one bin).
 */
const STRETCH_LAG = 5;

function lagFeatures(f: Float64Array, lag: number): Float64Array {
  const bins = f.length / CELLS;
  const out = new Float64Array(f.length).fill(NaN);
  for (let c = 0; c < CELLS; c++) {
    let sum = 0, missing = 0;
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
    const u1 = 1 << order[7]!, u2 = 1 << order[6]!, s1 = 1 << order[8]!, s2 = 1 << order[9]!;
    keys.set([h, h ^ u1 ^ s1, h ^ u2 ^ s1, h ^ u1 ^ s2, h ^ u1 ^ s1 ^ u2 ^ s2], b * 5);
  }
  return { keys, per: 5 };
}

/** Prefix sums (from bin a0) of the Pearson terms of leak bins [a0, b0), each under the mapping that owns it. */
function ownedPrefix(c: SearchContext, maps: Mapping[], owner: Int32Array, a0 = 0, b0 = c.lBins): Float64Array[] {
  const P = Array.from({ length: 6 }, () => new Float64Array(b0 - a0 + 1));
  const [N, SX, SY, SXX, SYY, SXY] = P as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
  for (let i = 0; i < b0 - a0; i++) {
    let n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    const m = owner[a0 + i]! >= 0 ? maps[owner[a0 + i]!]! : undefined;
    const j = m ? m.scale * (a0 + i + 0.5) + m.offset * ALIGN_RATE - 0.5 : -1;
    if (m && j >= 0 && j <= c.oBins - 1) {
      for (let k = 0; k < CELLS; k++) {
        const x = c.l[(a0 + i) * CELLS + k]!;
        const y = featureAt(c.o, c.oBins, j, k);
        if (Number.isNaN(x) || Number.isNaN(y)) continue;
        n++; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
      }
    }
    N[i + 1] = N[i]! + n; SX[i + 1] = SX[i]! + sx; SY[i + 1] = SY[i]! + sy;
    SXX[i + 1] = SXX[i]! + sxx; SYY[i + 1] = SYY[i]! + syy; SXY[i + 1] = SXY[i]! + sxy;
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
function unexplainedRuns(c: SearchContext, maps: Mapping[], owner: Int32Array): [number, number][] {
  const P = ownedPrefix(c, maps, owner);
  const moving = new Int32Array(c.lBins + 1);
  for (let i = 0; i < c.lBins; i++) moving[i + 1] = moving[i]! + c.moving[i]!;
  const runs: [number, number][] = [];
  let start = -1;
  for (let i = 0; i <= c.lBins; i++) {
    let bad = false;
    if (i < c.lBins) {
      const a = Math.max(0, i - WINDOW_BINS / 2), b = Math.min(c.lBins, i + WINDOW_BINS / 2);
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
function searchStretch(c: SearchContext, maps: Mapping[], owner: Int32Array, a: number, b: number, minR: number): StretchFit | undefined {
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
  const lo = Math.max(0, a - WINDOW_BINS), hi = Math.min(c.lBins, b + WINDOW_BINS);
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
    let sum = 0, start = lo, bestSum = 0, i0 = lo, i1 = lo;
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

/**
 * Where leak bins [lo, hi) stop resembling the left story and start resembling the right one (as the cuts between
 * pieces): argmax over c of sum_{b<c} left(b) + sum_{b>=c} right(b).
 */
function bestCut(lo: number, hi: number, left: (i: number) => number, right: (i: number) => number): number {
  let best = lo, acc = 0, bestAcc = -Infinity;
  for (let i = lo; i <= hi; i++) {
    if (acc > bestAcc) {
      bestAcc = acc;
      best = i;
    }
    if (i < hi) acc += left(i) - right(i);
  }
  return best;
}

/** Two mappings tell the same story at leak time `at` (s): speeds within `scale`, original times within `seconds`. */
function sameStory(m: { scale: number; offset: number }, n: { scale: number; offset: number }, at: number, scale = 0.002, seconds = 0.1): boolean {
  return Math.abs(m.scale - n.scale) < scale && Math.abs(m.scale * at + m.offset - (n.scale * at + n.offset)) < seconds;
}

function explainStretches(c: SearchContext, pieces: TimePiece[], stats?: AlignStats): TimePiece[] {
  const maps: Mapping[] = pieces.map((p) => ({ scale: p.scale, offset: p.offset, score: p.score }));
  const owner = new Int32Array(c.lBins).fill(-1);
  for (let i = 0; i < c.lBins; i++) owner[i] = pieces.findIndex((p) => i / ALIGN_RATE >= p.leakStart && i / ALIGN_RATE < p.leakEnd);
  const sim = (m: number, i: number) => binSimilarity(c.l, c.o, c.oBins, i, maps[m]!.scale, maps[m]!.offset);
  // "Nothing" resembles a bin half as well as a mapping resembles the bins it explains.
  const floor = (m: number) => {
    let sum = 0, n = 0;
    for (let i = 0; i < c.lBins; i++) if (owner[i] === m) { sum += sim(m, i); n++; }
    return n ? 0.5 * (sum / n) : 0;
  };

  /** Moves the boundary between what owns bin `at - 1` and what owns bin `at` to where the leak changes story. */
  const recut = (at: number, reach: number) => {
    if (at <= 0 || at >= c.lBins) return;
    const L = owner[at - 1]!, R = owner[at]!;
    if (L === R) return;
    let lo = at, hi = at;
    while (lo > Math.max(0, at - reach) && owner[lo - 1] === L) lo--;
    while (hi < Math.min(c.lBins, at + reach) && owner[hi] === R) hi++;
    const none = L < 0 ? floor(R) : R < 0 ? floor(L) : 0;
    const cut = bestCut(lo, hi, (i) => (L >= 0 ? sim(L, i) : none), (i) => (R >= 0 ? sim(R, i) : none));
    for (let i = lo; i < hi; i++) owner[i] = i < cut ? L : R;
  };
  // Trying so many places and speeds finds some correlation by chance (0.41 over 34 s of a slow zoom, at a wrong
  // speed): a find must also correlate about as well as the pieces the windows found (a marked copy's true mappings
  // correlate at 0.6-0.7, such chance finds do not).
  let span = 0, weighted = 0;
  for (const p of pieces) {
    span += p.leakEnd - p.leakStart;
    weighted += p.score * (p.leakEnd - p.leakStart);
  }
  const minR = Math.max(WINDOW_MIN_R, span > 0 ? STRETCH_REL_R * (weighted / span) : 0);
  let searched = 0, explained = 0;
  const tried: [number, number][] = [];
  for (let round = 0; round < SEARCH_ROUNDS; round++) {
    let gained = false;
    for (const [r0, r1] of unexplainedRuns(c, maps, owner)) {
      const parts = Math.ceil((r1 - r0) / STRETCH_MAX_BINS);
      for (let k = 0; k < parts; k++) {
        const a = r0 + Math.round(((r1 - r0) * k) / parts), b = r0 + Math.round(((r1 - r0) * (k + 1)) / parts);
        // The same stretch searched again would find the same; what is left of one after a find is searched anew.
        if (tried.some(([x, y]) => Math.min(y, b) - Math.max(x, a) >= 0.8 * Math.max(b - a, y - x))) continue;
        tried.push([a, b]);
        searched++;
        const fit = searchStretch(c, maps, owner, a, b, minR);
        if (!fit) continue;
        maps.push({ scale: fit.scale, offset: fit.offset, score: fit.r });
        owner.fill(maps.length - 1, fit.i0, fit.i1);
        explained++;
        gained = true;
      }
    }
    if (!gained) break;
  }
  // What is still unexplained is left unread where it may be another excerpt (or other footage): at either end of the
  // leak, or between two different mappings. Between two mappings that agree give or take a second it is weak footage
  // of one excerpt, whose slots still read (the clean title of the pipeline test lost 49 of its 150 slots when such
  // stretches were dropped). The unread stretch's edges move to where the leak stops resembling its neighbours.
  for (const [a, b] of unexplainedRuns(c, maps, owner)) {
    const L = a > 0 ? owner[a - 1]! : -1, R = b < c.lBins ? owner[b]! : -1;
    if (L >= 0 && R >= 0 && sameStory(maps[L]!, maps[R]!, a / ALIGN_RATE, 0.01, 1)) continue;
    owner.fill(-1, a, b);
    recut(a, WINDOW_BINS / 2);
    recut(b, WINDOW_BINS / 2);
  }
  // A find stops where it gains too little over the mapping it replaces: between two mappings, the cut goes where the
  // leak changes story, as between the windows' pieces.
  for (let i = 1; i < c.lBins; i++) if (owner[i - 1]! >= 0 && owner[i]! >= 0 && owner[i - 1] !== owner[i]) recut(i, WINDOW_BINS);
  // Slivers shorter than a stretch the search looks at (what a find left of a wrong mapping, a splice) go to whichever
  // of their own and their neighbours' mappings explains them best, or stay unread when none does; an unread sliver
  // inside one excerpt (both sides agree) is read.
  for (let i = 0; i < c.lBins; ) {
    let j = i;
    while (j < c.lBins && owner[j] === owner[i]) j++;
    if (owner[i]! < 0 && j - i < STRETCH_MIN_BINS && i > 0 && j < c.lBins && owner[i - 1]! >= 0 && owner[j]! >= 0 && sameStory(maps[owner[i - 1]!]!, maps[owner[j]!]!, i / ALIGN_RATE)) owner.fill(owner[i - 1]!, i, j);
    else if (owner[i]! >= 0 && j - i < STRETCH_MIN_BINS) {
      let best = -1, bestSim = -Infinity;
      for (const m of new Set([owner[i]!, i > 0 ? owner[i - 1]! : -1, j < c.lBins ? owner[j]! : -1])) {
        if (m < 0) continue;
        let sum = 0;
        for (let k = i; k < j; k++) sum += sim(m, k);
        if (sum / (j - i) > bestSim) [best, bestSim] = [m, sum / (j - i)];
      }
      owner.fill(bestSim >= floor(best) ? best : -1, i, j);
    }
    i = j;
  }
  if (stats) {
    stats.stretchesSearched = searched;
    stats.stretchesFound = explained;
  }
  // Runs of one owner become pieces; neighbours that tell the same story are one.
  const out: TimePiece[] = [];
  for (let i = 0; i < c.lBins; ) {
    let j = i;
    while (j < c.lBins && owner[j] === owner[i]) j++;
    const m = owner[i]!;
    if (m >= 0) {
      const prev = out[out.length - 1];
      const start = i === 0 ? 0 : i / ALIGN_RATE;
      const end = j === c.lBins ? Math.max(j / ALIGN_RATE, pieces[pieces.length - 1]?.leakEnd ?? 0) : j / ALIGN_RATE;
      const M = maps[m]!;
      if (prev && prev.leakEnd === start && sameStory(prev, M, start)) prev.leakEnd = end;
      else out.push({ leakStart: start, leakEnd: end, scale: M.scale, offset: M.offset, score: M.score });
    }
    i = j;
  }
  return out;
}

export interface AlignInput {
  originalTimes: ArrayLike<number>;
  originalSig: ArrayLike<number>;
  leakTimes: ArrayLike<number>;
  leakSig: ArrayLike<number>;
}

export interface AlignStats {
  windows: number;
  windowsAligned: number;
  votes: number;
  /** Unexplained stretches searched on their own, and those that found a mapping (see explainStretches). */
  stretchesSearched?: number;
  stretchesFound?: number;
}

/** Finds the pieces of the original the leak is made of (see the file comment). */
export function alignPieces(input: AlignInput, stats?: AlignStats): TimeMap {
  const oEnd = input.originalTimes.length ? input.originalTimes[input.originalTimes.length - 1]! : 0;
  const lEnd = input.leakTimes.length ? input.leakTimes[input.leakTimes.length - 1]! : 0;
  const oBins = Math.ceil(oEnd * ALIGN_RATE) + 1;
  const lBins = Math.ceil(lEnd * ALIGN_RATE) + 1;
  const o = binFeatures(input.originalTimes, input.originalSig, oBins);
  const l = binFeatures(input.leakTimes, input.leakSig, lBins);
  const index = buildIndex(fingerprints(o).hash);
  const lf = fingerprints(l);
  const probes = windowProbes(lf);
  const scales: number[] = [];
  for (let s = SCALE_MIN; s <= SCALE_MAX + 1e-9; s += SCALE_STEP) scales.push(Number(s.toFixed(4)));

  const fits: WindowFit[] = [];
  let votesCast = 0, windows = 0;
  const votes = voteTable(oBins, scales.length);
  const lastStart = Math.max(0, lBins - WINDOW_BINS);
  for (let i0 = 0; ; i0 = Math.min(i0 + HOP_BINS, lastStart)) {
    const i1 = Math.min(lBins, i0 + WINDOW_BINS);
    windows++;
    clearVotes(votes);
    const ic = (i0 + i1) / 2;
    votesCast += castVotes(probes, index, scales, i0, i1, ic, votes);
    const scored = votePeaks(votes);
    let best: WindowFit | undefined;
    for (const cand of scored.slice(0, 3)) {
      const jc = Math.floor(cand.key / 64), si = cand.key - jc * 64;
      const s = scales[si]!;
      // t_o = s * t_l + off at the window centre: (jc + 0.5) / R = s * (ic + 0.5) / R + off.
      const off = (jc + 0.5 - s * (ic + 0.5)) / ALIGN_RATE;
      const fit = refine(l, o, oBins, i0, i1, s, off, SCALE_STEP, 0.15, 3);
      if (!best || fit.r > best.r) best = fit;
    }
    if (best && best.r >= WINDOW_MIN_R) fits.push(refine(l, o, oBins, i0, i1, best.scale, best.offset, SCALE_STEP / 3, 0.05, 2));
    if (i0 === lastStart) break;
  }
  if (stats) {
    stats.windows = windows;
    stats.windowsAligned = fits.length;
    stats.votes = votesCast;
  }

  // Merge windows that tell the same story (same speed, same original time at the window) into pieces.
  const groups: WindowFit[][] = [];
  for (const f of fits) {
    const centre = (f.i0 + f.i1) / 2 / ALIGN_RATE;
    const g = groups.find((grp) => {
      const last = grp[grp.length - 1]!;
      return Math.abs(last.scale - f.scale) < 0.015 && Math.abs(last.scale * centre + last.offset - (f.scale * centre + f.offset)) < 0.25 && f.i0 <= last.i1 + WINDOW_BINS * 4;
    });
    if (g) g.push(f);
    else groups.push([f]);
  }
  let pieces: (TimePiece & { i0: number; i1: number; firstCentre: number; lastCentre: number })[] = [];
  for (const g of groups) {
    // One window alone (8 s) is trusted only when the leak has no more, or when it fits very well.
    if (g.length === 1 && fits.length > 1 && g[0]!.r < 0.75) continue;
    // Least squares over the windows' centres, then a fine search over the whole piece.
    let sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const f of g) {
      const x = (f.i0 + f.i1) / 2 / ALIGN_RATE;
      const y = f.scale * x + f.offset;
      sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    const n = g.length;
    const varx = sxx - (sx * sx) / n;
    const scale = n >= 3 && varx > 1 ? (sxy - (sx * sy) / n) / varx : g.reduce((a, f) => a + f.scale, 0) / n;
    const offset = (sy - scale * sx) / n;
    const i0 = Math.min(...g.map((f) => f.i0));
    const i1 = Math.max(...g.map((f) => f.i1));
    let fine = refine(l, o, oBins, i0, i1, scale, offset, 0.002, 0.06, 3);
    const unit = unitScaleFit(l, o, oBins, i0, i1, fine.scale, fine.offset);
    if (unit.r >= fine.r - UNIT_SCALE_SLACK) fine = unit;
    pieces.push({
      leakStart: i0 / ALIGN_RATE,
      leakEnd: i1 / ALIGN_RATE,
      scale: fine.scale,
      offset: fine.offset,
      score: fine.r,
      i0,
      i1,
      firstCentre: Math.min(...g.map((f) => (f.i0 + f.i1) / 2)),
      lastCentre: Math.max(...g.map((f) => (f.i0 + f.i1) / 2)),
    });
  }
  // A weak piece mostly inside a stronger one is a mis-vote of a few windows (e.g. the leak's last, partial window).
  pieces = pieces.filter((p) => p.score >= WINDOW_MIN_R);
  pieces = pieces.filter((p) => !pieces.some((q) => q !== p && q.score > p.score && Math.min(q.i1, p.i1) - Math.max(q.i0, p.i0) >= 0.5 * (p.i1 - p.i0)));
  pieces.sort((a, b) => a.firstCentre - b.firstCentre);
  // Cuts: between consecutive pieces, the bin that best separates "looks like A" from "looks like B".
  for (let p = 0; p + 1 < pieces.length; p++) {
    const A = pieces[p]!, B = pieces[p + 1]!;
    const lo = Math.floor(Math.min(A.lastCentre, B.firstCentre));
    const hi = Math.ceil(Math.max(A.lastCentre, B.firstCentre));
    let best = lo, acc = 0, bestAcc = -Infinity;
    // acc(c) = sum_{b<c} simA - sum_{b<c} simB (+ const): maximise over c.
    for (let c = lo; c <= hi; c++) {
      if (acc > bestAcc) {
        bestAcc = acc;
        best = c;
      }
      acc += binSimilarity(l, o, oBins, c, A.scale, A.offset) - binSimilarity(l, o, oBins, c, B.scale, B.offset);
    }
    A.leakEnd = best / ALIGN_RATE;
    B.leakStart = best / ALIGN_RATE;
  }
  // A contiguous leak split into several pieces by a few mis-voted windows: when one piece's mapping explains the
  // whole leak about as well as the pieces explain their parts, the whole leak is that one piece.
  if (pieces.length > 1) {
    const longest = [...pieces].sort((a, b) => b.i1 - b.i0 - (a.i1 - a.i0))[0]!;
    const whole = mappedPearson(l, o, oBins, 0, lBins, longest.scale, longest.offset);
    const span = pieces.reduce((acc, p) => acc + (p.i1 - p.i0), 0);
    const mean = pieces.reduce((acc, p) => acc + p.score * (p.i1 - p.i0), 0) / Math.max(1, span);
    if (whole.r >= 0.95 * mean) {
      const fine = refine(l, o, oBins, 0, lBins, longest.scale, longest.offset, 0.002, 0.06, 3);
      pieces = [{ ...longest, scale: fine.scale, offset: fine.offset, score: fine.r, i0: 0, i1: lBins, firstCentre: 0, lastCentre: lBins }];
    }
  }
  // A piece shorter than one window between two that agree with each other is a mis-vote inside one excerpt when
  // their mapping fits its stretch nearly as well as its own (it would otherwise cut a straight copy in three).
  for (let p = 1; p + 1 < pieces.length; ) {
    const A = pieces[p - 1]!, M = pieces[p]!, B = pieces[p + 1]!;
    const i0 = Math.round(M.leakStart * ALIGN_RATE), i1 = Math.round(M.leakEnd * ALIGN_RATE);
    if (M.leakEnd - M.leakStart < WINDOW_BINS / ALIGN_RATE && sameStory(A, B, M.leakStart)) {
      const own = mappedPearson(l, o, oBins, i0, i1, M.scale, M.offset).r;
      const theirs = mappedPearson(l, o, oBins, i0, i1, A.scale, A.offset).r;
      if (theirs >= 0.8 * own) {
        A.leakEnd = M.leakEnd;
        pieces.splice(p, 1);
        continue;
      }
    }
    p++;
  }
  // Neighbours that tell the same story (same speed, same original time at their cut) are one piece: windows that
  // voted a little apart split them, the 1x fit above brought them back together.
  for (let p = 0; p + 1 < pieces.length; ) {
    const A = pieces[p]!, B = pieces[p + 1]!;
    const cut = A.leakEnd;
    if (sameStory(A, B, cut)) {
      const la = A.leakEnd - A.leakStart, lb = B.leakEnd - B.leakStart;
      const keep = la >= lb ? A : B;
      pieces.splice(p, 2, {
        ...keep,
        leakStart: A.leakStart,
        leakEnd: B.leakEnd,
        score: (A.score * la + B.score * lb) / Math.max(1e-9, la + lb),
        i0: Math.min(A.i0, B.i0),
        i1: Math.max(A.i1, B.i1),
        firstCentre: A.firstCentre,
        lastCentre: B.lastCentre,
      });
    } else p++;
  }
  if (pieces.length) {
    pieces[0]!.leakStart = 0;
    pieces[pieces.length - 1]!.leakEnd = lBins / ALIGN_RATE + 1;
  }
  pieces = pieces.filter((p) => p.leakEnd > p.leakStart);
  const found = explainStretches({ l: clipFeatures(l), o: clipFeatures(o), oBins, lBins, moving: Int32Array.from(lf.hash, (h) => (h >= 0 ? 1 : 0)), scales, votes }, pieces, stats);
  // Keep only the part of each piece that maps inside the original.
  return {
    pieces: found.map((p) => {
      const lo = Math.max(p.leakStart, (0 - p.offset) / p.scale);
      const hi = Math.min(p.leakEnd, (oEnd + 0.5 - p.offset) / p.scale);
      return { leakStart: lo, leakEnd: hi, scale: p.scale, offset: p.offset, score: p.score };
    }).filter((p) => p.leakEnd > p.leakStart),
  };
}
