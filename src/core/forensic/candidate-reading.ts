// Letting the payload settle what the picture cannot: the leak's slots are read at every candidate alignment and the
// one whose readings single out a payload best is kept. At a wrong place the slots read are the wrong ones and no
// codeword matches them; at the right one the viewer's stands out.
import type { ScoredMap } from './alignment-candidates.js';
import type { LeakFrames, Sidecar } from './detect-inputs.js';
import type { Warp } from './geometry.js';
import type { PackedCodebook } from './keyed-bits.js';
import { type SegmentReading, scorePayloads, type Verdict } from './score.js';
import { readSlots } from './slot-reading.js';
import type { TimeMap } from './time-map.js';

/** What one candidate alignment gave: where it puts the leak, how well the pictures fit, and its best payload. */
export interface CandidateReading {
  /** Where the leak's first aligned second sits in the original, and the first piece's speed. */
  offsetSeconds: number;
  scale: number;
  pieces: number;
  alignmentScore: number;
  slotsRead: number;
  payload?: number;
  z: number;
  chosen: boolean;
}

export interface ChosenReading {
  map: TimeMap;
  readings: SegmentReading[];
  verdict: Verdict;
  candidates: CandidateReading[];
}

/**
 * Reads and scores every candidate (the decode of the leak and its registration are shared) and keeps the one with
 * the highest first-stage z. Each verdict is held to the bar of all the candidates read (scorePayloads' alignments).
 */
export function readCandidates(
  sidecar: Sidecar,
  leak: LeakFrames,
  candidates: ScoredMap[],
  warp: Warp,
  live: Uint8Array | undefined,
  book: PackedCodebook,
  /** Called between the reading of all candidates and their scoring (the caller times the two). */
  onRead?: () => void,
): ChosenReading {
  // A candidate that reads no slot is not a test: it is left out of the count.
  const all = candidates.map((c) => ({ c, r: readSlots(sidecar, leak, c.map, warp, undefined, undefined, live) }));
  const kept = all.filter((x, i) => x.r.length > 0 || i === 0);
  const tried = kept.map((x) => x.c);
  const read = kept.map((x) => x.r);
  onRead?.();
  const verdicts = read.map((r) => scorePayloads(r, book, { alignments: read.length }));
  let chosen = 0;
  verdicts.forEach((v, i) => {
    if ((v.best?.z ?? -Infinity) > (verdicts[chosen]!.best?.z ?? -Infinity)) chosen = i;
  });
  return {
    map: tried[chosen]!.map,
    readings: read[chosen]!,
    verdict: verdicts[chosen]!,
    candidates: tried.map((c, i) => {
      const first = c.map.pieces[0];
      return {
        offsetSeconds: first ? first.scale * first.leakStart + first.offset : 0,
        scale: first?.scale ?? 1,
        pieces: c.map.pieces.length,
        alignmentScore: c.score,
        slotsRead: read[i]!.length,
        ...(verdicts[i]!.best ? { payload: verdicts[i]!.best!.payload } : {}),
        z: verdicts[i]!.best?.z ?? 0,
        chosen: i === chosen,
      };
    }),
  };
}
