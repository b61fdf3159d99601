// Ambiguous alignments: content that repeats itself (a loop, a test card, a slideshow that comes back to its pictures)
// fits a stretch of the leak at several places in the original about equally well, and the best picture fit is not
// always the true one. Each piece keeps the distinct mappings that fit it within a margin of its own, and the maps
// they combine into are ranked, so that detection can let the payload decide between them.
import { ALIGN_RATE } from './fingerprint-votes.js';
import type { TimeMap, TimePiece } from './time-map.js';
import { lineThrough, mappedPearson, refine, UNIT_SCALE_SLACK, unitScaleFit } from './window-fit.js';

/**
 * A mapping is a candidate when its correlation over a piece is within this of the piece's own. Measured: on a test
 * pattern whose hue cycles, the true place of a 2-minute excerpt fit at 0.924 and a place 96 s away at 0.975; a
 * Ken-Burns slideshow that comes back to its pictures fit its true place at 0.969 and the repeats at 0.970 and 0.973;
 * exact loops and stills tie. On footage that does not repeat (8 leaks of a camera pan over clouds: excerpts, half
 * size at CRF 30, 1.04x and 0.96x) no other place came within 0.3 of the true one, which was always the aligned one.
 * A slideshow played at 0.96x fit best as a line 1.3 % off its speed, 0.099 above its true line: with a margin of 0.1
 * the true place was read by 0.001, so the margin leaves room up to half the gap that keeps wrong places out.
 */
export const CANDIDATE_MARGIN = 0.15;
/** Maps read at most: each costs a reading of the leak's slots, and raises the bar an accusation must clear. */
export const MAX_CANDIDATES = 6;
/** Mappings kept per piece (its own included), and pieces that get alternatives (the longest). */
const PER_PIECE = 4;
const PIECES_WITH_ALTERNATIVES = 4;
/** Two mappings are one place when they put a piece's centre this close in the original (seconds) at a like speed. */
const SAME_PLACE_SECONDS = 1;
const SAME_SPEED = 0.015;
/**
 * How far below the floor a place's first look may be and still be fitted (a window's speed is good to about 1 %).
 * Measured: a repeat of a Ken-Burns slideshow leaked at 1.04x looked 0.55 at its seed's speed and fitted 0.973 over
 * the whole piece, so a slack of 0.3 dropped a place that fitted better than the true one.
 */
const QUICK_SLACK = 0.5;

/** A place a window's votes pointed to (original time = scale x leak time + offset), and how many votes it got. */
export interface Seed {
  i0: number;
  i1: number;
  scale: number;
  offset: number;
  votes: number;
}

/** A whole map of the leak, and its correlation (the pieces' own, weighted by their length). */
export interface ScoredMap {
  map: TimeMap;
  score: number;
}

/** The leak's and the original's binned features, and their lengths in bins. */
export interface Features {
  l: Float64Array;
  o: Float64Array;
  oBins: number;
  lBins: number;
}

const placeAt = (m: { scale: number; offset: number }, t: number) => m.scale * t + m.offset;
const samePlace = (a: { scale: number; offset: number }, b: { scale: number; offset: number }, t: number) =>
  Math.abs(a.scale - b.scale) < SAME_SPEED && Math.abs(placeAt(a, t) - placeAt(b, t)) < SAME_PLACE_SECONDS;

/** A repeat draws about as many votes as the true place: peaks below this share of a window's best are chance. */
const SEED_VOTE_SHARE = 0.5;

/**
 * The distinct places a window's votes point to (strongest first, at most `count`); `peaks` are the vote peaks as keys
 * place * 64 + speed index, strongest first. A window of repeating content votes for every occurrence. They are not
 * fitted here: only the places that fit a whole piece matter, and they are fitted over it (placesFitting).
 */
export function windowSeeds(peaks: { key: number; v: number }[], scales: number[], i0: number, i1: number, count: number): Seed[] {
  const ic = (i0 + i1) / 2;
  const seeds: Seed[] = [];
  const top = peaks[0]?.v ?? 0;
  for (const peak of peaks) {
    if (seeds.length >= count || peak.v < SEED_VOTE_SHARE * top) break;
    const jc = Math.floor(peak.key / 64);
    const s = scales[peak.key - jc * 64]!;
    const seed = { i0, i1, scale: s, offset: (jc + 0.5 - s * (ic + 0.5)) / ALIGN_RATE, votes: peak.v };
    if (!seeds.some((q) => Math.abs(placeAt(q, ic / ALIGN_RATE) - placeAt(seed, ic / ALIGN_RATE)) < SAME_PLACE_SECONDS)) seeds.push(seed);
  }
  return seeds;
}

/** The piece fitted over its whole length from a seed's mapping (at exactly 1x when that explains it as well). */
function fitPiece(f: Features, piece: TimePiece, seed: { scale: number; offset: number }, floor: number): TimePiece | undefined {
  const i0 = Math.max(0, Math.floor(piece.leakStart * ALIGN_RATE));
  const i1 = Math.min(f.lBins, Math.ceil(piece.leakEnd * ALIGN_RATE));
  // A first look at every fourth bin: most places voted for are chance, and a fit over minutes costs 121 correlations.
  if (mappedPearson(f.l, f.o, f.oBins, i0, i1, seed.scale, seed.offset, 4).r < floor - QUICK_SLACK) return undefined;
  let fine = refine(f.l, f.o, f.oBins, i0, i1, seed.scale, seed.offset, 0.002, 0.06, 3);
  const unit = unitScaleFit(f.l, f.o, f.oBins, i0, i1, fine.scale, fine.offset);
  if (unit.r >= fine.r - UNIT_SCALE_SLACK) fine = unit;
  return { ...piece, scale: fine.scale, offset: fine.offset, score: fine.r };
}

/** The share of a piece's leak seconds that a mapping puts inside the original. */
function insideShare(f: Features, p: TimePiece): number {
  const end = Math.min(p.leakEnd, f.lBins / ALIGN_RATE);
  if (!(end > p.leakStart)) return 0;
  const oEnd = f.oBins / ALIGN_RATE;
  const [a, b] = [placeAt(p, p.leakStart), placeAt(p, end)].sort((x, y) => x - y) as [number, number];
  return Math.max(0, Math.min(b, oEnd) - Math.max(a, 0)) / Math.max(1e-9, b - a);
}

/**
 * The places seeds voted for over a span of the leak, other than `own`, each fitted over the whole span, that reach
 * `floor` (best first, distinct).
 */
function placesFitting(f: Features, span: TimePiece, seeds: Seed[], floor: number, own?: TimePiece): TimePiece[] {
  const centre = (span.leakStart + Math.min(span.leakEnd, f.lBins / ALIGN_RATE)) / 2;
  const isOwn = (m: { scale: number; offset: number }) => own !== undefined && samePlace(m, own, centre);
  const inside = seeds.filter((s) => {
    const c = (s.i0 + s.i1) / 2 / ALIGN_RATE;
    return c >= span.leakStart && c < span.leakEnd;
  });
  // Seeds of one place fitted as one line (as the windows of a piece are).
  const places: Seed[][] = [];
  for (const s of inside.sort((a, b) => b.votes - a.votes)) {
    if (isOwn(s)) continue;
    const same = places.find((g) => samePlace(g[0]!, s, centre));
    if (same) same.push(s);
    else places.push([s]);
  }
  const needInside = 0.8 * (own ? insideShare(f, own) : 1);
  const options = places
    .slice(0, 2 * PER_PIECE)
    .map((g) => fitPiece(f, span, lineThrough(g), floor))
    .filter((p) => p !== undefined)
    // A place that pushes most of the span off the original's ends fits its few seconds left: it reads too little.
    .filter((p) => p.score >= floor && insideShare(f, p) >= needInside && !isOwn(p));
  const distinct: TimePiece[] = [];
  for (const p of options.sort((a, b) => b.score - a.score)) if (!distinct.some((d) => samePlace(d, p, centre))) distinct.push(p);
  return distinct;
}

/** The piece's own mapping, then the other places its windows voted for that fit it within the margin. */
function pieceOptions(f: Features, piece: TimePiece, seeds: Seed[]): TimePiece[] {
  return [piece, ...placesFitting(f, piece, seeds, piece.score - CANDIDATE_MARGIN, piece).slice(0, PER_PIECE - 1)];
}

function mapScore(map: TimeMap): number {
  let sum = 0,
    span = 0;
  for (const p of map.pieces) {
    const len = Math.max(0, p.leakEnd - p.leakStart);
    sum += p.score * len;
    span += len;
  }
  return span > 0 ? sum / span : 0;
}

/**
 * The ranked candidate maps of a leak, at most MAX_CANDIDATES: the aligned map first; then, when it has several
 * pieces, single places that explain the whole leak within the margin of it (repeating content played at another
 * speed falls apart into short pieces that each fit some repeat a little better than one line fits the whole; the
 * one line is the simpler story, so it comes before the mixes); then every combination of the pieces' alternatives,
 * highest correlation first.
 */
export function candidateMaps(f: Features, map: TimeMap, seeds: Seed[]): ScoredMap[] {
  const longest = new Set(
    [...map.pieces]
      .sort((a, b) => b.leakEnd - b.leakStart - (a.leakEnd - a.leakStart))
      .slice(0, PIECES_WITH_ALTERNATIVES)
      .map((p) => map.pieces.indexOf(p)),
  );
  const options = map.pieces.map((p, k) => (longest.has(k) ? pieceOptions(f, p, seeds) : [p]));
  const combos: TimePiece[][] = [[]];
  for (const opts of options) {
    const next: TimePiece[][] = [];
    for (const c of combos) for (const p of opts) next.push([...c, p]);
    combos.splice(0, combos.length, ...next);
  }
  const [first, ...rest] = combos.map((pieces) => ({ map: { pieces }, score: mapScore({ pieces }) }));
  if (!first) return [];
  const whole: ScoredMap[] =
    map.pieces.length > 1
      ? placesFitting(f, { leakStart: 0, leakEnd: f.lBins / ALIGN_RATE, scale: 1, offset: 0, score: 0 }, seeds, first.score - CANDIDATE_MARGIN)
          .slice(0, PER_PIECE)
          .map((p) => ({ map: { pieces: [p] }, score: p.score }))
      : [];
  return [first, ...whole, ...rest.sort((a, b) => b.score - a.score)].slice(0, MAX_CANDIDATES);
}
