// The forensic bench's detection of a leak: detectLeak in-process (the code `wmark detect` runs, minus the process
// start), with the decoded frames kept for the true payload's rank among all 65,536 and the per-segment readings.
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Sidecar } from '../src/core/forensic/detect-inputs.js';
import { type PackedCodebook, packedBit } from '../src/core/forensic/keyed-bits.js';
import { meanSd, type SegmentReading, scoreBook, scorePayloads } from '../src/core/forensic/score.js';
import type { ForensicLayout } from '../src/core/forensic/title-layout.js';
import type { Engine } from '../src/engine/engine.js';
import { type DetectResult, detectLeak } from '../src/engine/forensic/detect.js';
import type { VideoRecord } from '../src/engine/state/state-store.js';

export interface LeakOutcome {
  name: string;
  file: string;
  bytes: number;
  /** Payloads that made this copy (empty for unmarked copies and other titles). */
  truth: number[];
  found: boolean;
  accused: number[];
  collusion: boolean;
  best: number | null;
  bestZ: number;
  gap: number;
  /** z and rank (among all 65,536) of each true payload. */
  trueZ: number[];
  trueRank: number[];
  /** Per true payload: readings whose sign disagrees with its codeword, and the mean of reading x codeword bit (1 = the full mark). */
  bitErrors: number[];
  softMean: number[];
  segmentsRead: number;
  alignment: { offsetSeconds: number; score: number };
  geometry: { x0: number; y0: number; w: number; h: number };
  leakSeconds: number;
  detectS: number;
  stages: Record<string, number>;
  verdict: 'correct' | 'wrong' | 'missed' | 'clean' | 'FALSE ACCUSATION';
  /** The bench's own scoring of the same readings agrees with detectLeak's. */
  consistent: boolean;
  readings: SegmentReading[];
  raw?: DetectResult;
}

export interface Ctx {
  engine: Engine;
  video: VideoRecord;
  sidecar: Sidecar;
  codes: PackedCodebook;
  layout: ForensicLayout;
  segments: number;
}

const allScores = (readings: SegmentReading[], book: PackedCodebook) => {
  const scores = scoreBook(
    readings.map((r) => r.segment),
    readings.map((r) => r.value),
    book,
  );
  return { scores, ...meanSd(scores) };
};

/**
 * A leak's verdict against the payloads that made it (none: an unmarked copy): anyone else accused is wrong (a false
 * accusation when nobody made it), every maker accused is correct, fewer is missed.
 */
export function leakVerdict(truth: number[], accused: number[]): LeakOutcome['verdict'] {
  if (truth.length === 0) return accused.length ? 'FALSE ACCUSATION' : 'clean';
  if (accused.some((u) => !truth.includes(u))) return 'wrong';
  if (truth.length === 1 ? accused.length === 1 : accused.length === truth.length) return 'correct';
  return 'missed';
}

/** The place of payload `u`'s score among all of them (1: the highest). */
export function rankOf(scores: Float64Array, u: number): number {
  let above = 0;
  const s = scores[u]!;
  for (let v = 0; v < scores.length; v++) if (scores[v]! > s) above++;
  return above + 1;
}

/** detectLeak on `file` with its readings kept, and the bench's own scoring of them (rank, bit errors, soft mark). */
export async function detectKeepingFrames(c: Ctx, name: string, file: string, truth: number[]): Promise<LeakOutcome> {
  const stageTimes: { stage: string; t: number }[] = [];
  const t0 = performance.now();
  const r: DetectResult = await detectLeak(c.engine, { videoId: c.video.id }, file, (stage) => stageTimes.push({ stage, t: performance.now() }), {
    keepReadings: true,
  });
  const detectS = (performance.now() - t0) / 1000;
  const stages: Record<string, number> = {};
  for (const [i, s] of stageTimes.entries()) stages[s.stage] = ((stageTimes[i + 1]?.t ?? t0 + detectS * 1000) - s.t) / 1000;
  const readings = r.readings ?? [];
  const { scores, mean, sd } = allScores(readings, c.codes);
  const verdict = scorePayloads(readings, c.codes);
  const consistent =
    verdict.segmentsRead === r.segmentsRead &&
    (verdict.best?.payload ?? null) === (r.best?.payload ?? null) &&
    Math.abs((verdict.best?.z ?? 0) - (r.best?.z ?? 0)) < 1e-9 &&
    verdict.accused.join(',') === r.accused.map((a) => a.payload).join(',');

  const accused = r.accused.map((a) => a.payload);
  return {
    name,
    file,
    bytes: statSync(file).size,
    truth,
    found: r.found,
    accused,
    collusion: r.collusion.suspected,
    best: r.best?.payload ?? null,
    bestZ: r.best?.z ?? NaN,
    gap: r.best?.gap ?? NaN,
    trueZ: truth.map((u) => (scores[u]! - mean) / sd),
    trueRank: truth.map((u) => rankOf(scores, u)),
    bitErrors: truth.map((u) => readings.filter((x) => Math.sign(x.value) !== packedBit(c.codes, u, x.segment)).length),
    softMean: truth.map((u) => readings.reduce((a, x) => a + x.value * packedBit(c.codes, u, x.segment), 0) / Math.max(1, readings.length)),
    segmentsRead: r.segmentsRead,
    alignment: { offsetSeconds: r.alignment.offsetSeconds, score: r.alignment.score },
    geometry: { x0: r.geometry.x0, y0: r.geometry.y0, w: r.geometry.w, h: r.geometry.h },
    leakSeconds: r.leak.durationSeconds,
    detectS,
    stages,
    verdict: leakVerdict(truth, accused),
    consistent,
    readings,
    raw: r,
  };
}
