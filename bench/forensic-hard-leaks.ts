// The forensic bench's hard leaks: 2-minute leaks (F2'), camcorder copies (F9), speed changes and re-edits (F10),
// three colluders (F7'), 10,000 null trials with the reported false-accusation probability (F6'), and a long title
// (F11: generated at low resolution, ingested, watermarked and detected through the real CLI).
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Rng } from '../harness/rng.js';
import { type PackedCodebook, packedBit, packedCodebook } from '../src/core/forensic/keyed-bits.js';
import { type SegmentReading, scorePayloads, type Verdict } from '../src/core/forensic/score.js';
import type { DetectResult } from '../src/engine/forensic/detect.js';
import { type HardLeakPart, hardLeaksReport, type NamedOutcome, type NullTrials, type Outcome, type StepOutcome } from './forensic-hard-leaks-report.js';
import { CAMCORDER_CRF, camcorderFilter, camcorderSteps } from './lib/camcorder.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { even, ffmpeg, x264 } from './lib/forensic-media.js';
import { fmt } from './lib/suite.js';

export interface HardLeaksInput {
  detect: (name: string, file: string, truth: number[]) => Promise<Outcome & { raw?: DetectResult }>;
  codes: PackedCodebook;
  ff: string;
  threads: number;
  width: number;
  height: number;
  seconds: number;
  leakDir: string;
  viewers: { payload: number; mp4: string }[];
  R: Rng;
  log: (m: string) => void;
  elapsed: () => string;
  readingSets: SegmentReading[][];
  key: Buffer;
  seed: number;
  slots: number;
  nullTrials: number;
  /** Which of these parts to run ('f2b' F2', 'f9', 'f9s' (F9 step by step, only when asked), 'f10', 'f7b' F7', 'f6b' F6'); default all but f9s. */
  want?: (part: HardLeakPart) => boolean;
  /** Keep the camcorder leaks (they are deleted after detection otherwise); reuse ones already made. */
  keep?: boolean;
  reuse?: boolean;
}

/** ffmpeg, quietly (the wall time is not needed). */
const encode = (bin: string, args: string[]) => ffmpeg(bin, [...FFMPEG_QUIET, ...args]);

const NO_NULL_TRIALS: NullTrials = { trials: 0, accusations: 0, maxZ: -Infinity, minEstimate: 1, bookTrials: 0, books: 0, setCount: 0, seconds: 0 };

/** What every part shares: the input, its folder of leaks, the half-size scale of the smaller leaks. */
interface PartContext extends HardLeaksInput {
  dir: string;
  half: string;
}

/** F2': three 2-minute excerpts, CRF 30 + 0.5x. */
async function excerptLeaks(c: PartContext): Promise<NamedOutcome[]> {
  const f2: NamedOutcome[] = [];
  const v0 = c.viewers[0]!;
  c.log(`[${c.elapsed()}] F2': 2-minute excerpts ...`);
  for (let i = 0; i < 3; i++) {
    const start = Number((c.R.next() * (c.seconds - 121)).toFixed(2));
    const out = path.join(c.dir, `f2b-${i}.mp4`);
    await encode(c.ff, ['-threads', String(c.threads), '-ss', String(start), '-t', '120', '-i', v0.mp4, '-vf', c.half, ...x264(30, c.threads), out]);
    const x = await c.detect(`f2'-${start}`, out, [v0.payload]);
    f2.push({ name: `2 min from ${start.toFixed(1)} s`, o: x });
    c.log(`  ${start.toFixed(1)} s: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
  }
  return f2;
}

/** F9: camcorder copies of every viewer. */
async function camcorderLeaks(c: PartContext): Promise<NamedOutcome[]> {
  const f9: NamedOutcome[] = [];
  c.log(`[${c.elapsed()}] F9: camcorder copies ...`);
  for (const v of c.viewers) {
    const out = path.join(c.dir, `f9-${v.payload}.mp4`);
    if (!(c.reuse && existsSync(out)))
      await encode(c.ff, ['-threads', String(c.threads), '-i', v.mp4, '-vf', camcorderFilter(c.width, c.height), ...x264(CAMCORDER_CRF, c.threads), out]);
    const x = await c.detect(`f9-${v.payload}`, out, [v.payload]);
    f9.push({ name: `camcorder, viewer ${v.payload}`, o: x });
    c.log(`  ${v.payload}: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
    if (!c.keep) await rm(out, { force: true });
  }
  return f9;
}

/**
 * The copies of F9's step-by-step table: each camcorder step alone (then CRF 23), the camcorder's CRF alone, the chain
 * cut after each step (CRF 23), and the whole chain at the camcorder's CRF.
 */
function camcorderBranches(c: PartContext): { name: string; filter: string; crf: number; out: string }[] {
  const steps = camcorderSteps(c.width, c.height);
  return [
    { name: 'CRF 23 re-encode only', filter: 'null', crf: 23 },
    ...steps.map((s) => ({ name: `${s.label} alone`, filter: s.filter, crf: 23 })),
    { name: `CRF ${CAMCORDER_CRF} alone`, filter: 'null', crf: CAMCORDER_CRF },
    ...steps.slice(1).map((s, i) => ({
      name: `chain up to ${s.label}`,
      filter: steps
        .slice(0, i + 2)
        .map((x) => x.filter)
        .join(','),
      crf: 23,
    })),
    { name: `whole chain, CRF ${CAMCORDER_CRF} (F9)`, filter: camcorderFilter(c.width, c.height), crf: CAMCORDER_CRF },
  ].map((b, i) => ({ ...b, out: path.join(c.dir, `f9s-${i}.mp4`) }));
}

/**
 * F9, step by step: where the camcorder's mark goes. One viewer's 100-s excerpt (50 slots) through each of
 * camcorderBranches. Soft mark = mean of reading x true bit (1.0: the mark as embedded); spread = its standard
 * deviation over slots.
 */
async function camcorderBySteps(c: PartContext): Promise<StepOutcome[]> {
  const f9s: StepOutcome[] = [];
  const v = c.viewers[0]!;
  const start = 100;
  const branches = camcorderBranches(c);
  c.log(`[${c.elapsed()}] F9 by step: ${branches.length} copies of viewer ${v.payload}'s ${start}-${start + 100} s ...`);
  const todo = branches.filter((b) => !(c.reuse && existsSync(b.out)));
  // Two ffmpegs of about half the branches each (one decode per process, and the split keeps memory bounded).
  for (const group of [todo.slice(0, Math.ceil(todo.length / 2)), todo.slice(Math.ceil(todo.length / 2))].filter((g) => g.length)) {
    const graph = `[0:v]split=${group.length}${group.map((_, i) => `[s${i}]`).join('')};${group.map((b, i) => `[s${i}]${b.filter}[o${i}]`).join(';')}`;
    await encode(c.ff, [
      '-threads',
      String(c.threads),
      '-ss',
      String(start),
      '-t',
      '100',
      '-i',
      v.mp4,
      '-filter_complex',
      graph,
      ...group.flatMap((b, i) => ['-map', `[o${i}]`, ...x264(b.crf, c.threads), b.out]),
    ]);
  }
  for (const b of branches) {
    const x = await c.detect(`f9s-${b.name}`, b.out, [v.payload]);
    const marks = x.readings.map((r) => r.value * packedBit(c.codes, v.payload, r.segment));
    const soft = marks.reduce((a, m) => a + m, 0) / Math.max(1, marks.length);
    const spread = Math.sqrt(marks.reduce((a, m) => a + (m - soft) ** 2, 0) / Math.max(1, marks.length));
    f9s.push({
      name: b.name,
      o: x,
      soft,
      spread,
      errors: marks.filter((m) => m <= 0).length,
      live: x.raw?.geometry.live ?? NaN,
      fit: x.raw?.geometry.score ?? NaN,
    });
    c.log(`  ${b.name}: soft ${fmt(soft)} +- ${fmt(spread)}, ${marks.filter((m) => m <= 0).length}/${marks.length} bits wrong, z ${fmt(x.trueZ[0]!)}`);
    if (!c.keep) await rm(b.out, { force: true });
  }
  return f9s;
}

/** F10: 1.04x and 0.96x speed, and a re-edit of six 40-s excerpts in shuffled order. */
async function speedAndReedit(c: PartContext): Promise<NamedOutcome[]> {
  const f10: NamedOutcome[] = [];
  c.log(`[${c.elapsed()}] F10: speed changes and a re-edit ...`);
  const v1 = c.viewers[1 % c.viewers.length]!;
  for (const speed of [1.04, 0.96]) {
    const out = path.join(c.dir, `f10-${speed}.mp4`);
    await encode(c.ff, ['-threads', String(c.threads), '-i', v1.mp4, '-vf', `setpts=PTS/${speed},fps=30,${c.half}`, ...x264(28, c.threads), out]);
    const x = await c.detect(`f10-${speed}`, out, [v1.payload]);
    f10.push({ name: `played at ${speed}x, 0.5x, CRF 28`, o: x });
    c.log(`  ${speed}x: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
  }
  const starts = Array.from({ length: 6 }, (_, i) => i * ((c.seconds - 40) / 6) + c.R.next() * 5);
  const order = [3, 0, 5, 1, 4, 2];
  const graph =
    `[0:v]split=6${order.map((_, i) => `[s${i}]`).join('')};` +
    order.map((k, i) => `[s${i}]trim=start=${starts[k]!.toFixed(2)}:duration=40,setpts=PTS-STARTPTS[t${i}]`).join(';') +
    `;${order.map((_, i) => `[t${i}]`).join('')}concat=n=6:v=1:a=0,${c.half}[v]`;
  const out = path.join(c.dir, 'f10-reedit.mp4');
  await encode(c.ff, ['-threads', String(c.threads), '-i', v1.mp4, '-filter_complex', graph, '-map', '[v]', ...x264(28, c.threads), out]);
  const x = await c.detect('f10-reedit', out, [v1.payload]);
  f10.push({ name: `6 x 40 s shuffled (${order.map((k) => starts[k]!.toFixed(0)).join(', ')} s)`, o: x });
  c.log(`  re-edit: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
  return f10;
}

/** F7': three viewers averaged (full length, full size, CRF 23). */
async function threeColluders(c: PartContext, trio: HardLeaksInput['viewers']): Promise<Outcome & { raw?: DetectResult }> {
  c.log(`[${c.elapsed()}] F7': three viewers averaged ...`);
  const f7Out = path.join(c.dir, 'f7-three.mp4');
  await encode(c.ff, [
    '-threads',
    String(c.threads),
    '-i',
    trio[0]!.mp4,
    '-i',
    trio[1]!.mp4,
    '-i',
    trio[2]!.mp4,
    '-filter_complex',
    `[0:v][1:v]blend=all_mode=average[ab];[ab][2:v]blend=all_expr='(A*2+B)/3'[v]`,
    '-map',
    '[v]',
    ...x264(23, c.threads),
    f7Out,
  ]);
  const f7 = await c.detect(
    'f7-three',
    f7Out,
    trio.map((v) => v.payload),
  );
  c.log(`  accused ${f7.accused.join(', ') || 'nobody'}; z ${f7.trueZ.map((z) => fmt(z)).join(' / ')}`);
  return f7;
}

/**
 * F6': null trials. Real readings (unmarked copies, other titles, marked leaks) against other titles' and other keys'
 * codebooks, plus noise readings against this title: 10,000 verdicts, each with its reported false-accusation figure.
 */
function nullTrials(c: HardLeaksInput, leakReadings: SegmentReading[][]): NullTrials {
  const t6 = performance.now();
  const n = { ...NO_NULL_TRIALS };
  c.log(`[${c.elapsed()}] F6': ${c.nullTrials} null trials ...`);
  const record = (v: Verdict) => {
    n.trials++;
    if (v.accused.length) n.accusations++;
    n.maxZ = Math.max(n.maxZ, v.best?.z ?? 0);
    // The most suspicious null: the smallest chance it reports that an innocent payload scores as high as its best.
    n.minEstimate = Math.min(n.minEstimate, v.falseAccusation.estimate);
  };
  const sets = [...c.readingSets, ...leakReadings].filter((r) => r.length);
  n.setCount = sets.length;
  n.books = Math.min(40, Math.ceil(c.nullTrials / 4 / Math.max(1, sets.length)));
  for (let b = 0; b < n.books; b++) {
    const other =
      b % 2
        ? packedCodebook(c.key, `bench-other-title-${c.seed}-${b}`, c.slots)
        : packedCodebook(Buffer.from(`another key ${c.seed} ${b}`), `title-${b}`, c.slots);
    for (const r of sets) record(scorePayloads(r, other));
  }
  n.bookTrials = n.trials;
  while (n.trials < c.nullTrials) {
    const kind = n.trials % 3;
    const readings: SegmentReading[] = [];
    for (let j = 0; j < c.slots; j++) {
      let v = kind === 0 ? 0.3 * c.R.gauss() : kind === 1 ? c.R.gauss() : c.R.gauss() / Math.max(0.05, Math.abs(c.R.gauss()));
      v = Math.max(-2, Math.min(2, v));
      readings.push({ segment: j, value: v, frames: 60 });
    }
    record(scorePayloads(readings, c.codes));
  }
  n.seconds = (performance.now() - t6) / 1000;
  return n;
}

/** Makes and detects the hard leaks of the parts `o.want` asks for; returns their report (bench/forensic-hard-leaks-report.ts). */
export async function hardLeaks(o: HardLeaksInput): Promise<{ lines: string[]; summary: string[][]; json: unknown }> {
  const want = o.want ?? ((p: HardLeakPart) => p !== 'f9s');
  const dir = path.join(o.leakDir, 'hard-leaks');
  await mkdir(dir, { recursive: true });
  const c: PartContext = { ...o, dir, half: `scale=${even(o.width / 2)}:${even(o.height / 2)}` };
  const f2 = want('f2b') ? await excerptLeaks(c) : [];
  const f9 = want('f9') ? await camcorderLeaks(c) : [];
  const f9s = want('f9s') ? await camcorderBySteps(c) : [];
  const f10 = want('f10') ? await speedAndReedit(c) : [];
  const trio = o.viewers.slice(0, 3);
  const f7 = want('f7b') ? await threeColluders(c, trio) : undefined;
  const leakReadings = [...f2, ...f9, ...f10].map((x) => x.o.readings).concat(f7 ? [f7.readings] : []);
  const f6 = want('f6b') ? nullTrials(o, leakReadings) : NO_NULL_TRIALS;
  return hardLeaksReport({ want, firstViewer: o.viewers[0]!.payload, trio: trio.map((v) => v.payload), f2, f9, f9s, f10, f7, f6 });
}
