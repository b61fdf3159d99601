// Where leak bins may sit in the original: 10 Hz features of the frame signatures, a 16-bit fingerprint per bin, a
// hash index of the original's fingerprints, and the votes a run of leak bins casts through it (see align.ts).
import { SIGNATURE_CELLS } from './frame-signature.js';

/** Cells per signature, as a module constant: the loops below read it per cell, and reads of an import are slower. */
const CELLS = SIGNATURE_CELLS;

/** Feature bins per second. */
export const ALIGN_RATE = 10;

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
    let energy = 0,
      h = 0;
    for (let c = 0; c < CELLS; c++) {
      dev[c] = row[c]! - med;
      energy += Math.abs(dev[c]!);
      if (dev[c]! > 0) h |= 1 << c;
    }
    // A still picture (less than ~0.02 levels of change per cell) says nothing about where it is.
    if (energy < 0.3) continue;
    let w1 = 0,
      w2 = 1;
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

export interface Index {
  starts: Int32Array;
  entries: Int32Array;
  maxBucket: number;
}

export function buildIndex(hash: Int32Array): Index {
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

/** Per leak bin, `per` fingerprints to look up (-1: none). */
export interface Probes {
  keys: Int32Array;
  per: number;
}

/**
 * The main pass's lookups: each bin's fingerprint, and it with its two least certain bits flipped when one is set and
 * the other clear. A fingerprint has 8 of its 16 bits set (cells above the median; fewer only on exact ties, which are
 * rare), so flipping one bit, or two alike, names a fingerprint the index almost never holds.
 * Those lookups are not made, which halves the main pass's lookups.
 */
export function windowProbes(fp: { hash: Int32Array; weak: Int32Array }): Probes {
  const keys = new Int32Array(fp.hash.length * 2).fill(-1);
  fp.hash.forEach((h, i) => {
    if (h < 0) return;
    keys[i * 2] = h;
    const w1 = fp.weak[i]! & 0xffff,
      w2 = fp.weak[i]! >>> 16;
    if (!(h & w1) !== !(h & w2)) keys[i * 2 + 1] = h ^ w1 ^ w2;
  });
  return { keys, per: 2 };
}

/**
 * Vote counts per (place in the original, speed): a flat table over the original's bins (plus a margin either side,
 * as a centre may land a little outside), cleared through the list of entries it touched. A Map of the same cost
 * most of alignment's time on long titles.
 */
export interface Votes {
  counts: Int32Array;
  speeds: number;
  /** Entries with votes, in the order of their first vote. */
  touched: number[];
}

/** Centres land at most this far outside the original: half the longest run of bins that votes together, sped up. */
const VOTE_MARGIN = 256;

export function voteTable(oBins: number, speeds: number): Votes {
  return { counts: new Int32Array((oBins + 2 * VOTE_MARGIN) * speeds), speeds, touched: [] };
}

export function clearVotes(votes: Votes): void {
  for (const e of votes.touched) votes.counts[e] = 0;
  votes.touched.length = 0;
}

/**
 * Votes of leak bins [i0, i1) for where their centre ic sits in the original, per candidate speed (jc in original
 * bins, si the speed's index).
 */
export function castVotes(probes: Probes, index: Index, scales: number[], i0: number, i1: number, ic: number, votes: Votes): number {
  let cast = 0;
  const places = votes.counts.length / votes.speeds;
  for (let i = i0; i < i1; i++) {
    for (let q = 0; q < probes.per; q++) {
      const probe = probes.keys[i * probes.per + q]!;
      if (probe < 0) continue;
      const from = index.starts[probe]!,
        to = index.starts[probe + 1]!;
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
export function votePeaks(votes: Votes): { key: number; v: number }[] {
  const scored: { key: number; v: number }[] = [];
  const { counts, speeds } = votes;
  const places = counts.length / speeds;
  for (const entry of votes.touched) {
    if (counts[entry]! < 2) continue;
    const place = Math.floor(entry / speeds),
      si = entry - place * speeds;
    let sum = 0;
    for (let dp = -1; dp <= 1; dp++) {
      if (place + dp < 0 || place + dp >= places) continue;
      for (let ds = -1; ds <= 1; ds++) if (si + ds >= 0 && si + ds < speeds) sum += counts[(place + dp) * speeds + si + ds]!;
    }
    scored.push({ key: (place - VOTE_MARGIN) * 64 + si, v: sum });
  }
  return scored.sort((a, b) => b.v - a.v);
}
