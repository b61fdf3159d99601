// The forensic bench's F5: `wmark detect` on the first viewer's full copy, end to end through the CLI, and where the
// in-process detects of full-resolution leaks spend their time (decode dominates).
import type { DetectResult } from '../src/engine/forensic/detect.js';
import type { AttackOutcome } from './forensic-attack-leaks.js';
import { ATTACKS } from './forensic-attacks.js';
import { FORENSIC_KEY } from './forensic-options.js';
import type { ForensicRun, Viewer } from './forensic-setup.js';
import { fail, median, runMeasured, settle } from './lib/measure.js';
import { fmt } from './lib/suite.js';

export interface DetectTime {
  wallS: number;
  cpuS: number;
  /** Cores the rest of the machine used meanwhile. */
  otherCores: number;
  engineElapsedS: number;
  found: boolean;
  correct: boolean;
  z: number;
  bytes: number;
  seconds: number;
}

/** F5: one `wmark detect` of `viewer`'s copy, timed (NaN figures when F5 is not run). */
export async function detectTime(run: ForensicRun, viewer: Viewer): Promise<DetectTime> {
  const none = { wallS: NaN, cpuS: NaN, otherCores: NaN, engineElapsedS: NaN, found: false, correct: false, z: NaN, bytes: viewer.mp4Bytes, seconds: NaN };
  if (!run.want('f5')) return none;
  run.log(`[${run.elapsed()}] F5: wmark detect on viewer ${viewer.payload}'s full copy ...`);
  settle();
  await run.quiet();
  const m = await runMeasured(process.execPath, run.wmark('detect', viewer.mp4, '--key', FORENSIC_KEY), { env: run.env, cwd: run.cwd });
  if (m.exitCode !== 0 && m.exitCode !== 8) fail('wmark detect', m);
  const r = JSON.parse(m.stdout) as DetectResult;
  const f5 = {
    wallS: m.wallMs / 1000,
    cpuS: m.cpuS,
    otherCores: m.foreignCpuS / (m.wallMs / 1000),
    engineElapsedS: r.elapsedMs / 1000,
    found: r.found,
    correct: r.accused.length === 1 && r.accused[0]!.payload === viewer.payload,
    z: r.best?.z ?? NaN,
    bytes: viewer.mp4Bytes,
    seconds: r.leak.durationSeconds,
  };
  run.log(`  ${f5.wallS.toFixed(1)} s wall (${f5.cpuS.toFixed(1)} s cpu), correct ${f5.correct}, z ${fmt(f5.z)}`);
  return f5;
}

/** Median seconds per detect stage over the in-process detects of full-resolution attacked leaks. */
export function stageMedians(f1: AttackOutcome[]): Record<string, number> {
  const fullResDetects = f1.filter((o) => !ATTACKS.find((a) => a.id === o.attack)!.downscaled);
  const stageNames = [...new Set(fullResDetects.flatMap((o) => Object.keys(o.stages)))];
  return Object.fromEntries(stageNames.map((s) => [s, median(fullResDetects.map((o) => o.stages[s] ?? NaN))]));
}
