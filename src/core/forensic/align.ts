// Aligns a leak to the original timeline when it may be any mix of excerpts, in any order, played at a slightly
// different speed. Output: pieces of the leak, each mapped linearly (original time = scale x leak time + offset).
//
// 1. Both timelines become 10 Hz bins of 16-cell temporal differences (robust to brightness, contrast and the leak's
//    own gain). 2. Each bin gets a 16-bit fingerprint: which cells change more than the bin's median cell. The
//    original's fingerprints go into a hash index (O(original), built once). 3. Every 8 s window of the leak looks its
//    fingerprints up (the exact hash and the two least certain bits flipped) and votes, per candidate speed, for where
//    its centre sits in the original: O(leak x matches per lookup), never leak x original. 4. The winning vote of each
//    window is refined by correlating the real-valued features; windows that agree are merged into pieces, and the cut
//    between two pieces is placed where the leak stops resembling one and starts resembling the other.

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

/** Pearson correlation of leak bins [i0, i1) with the original under t_o = s*t_l + off (bin-centre seconds). */
function mappedPearson(l: Float64Array, o: Float64Array, oBins: number, i0: number, i1: number, s: number, off: number): { r: number; n: number } {
  let n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (let i = i0; i < i1; i++) {
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
  const scales: number[] = [];
  for (let s = SCALE_MIN; s <= SCALE_MAX + 1e-9; s += SCALE_STEP) scales.push(Number(s.toFixed(4)));

  const fits: WindowFit[] = [];
  let votesCast = 0, windows = 0;
  const votes = new Map<number, number>();
  const lastStart = Math.max(0, lBins - WINDOW_BINS);
  for (let i0 = 0; ; i0 = Math.min(i0 + HOP_BINS, lastStart)) {
    const i1 = Math.min(lBins, i0 + WINDOW_BINS);
    windows++;
    votes.clear();
    const ic = (i0 + i1) / 2;
    for (let i = i0; i < i1; i++) {
      const h = lf.hash[i]!;
      if (h < 0) continue;
      const w = lf.weak[i]!;
      const w1 = w & 0xffff, w2 = w >>> 16;
      for (const probe of [h, h ^ w1, h ^ w2, h ^ w1 ^ w2]) {
        const from = index.starts[probe]!, to = index.starts[probe + 1]!;
        if (to - from > index.maxBucket) continue;
        for (let e = from; e < to; e++) {
          const j = index.entries[e]!;
          for (let si = 0; si < scales.length; si++) {
            // Where the window's centre lands in the original (in bins), if bin i matches bin j at this speed.
            const jc = Math.round(j - scales[si]! * (i - ic));
            const key = jc * 64 + si;
            votes.set(key, (votes.get(key) ?? 0) + 1);
            votesCast++;
          }
        }
      }
    }
    // Peaks, smoothed over neighbouring offsets and speeds.
    const scored: { key: number; v: number }[] = [];
    for (const [key, v] of votes) {
      if (v < 2) continue;
      const jc = Math.floor(key / 64), si = key - jc * 64;
      let sum = 0;
      for (let dj = -1; dj <= 1; dj++) for (let ds = -1; ds <= 1; ds++) sum += votes.get((jc + dj) * 64 + si + ds) ?? 0;
      scored.push({ key, v: sum });
    }
    scored.sort((a, b) => b.v - a.v);
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
  const agree = (A: TimePiece, B: TimePiece, at: number) => Math.abs(A.scale - B.scale) < 0.002 && Math.abs(A.scale * at + A.offset - (B.scale * at + B.offset)) < 0.1;
  for (let p = 1; p + 1 < pieces.length; ) {
    const A = pieces[p - 1]!, M = pieces[p]!, B = pieces[p + 1]!;
    const i0 = Math.round(M.leakStart * ALIGN_RATE), i1 = Math.round(M.leakEnd * ALIGN_RATE);
    if (M.leakEnd - M.leakStart < WINDOW_BINS / ALIGN_RATE && agree(A, B, M.leakStart)) {
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
    if (agree(A, B, cut)) {
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
  // Keep only the part of each piece that maps inside the original.
  pieces = pieces.filter((p) => p.leakEnd > p.leakStart);
  return {
    pieces: pieces.map((p) => {
      const lo = Math.max(p.leakStart, (0 - p.offset) / p.scale);
      const hi = Math.min(p.leakEnd, (oEnd + 0.5 - p.offset) / p.scale);
      return { leakStart: lo, leakEnd: hi, scale: p.scale, offset: p.offset, score: p.score };
    }).filter((p) => p.leakEnd > p.leakStart),
  };
}
