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
//    (explain-stretches.ts).
import { candidateMaps, type Features, type ScoredMap, type Seed, windowSeeds } from './alignment-candidates.js';
import { explainStretches } from './explain-stretches.js';
import {
  ALIGN_RATE,
  binFeatures,
  buildIndex,
  castVotes,
  clearVotes,
  fingerprints,
  type Index,
  type Probes,
  votePeaks,
  voteTable,
  windowProbes,
} from './fingerprint-votes.js';
import { clipFeatures } from './stretch-search.js';
import { sameStory, type TimeMap, type TimePiece } from './time-map.js';
import {
  binSimilarity,
  lineThrough,
  mappedPearson,
  refine,
  SCALE_MAX,
  SCALE_MIN,
  SCALE_STEP,
  UNIT_SCALE_SLACK,
  unitScaleFit,
  WINDOW_BINS,
  WINDOW_MIN_R,
  type WindowFit,
} from './window-fit.js';

export { ALIGN_RATE, binFeatures, fingerprints } from './fingerprint-votes.js';
export { mapTime, type TimeMap, type TimePiece } from './time-map.js';

const HOP_BINS = 40;
/** Places each window offers as alternatives (see alignment-candidates). */
const SEEDS_PER_WINDOW = 4;

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

/** The aligned map, and the candidate maps of a leak whose content repeats (the aligned one first; see alignment-candidates). */
export interface Alignment extends TimeMap {
  candidates: ScoredMap[];
}

/** A piece while it is being built: its span in leak bins and the centres of its first and last windows. */
type Piece = TimePiece & { i0: number; i1: number; firstCentre: number; lastCentre: number };

/** Finds the pieces of the original the leak is made of (see the file comment). */
export function alignPieces(input: AlignInput, stats?: AlignStats): Alignment {
  const oEnd = input.originalTimes.length ? input.originalTimes[input.originalTimes.length - 1]! : 0;
  const lEnd = input.leakTimes.length ? input.leakTimes[input.leakTimes.length - 1]! : 0;
  const oBins = Math.ceil(oEnd * ALIGN_RATE) + 1;
  const lBins = Math.ceil(lEnd * ALIGN_RATE) + 1;
  const f: Features = { l: binFeatures(input.leakTimes, input.leakSig, lBins), o: binFeatures(input.originalTimes, input.originalSig, oBins), oBins, lBins };
  const index = buildIndex(fingerprints(f.o).hash);
  const lf = fingerprints(f.l);
  const scales: number[] = [];
  for (let s = SCALE_MIN; s <= SCALE_MAX + 1e-9; s += SCALE_STEP) scales.push(Number(s.toFixed(4)));

  const windows = fitWindows(f, windowProbes(lf), index, scales);
  if (stats) {
    stats.windows = windows.count;
    stats.windowsAligned = windows.fits.length;
    stats.votes = windows.votesCast;
  }
  const pieces = joinMisvotes(f, placeCuts(f, piecesOf(f, windows.fits)));
  if (pieces.length) {
    pieces[0]!.leakStart = 0;
    pieces[pieces.length - 1]!.leakEnd = lBins / ALIGN_RATE + 1;
  }
  const found = explainStretches(
    { l: clipFeatures(f.l), o: clipFeatures(f.o), oBins, lBins, moving: Int32Array.from(lf.hash, (h) => (h >= 0 ? 1 : 0)), scales, votes: windows.votes },
    pieces.filter((p) => p.leakEnd > p.leakStart),
    stats,
  );
  const candidates = candidateMaps(f, { pieces: found }, windows.seeds).map((c) => ({ map: insideOriginal(c.map, oEnd), score: c.score }));
  return { ...insideOriginal({ pieces: found }, oEnd), candidates: candidates.filter((c) => c.map.pieces.length) };
}

/**
 * Every 8-s window of the leak (one each HOP_BINS) votes for where it sits in the original; its best few places are
 * refined by correlating the features, and a window whose best fit is good enough is kept. The places each window
 * offers are kept too, as seeds of the alternative maps of a repeating leak.
 */
function fitWindows(f: Features, probes: Probes, index: Index, scales: number[]) {
  const { l, o, oBins, lBins } = f;
  const fits: WindowFit[] = [];
  const seeds: Seed[] = [];
  let votesCast = 0,
    count = 0;
  const votes = voteTable(oBins, scales.length);
  const lastStart = Math.max(0, lBins - WINDOW_BINS);
  for (let i0 = 0; ; i0 = Math.min(i0 + HOP_BINS, lastStart)) {
    const i1 = Math.min(lBins, i0 + WINDOW_BINS);
    count++;
    clearVotes(votes);
    const ic = (i0 + i1) / 2;
    votesCast += castVotes(probes, index, scales, i0, i1, ic, votes);
    const scored = votePeaks(votes);
    seeds.push(...windowSeeds(scored, scales, i0, i1, SEEDS_PER_WINDOW));
    let best: WindowFit | undefined;
    for (const cand of scored.slice(0, 3)) {
      const jc = Math.floor(cand.key / 64),
        si = cand.key - jc * 64;
      const s = scales[si]!;
      // t_o = s * t_l + off at the window centre: (jc + 0.5) / R = s * (ic + 0.5) / R + off.
      const off = (jc + 0.5 - s * (ic + 0.5)) / ALIGN_RATE;
      const fit = refine(l, o, oBins, i0, i1, s, off, SCALE_STEP, 0.15, 3);
      if (!best || fit.r > best.r) best = fit;
    }
    if (best && best.r >= WINDOW_MIN_R) fits.push(refine(l, o, oBins, i0, i1, best.scale, best.offset, SCALE_STEP / 3, 0.05, 2));
    if (i0 === lastStart) break;
  }
  return { fits, seeds, votes, votesCast, count };
}

/**
 * Windows that tell the same story (same speed, same original time at the window) become one piece, fitted afresh
 * over its whole span; weak pieces, and a weak piece mostly inside a stronger one, are dropped. In leak order.
 */
function piecesOf(f: Features, fits: WindowFit[]): Piece[] {
  const { l, o, oBins } = f;
  const groups: WindowFit[][] = [];
  for (const fit of fits) {
    const centre = (fit.i0 + fit.i1) / 2 / ALIGN_RATE;
    const g = groups.find((grp) => {
      const last = grp[grp.length - 1]!;
      return (
        Math.abs(last.scale - fit.scale) < 0.015 &&
        Math.abs(last.scale * centre + last.offset - (fit.scale * centre + fit.offset)) < 0.25 &&
        fit.i0 <= last.i1 + WINDOW_BINS * 4
      );
    });
    if (g) g.push(fit);
    else groups.push([fit]);
  }
  let pieces: Piece[] = [];
  for (const g of groups) {
    // One window alone (8 s) is trusted only when the leak has no more, or when it fits very well.
    if (g.length === 1 && fits.length > 1 && g[0]!.r < 0.75) continue;
    // One line through the windows' centres, then a fine search over the whole piece.
    const { scale, offset } = lineThrough(g);
    const i0 = Math.min(...g.map((w) => w.i0));
    const i1 = Math.max(...g.map((w) => w.i1));
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
      firstCentre: Math.min(...g.map((w) => (w.i0 + w.i1) / 2)),
      lastCentre: Math.max(...g.map((w) => (w.i0 + w.i1) / 2)),
    });
  }
  // A weak piece mostly inside a stronger one is a mis-vote of a few windows (e.g. the leak's last, partial window).
  pieces = pieces.filter((p) => p.score >= WINDOW_MIN_R);
  pieces = pieces.filter((p) => !pieces.some((q) => q !== p && q.score > p.score && Math.min(q.i1, p.i1) - Math.max(q.i0, p.i0) >= 0.5 * (p.i1 - p.i0)));
  return pieces.sort((a, b) => a.firstCentre - b.firstCentre);
}

/** Between consecutive pieces, the cut goes at the bin that best separates "looks like A" from "looks like B". */
function placeCuts(f: Features, pieces: Piece[]): Piece[] {
  const { l, o, oBins } = f;
  for (let p = 0; p + 1 < pieces.length; p++) {
    const A = pieces[p]!,
      B = pieces[p + 1]!;
    const lo = Math.floor(Math.min(A.lastCentre, B.firstCentre));
    const hi = Math.ceil(Math.max(A.lastCentre, B.firstCentre));
    let best = lo,
      acc = 0,
      bestAcc = -Infinity;
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
  return pieces;
}

/**
 * Pieces that a few mis-voted windows split out of one excerpt are joined again: the whole leak when one piece's
 * mapping explains it, a short piece between two neighbours that agree, and neighbours that tell the same story.
 */
function joinMisvotes(f: Features, pieces: Piece[]): Piece[] {
  return joinSameStory(absorbShortMisvotes(f, wholeLeakAsOne(f, pieces)));
}

/**
 * A contiguous leak split into several pieces by a few mis-voted windows: when one piece's mapping explains the whole
 * leak about as well as the pieces explain their parts, the whole leak is that one piece.
 */
function wholeLeakAsOne(f: Features, pieces: Piece[]): Piece[] {
  const { l, o, oBins, lBins } = f;
  if (pieces.length <= 1) return pieces;
  const longest = [...pieces].sort((a, b) => b.i1 - b.i0 - (a.i1 - a.i0))[0]!;
  const whole = mappedPearson(l, o, oBins, 0, lBins, longest.scale, longest.offset);
  const span = pieces.reduce((acc, p) => acc + (p.i1 - p.i0), 0);
  const mean = pieces.reduce((acc, p) => acc + p.score * (p.i1 - p.i0), 0) / Math.max(1, span);
  if (whole.r < 0.95 * mean) return pieces;
  const fine = refine(l, o, oBins, 0, lBins, longest.scale, longest.offset, 0.002, 0.06, 3);
  return [{ ...longest, scale: fine.scale, offset: fine.offset, score: fine.r, i0: 0, i1: lBins, firstCentre: 0, lastCentre: lBins }];
}

/**
 * A piece shorter than one window between two that agree with each other is a mis-vote inside one excerpt when their
 * mapping fits its stretch nearly as well as its own (it would otherwise cut a straight copy in three).
 */
function absorbShortMisvotes(f: Features, pieces: Piece[]): Piece[] {
  const { l, o, oBins } = f;
  for (let p = 1; p + 1 < pieces.length; ) {
    const A = pieces[p - 1]!,
      M = pieces[p]!,
      B = pieces[p + 1]!;
    const i0 = Math.round(M.leakStart * ALIGN_RATE),
      i1 = Math.round(M.leakEnd * ALIGN_RATE);
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
  return pieces;
}

/**
 * Neighbours that tell the same story (same speed, same original time at their cut) are one piece: windows that voted
 * a little apart split them, the 1x fit brought them back together.
 */
function joinSameStory(pieces: Piece[]): Piece[] {
  for (let p = 0; p + 1 < pieces.length; ) {
    const A = pieces[p]!,
      B = pieces[p + 1]!;
    if (!sameStory(A, B, A.leakEnd)) {
      p++;
      continue;
    }
    const la = A.leakEnd - A.leakStart,
      lb = B.leakEnd - B.leakStart;
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
  }
  return pieces;
}

/** The part of each piece that maps inside the original (which ends at `oEnd` seconds). */
function insideOriginal(map: TimeMap, oEnd: number): TimeMap {
  return {
    pieces: map.pieces
      .map((p) => {
        const lo = Math.max(p.leakStart, (0 - p.offset) / p.scale);
        const hi = Math.min(p.leakEnd, (oEnd + 0.5 - p.offset) / p.scale);
        return { leakStart: lo, leakEnd: hi, scale: p.scale, offset: p.offset, score: p.score };
      })
      .filter((p) => p.leakEnd > p.leakStart),
  };
}
