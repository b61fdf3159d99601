// The forensic-long bench's runs of `wmark detect --json` through the real CLI, one per leak: wall and CPU time, the
// process tree's peak memory, and what the CLI's JSON says of each step (decode, alignment, reading, scoring).
import path from 'node:path';
import { type Leak, type LongRun, MB, type Timed, timed } from './forensic-long-copies.js';
import { KEY } from './forensic-long-options.js';
import { waitForQuiet } from './lib/measure.js';
import { fmt } from './lib/suite.js';
import { runTreeMeasured } from './lib/tree-measure.js';

/** What one run on a leak measured. */
export interface DetectRun extends Timed {
  name: string;
  file: string;
  leakMinutes: number;
  width: number;
  height: number;
  exitCode: number;
  timings: Record<string, number>;
  alignStats?: { windows: number; windowsAligned: number; votes: number };
  pieces: { leakStart: number; leakEnd: number; scale: number; offset: number; score: number }[];
  segmentsRead: number;
  slotsTotal: number;
  accused: number[];
  trueZ: number;
  bestZ: number;
  peakTop: string;
}

/** The part of `wmark detect --json` the bench reads. */
interface DetectJson {
  leak: { durationSeconds: number };
  timings: Record<string, number>;
  alignStats?: DetectRun['alignStats'];
  pieces: DetectRun['pieces'];
  segmentsRead: number;
  slotsTotal: number;
  accused: { payload: number; z: number }[];
  best?: { payload: number; z: number };
  candidates: { payload: number; z: number }[];
}

/** One `wmark detect` of `l`, after waiting (up to --quiet-wait) for a quiet machine; RSS sampled every 100 ms. */
export async function detectRun(run: LongRun, l: Leak): Promise<DetectRun> {
  const { log, o } = run;
  if (o.quietWaitMs > 0) await waitForQuiet(0.3, o.quietWaitMs, log);
  log(`[${run.elapsed()}] wmark detect ${l.name} (${path.basename(l.file)}) ...`);
  const m = await runTreeMeasured(process.execPath, run.wmark('detect', l.file, '--key', KEY), { cwd: run.cwd, env: run.env, sampleMs: 100 });
  if (m.exitCode !== 0 && m.exitCode !== 8) throw new Error(`wmark detect exited ${m.exitCode}\n${m.stderr.slice(-3000)}`);
  const r = JSON.parse(m.stdout) as DetectJson;
  const trueZ = r.accused.find((a) => a.payload === o.payload)?.z ?? r.candidates.find((c) => c.payload === o.payload)?.z ?? NaN;
  const result: DetectRun = {
    name: l.name,
    file: l.file,
    leakMinutes: r.leak.durationSeconds / 60,
    width: l.width,
    height: l.height,
    exitCode: m.exitCode,
    ...timed(m),
    timings: r.timings,
    alignStats: r.alignStats,
    pieces: r.pieces,
    segmentsRead: r.segmentsRead,
    slotsTotal: r.slotsTotal,
    accused: r.accused.map((a) => a.payload),
    trueZ,
    bestZ: r.best?.z ?? NaN,
    peakTop: `${m.peakTreeTop.name} ${(m.peakTreeTop.rss / MB).toFixed(0)} MB`,
  };
  log(
    `  ${(m.wallMs / 1000).toFixed(1)} s wall, ${m.cpuS.toFixed(1)} s cpu, peak RSS ${(m.peakTreeRss / MB).toFixed(0)} MB tree / ${(m.peakProcessRss / MB).toFixed(0)} MB largest process; ${r.pieces.length} piece(s), ${r.segmentsRead} slots read, accused [${result.accused.join(', ')}], true z ${fmt(trueZ)}`,
  );
  return result;
}
