// Letting the payload settle what the picture cannot: the leak's slots are read at every candidate alignment and the
// one whose readings single out a payload best is kept. At a wrong place the slots read are the wrong ones and no
// codeword matches them; at the right one the viewer's stands out.
import type { ScoredMap } from './alignment-candidates.js';
import type { LeakFrames, Sidecar } from './detect-inputs.js';
import type { Warp } from './geometry.js';
import type { PackedCodebook } from './keyed-bits.js';
import { meanSd, type SegmentReading, scoreBook, scorePayloads, type Verdict } from './score.js';
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
  // The first stage of the verdict (every payload scored once) is what tells the candidates apart; the peeling and
  // collusion stages are run on the chosen one only.
  // A leak that aligns one way only is scored once, as it always was.
  const firsts = read.length > 1 ? read.map((r) => bestPayload(r, book)) : [];
  let chosen = 0;
  firsts.forEach((b, i) => {
    if (b.z > firsts[chosen]!.z) chosen = i;
  });
  const verdict = scorePayloads(read[chosen]!, book, { alignments: read.length });
  if (!firsts.length) firsts.push({ payload: verdict.best?.payload ?? -1, z: verdict.best?.z ?? 0 });
  return {
    map: tried[chosen]!.map,
    readings: read[chosen]!,
    verdict,
    candidates: tried.map((c, i) => {
      const first = c.map.pieces[0];
      return {
        offsetSeconds: first ? first.scale * first.leakStart + first.offset : 0,
        scale: first?.scale ?? 1,
        pieces: c.map.pieces.length,
        alignmentScore: c.score,
        slotsRead: read[i]!.length,
        ...(firsts[i]!.payload >= 0 ? { payload: firsts[i]!.payload } : {}),
        z: firsts[i]!.z,
        chosen: i === chosen,
      };
    }),
  };
}

/** The best-scoring payload of a set of readings and its z over all payloads (-1 and 0 when nothing was read). */
function bestPayload(readings: SegmentReading[], book: PackedCodebook): { payload: number; z: number } {
  if (!readings.length) return { payload: -1, z: 0 };
  const scores = scoreBook(
    readings.map((r) => r.segment),
    readings.map((r) => r.value),
    book,
  );
  const { mean, sd } = meanSd(scores);
  let best = 0;
  for (let u = 1; u < scores.length; u++) if (scores[u]! > scores[best]!) best = u;
  return { payload: best, z: (scores[best]! - mean) / sd };
}
