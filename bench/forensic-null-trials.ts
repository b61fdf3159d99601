// The forensic bench's score-level null trials (F6): real readings of unmarked copies, other titles and marked leaks
// scored against the codebooks of other video ids (a leak scored against the wrong title), and pure-noise readings
// scored against this title. Scoring only: no video is decoded.
import { performance } from 'node:perf_hooks';
import type { Rng } from '../harness/rng.js';
import { type PackedCodebook, packedCodebook } from '../src/core/forensic/keyed-bits.js';
import { type SegmentReading, scorePayloads, type Verdict } from '../src/core/forensic/score.js';

/** Verdicts of one kind of null trial, tallied. */
export interface TrialStats {
  trials: number;
  accusations: number;
  maxZ: number;
  over5: number;
  collusionFlags: number;
  seconds: number;
}

export const noTrials = (): TrialStats => ({ trials: 0, accusations: 0, maxZ: -Infinity, over5: 0, collusionFlags: 0, seconds: 0 });

/** Counts one null verdict: any accusation or collusion flag is false, and the best z shows how close it came. */
export function tally(s: TrialStats, v: Verdict): void {
  s.trials++;
  if (v.accused.length) s.accusations++;
  if (v.collusion.suspected) s.collusionFlags++;
  const z = v.best?.z ?? 0;
  s.maxZ = Math.max(s.maxZ, z);
  if (z >= 5) s.over5++;
}

/** The root mean square of the unmarked copies' readings: the level the first kind of noise readings is drawn at (0.3 without any). */
export function readingRms(sets: SegmentReading[][]): number {
  const all = sets.flatMap((readings) => readings.map((r) => r.value));
  return all.length ? Math.sqrt(all.reduce((a, v) => a + v * v, 0) / all.length) : 0.3;
}

export interface ScoreTrialsInput {
  /** Readings of real copies (unmarked, other titles, marked leaks). */
  readingSets: SegmentReading[][];
  /** The unmarked copies' readings' level. */
  unmarkedRms: number;
  key: Buffer;
  seed: number;
  slots: number;
  segments: number;
  codes: PackedCodebook;
  codebooks: number;
  noise: number;
  R: Rng;
}

/** Every reading set against `codebooks` other titles' codebooks, and `noise` noise readings against this title. */
export function scoreTrials(c: ScoreTrialsInput): { codebookTrials: TrialStats; noiseTrials: TrialStats } {
  const codebookTrials = noTrials();
  const noiseTrials = noTrials();
  let t = performance.now();
  for (let i = 0; i < c.codebooks; i++) {
    const other = packedCodebook(c.key, `bench-other-title-${c.seed}-${i}`, c.slots);
    for (const readings of c.readingSets) tally(codebookTrials, scorePayloads(readings, other));
  }
  codebookTrials.seconds = (performance.now() - t) / 1000;
  t = performance.now();
  for (let i = 0; i < c.noise; i++) {
    // Alternate: noise at the unmarked copies' reading level, unit noise, and heavy-tailed (clamped) noise.
    const kind = i % 3;
    const readings: SegmentReading[] = [];
    for (let k = 0; k < c.segments; k++) {
      let v = kind === 0 ? c.unmarkedRms * c.R.gauss() : kind === 1 ? c.R.gauss() : c.R.gauss() / Math.max(0.05, Math.abs(c.R.gauss()));
      v = Math.max(-2, Math.min(2, v));
      readings.push({ segment: k, value: v, frames: 120 });
    }
    tally(noiseTrials, scorePayloads(readings, c.codes));
  }
  noiseTrials.seconds = (performance.now() - t) / 1000;
  return { codebookTrials, noiseTrials };
}
