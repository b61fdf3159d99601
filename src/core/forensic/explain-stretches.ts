// Explaining the stretches of the leak that the windows' pieces do not: each is searched for on its own, what no
// search explains is left unread, and the cuts between mappings go where the leak changes story.
import { ALIGN_RATE } from './fingerprint-votes.js';
import { type Mapping, type SearchContext, STRETCH_MIN_BINS, searchStretch, unexplainedRuns } from './stretch-search.js';
import { sameStory, type TimePiece } from './time-map.js';
import { binSimilarity, WINDOW_BINS, WINDOW_MIN_R } from './window-fit.js';

/** Longer stretches are searched in parts: one vote over minutes smears a speed change across offsets. */
const STRETCH_MAX_BINS = 400;
/** A find must correlate at least this fraction of the windows' pieces' correlation. */
const STRETCH_REL_R = 0.75;
/** Rounds of searching: what is left of a stretch after a find is searched anew, up to this many times. */
const SEARCH_ROUNDS = 6;

/**
 * Where leak bins [lo, hi) stop resembling the left story and start resembling the right one (as the cuts between
 * pieces): argmax over c of sum_{b<c} left(b) + sum_{b>=c} right(b).
 */
function bestCut(lo: number, hi: number, left: (i: number) => number, right: (i: number) => number): number {
  let best = lo,
    acc = 0,
    bestAcc = -Infinity;
  for (let i = lo; i <= hi; i++) {
    if (acc > bestAcc) {
      bestAcc = acc;
      best = i;
    }
    if (i < hi) acc += left(i) - right(i);
  }
  return best;
}

/**
 * A piece's mapping reaches its neighbours' stretches through the cuts, so an excerpt no window voted for is read
 * under its neighbour's mapping: noise that dilutes the true viewer's score. Every stretch of the leak that its
 * mapping does not explain (8-s correlation well below the piece's own, where the leak moves) is searched for on its
 * own: all its bins vote together, on slower fingerprints than the windows', the best few places are tried at every
 * speed, and a mapping that explains part of the stretch clearly better than the current one takes that part. What no
 * search explains is left unread: a slot read under a wrong mapping only adds noise. Cost: the stretches' votes (at
 * most the leak's again) and a few hundred correlations over each 40-s stretch, only where the windows left something
 * unexplained.
 */
export function explainStretches(c: SearchContext, pieces: TimePiece[], stats?: { stretchesSearched?: number; stretchesFound?: number }): TimePiece[] {
  const owners = new Owners(c, pieces);
  const { searched, explained } = searchUnexplained(owners, findBar(pieces));
  leaveUnread(owners);
  // A find stops where it gains too little over the mapping it replaces: between two mappings, the cut goes where the
  // leak changes story, as between the windows' pieces.
  const { owner } = owners;
  for (let i = 1; i < c.lBins; i++) if (owner[i - 1]! >= 0 && owner[i]! >= 0 && owner[i - 1] !== owner[i]) owners.recut(i, WINDOW_BINS);
  settleSlivers(owners);
  if (stats) {
    stats.stretchesSearched = searched;
    stats.stretchesFound = explained;
  }
  return owners.pieces(pieces[pieces.length - 1]?.leakEnd ?? 0);
}

/** Which mapping explains each bin of the leak (-1: none, left unread), and the mappings found so far. */
class Owners {
  readonly maps: Mapping[];
  readonly owner: Int32Array;

  constructor(
    readonly c: SearchContext,
    pieces: TimePiece[],
  ) {
    this.maps = pieces.map((p) => ({ scale: p.scale, offset: p.offset, score: p.score }));
    this.owner = new Int32Array(c.lBins).fill(-1);
    for (let i = 0; i < c.lBins; i++) this.owner[i] = pieces.findIndex((p) => i / ALIGN_RATE >= p.leakStart && i / ALIGN_RATE < p.leakEnd);
  }

  /** How well mapping `m` explains leak bin `i`. */
  sim(m: number, i: number): number {
    return binSimilarity(this.c.l, this.c.o, this.c.oBins, i, this.maps[m]!.scale, this.maps[m]!.offset);
  }

  /** "Nothing" resembles a bin half as well as a mapping resembles the bins it explains. */
  floor(m: number): number {
    let sum = 0,
      n = 0;
    for (let i = 0; i < this.c.lBins; i++)
      if (this.owner[i] === m) {
        sum += this.sim(m, i);
        n++;
      }
    return n ? 0.5 * (sum / n) : 0;
  }

  /** Moves the boundary between what owns bin `at - 1` and what owns bin `at` to where the leak changes story. */
  recut(at: number, reach: number): void {
    const { owner, c } = this;
    if (at <= 0 || at >= c.lBins) return;
    const L = owner[at - 1]!,
      R = owner[at]!;
    if (L === R) return;
    let lo = at,
      hi = at;
    while (lo > Math.max(0, at - reach) && owner[lo - 1] === L) lo--;
    while (hi < Math.min(c.lBins, at + reach) && owner[hi] === R) hi++;
    const none = L < 0 ? this.floor(R) : R < 0 ? this.floor(L) : 0;
    const cut = bestCut(
      lo,
      hi,
      (i) => (L >= 0 ? this.sim(L, i) : none),
      (i) => (R >= 0 ? this.sim(R, i) : none),
    );
    for (let i = lo; i < hi; i++) owner[i] = i < cut ? L : R;
  }

  /** Runs of one owner become pieces (the last reaching at least `lastEnd`); neighbours that tell the same story are one. */
  pieces(lastEnd: number): TimePiece[] {
    const { owner, c } = this;
    const out: TimePiece[] = [];
    for (let i = 0; i < c.lBins; ) {
      let j = i;
      while (j < c.lBins && owner[j] === owner[i]) j++;
      const m = owner[i]!;
      if (m >= 0) {
        const prev = out[out.length - 1];
        const start = i === 0 ? 0 : i / ALIGN_RATE;
        const end = j === c.lBins ? Math.max(j / ALIGN_RATE, lastEnd) : j / ALIGN_RATE;
        const M = this.maps[m]!;
        if (prev && prev.leakEnd === start && sameStory(prev, M, start)) prev.leakEnd = end;
        else out.push({ leakStart: start, leakEnd: end, scale: M.scale, offset: M.offset, score: M.score });
      }
      i = j;
    }
    return out;
  }
}

/**
 * Trying so many places and speeds finds some correlation by chance (over slow footage, at a wrong speed): a find must
 * also correlate about as well as the pieces the windows found, which such chance finds do not.
 */
function findBar(pieces: TimePiece[]): number {
  let span = 0,
    weighted = 0;
  for (const p of pieces) {
    span += p.leakEnd - p.leakStart;
    weighted += p.score * (p.leakEnd - p.leakStart);
  }
  return Math.max(WINDOW_MIN_R, span > 0 ? STRETCH_REL_R * (weighted / span) : 0);
}

/**
 * Each unexplained stretch (in parts of at most STRETCH_MAX_BINS) is searched for on its own; a find owns the bins it
 * explains, and what is left of a stretch after a find is searched anew, for up to SEARCH_ROUNDS rounds.
 */
function searchUnexplained(owners: Owners, minR: number): { searched: number; explained: number } {
  const { c, maps, owner } = owners;
  let searched = 0,
    explained = 0;
  const tried: [number, number][] = [];
  for (let round = 0; round < SEARCH_ROUNDS; round++) {
    let gained = false;
    for (const [r0, r1] of unexplainedRuns(c, maps, owner)) {
      const parts = Math.ceil((r1 - r0) / STRETCH_MAX_BINS);
      for (let k = 0; k < parts; k++) {
        const a = r0 + Math.round(((r1 - r0) * k) / parts),
          b = r0 + Math.round(((r1 - r0) * (k + 1)) / parts);
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
  return { searched, explained };
}

/**
 * What is still unexplained is left unread where it may be another excerpt (or other footage): at either end of the
 * leak, or between two different mappings. Between two mappings that agree give or take a second it is weak footage of
 * one excerpt, whose slots still read. The unread stretch's edges move to where the leak stops resembling its
 * neighbours.
 */
function leaveUnread(owners: Owners): void {
  const { c, maps, owner } = owners;
  for (const [a, b] of unexplainedRuns(c, maps, owner)) {
    const L = a > 0 ? owner[a - 1]! : -1,
      R = b < c.lBins ? owner[b]! : -1;
    if (L >= 0 && R >= 0 && sameStory(maps[L]!, maps[R]!, a / ALIGN_RATE, 0.01, 1)) continue;
    owner.fill(-1, a, b);
    owners.recut(a, WINDOW_BINS / 2);
    owners.recut(b, WINDOW_BINS / 2);
  }
}

/**
 * Slivers shorter than a stretch the search looks at (what a find left of a wrong mapping, a splice) go to whichever of
 * their own and their neighbours' mappings explains them best, or stay unread when none does; an unread sliver inside
 * one excerpt (both sides agree) is read.
 */
function settleSlivers(owners: Owners): void {
  const { c, maps, owner } = owners;
  for (let i = 0; i < c.lBins; ) {
    let j = i;
    while (j < c.lBins && owner[j] === owner[i]) j++;
    if (j - i < STRETCH_MIN_BINS) {
      const before = i > 0 ? owner[i - 1]! : -1,
        after = j < c.lBins ? owner[j]! : -1;
      if (owner[i]! < 0 && before >= 0 && after >= 0 && sameStory(maps[before]!, maps[after]!, i / ALIGN_RATE)) owner.fill(before, i, j);
      else if (owner[i]! >= 0) owner.fill(bestOwner(owners, i, j, [owner[i]!, before, after]), i, j);
    }
    i = j;
  }
}

/** Of the candidate mappings, the one that explains bins [i, j) best, or -1 when even it falls below its floor. */
function bestOwner(owners: Owners, i: number, j: number, candidates: number[]): number {
  let best = -1,
    bestSim = -Infinity;
  for (const m of new Set(candidates)) {
    if (m < 0) continue;
    let sum = 0;
    for (let k = i; k < j; k++) sum += owners.sim(m, k);
    if (sum / (j - i) > bestSim) [best, bestSim] = [m, sum / (j - i)];
  }
  return bestSim >= owners.floor(best) ? best : -1;
}
