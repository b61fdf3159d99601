// The forensic bench's hard leaks: 2-minute leaks (F2'), camcorder copies (F9), speed changes and re-edits (F10),
// three colluders (F7'), 10,000 null trials with the reported false-accusation probability (F6'), and a long title
// (F11: generated at low resolution, ingested, watermarked and detected through the real CLI).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Rng } from '../harness/rng.js';
import { PAYLOAD_COUNT, type PackedCodebook, packedBit, packedCodebook } from '../src/core/forensic/keyed-bits.js';
import { type SegmentReading, scorePayloads, type Verdict, Z_THRESHOLD } from '../src/core/forensic/score.js';
import type { DetectResult } from '../src/engine/forensic/detect.js';
import { CAMCORDER_CRF, camcorderFilter, camcorderSteps } from './lib/camcorder.js';
import { fmt, table } from './lib/suite.js';

const execFileP = promisify(execFile);

export interface Outcome {
  truth: number[];
  accused: number[];
  trueZ: number[];
  trueRank: number[];
  segmentsRead: number;
  detectS: number;
  readings: SegmentReading[];
  verdict: string;
  bestZ: number;
}

export type HardLeakPart = 'f2b' | 'f9' | 'f9s' | 'f10' | 'f7b' | 'f6b';

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

const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);
const ok = (b: boolean) => (b ? 'MET' : 'MISSED');

async function ffmpeg(bin: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  await execFileP(bin, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], { maxBuffer: 64 * 1024 * 1024 });
  return (performance.now() - t0) / 1000;
}

const x264 = (crf: number, threads: number) => [
  '-an',
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-crf',
  String(crf),
  '-pix_fmt',
  'yuv420p',
  '-threads',
  String(threads),
];

export async function hardLeaks(o: HardLeaksInput): Promise<{ lines: string[]; summary: string[][]; json: unknown }> {
  const { ff, threads, width: W, height: H, leakDir, viewers, log } = o;
  const want = o.want ?? ((p: HardLeakPart) => p !== 'f9s');
  const dir = path.join(leakDir, 'hard-leaks');
  await mkdir(dir, { recursive: true });
  const half = `scale=${even(W / 2)}:${even(H / 2)}`;
  const rows = (list: { name: string; o: Outcome }[]) =>
    list.map(({ name, o: x }) => [
      name,
      String(x.segmentsRead),
      x.trueZ.map((z) => fmt(z)).join(' / '),
      x.trueRank.join(' / '),
      x.accused.join(', ') || 'nobody',
      x.verdict,
      fmt(x.detectS, 1),
    ]);
  const header = ['leak', 'slots read', 'z (true)', 'rank', 'accused', 'verdict', 'detect s'];

  // F2': three 2-minute excerpts, CRF 30 + 0.5x.
  const f2: { name: string; o: Outcome }[] = [];
  const v0 = viewers[0]!;
  if (want('f2b')) {
    log(`[${o.elapsed()}] F2': 2-minute excerpts ...`);
    for (let i = 0; i < 3; i++) {
      const start = Number((o.R.next() * (o.seconds - 121)).toFixed(2));
      const out = path.join(dir, `f2b-${i}.mp4`);
      await ffmpeg(ff, ['-threads', String(threads), '-ss', String(start), '-t', '120', '-i', v0.mp4, '-vf', half, ...x264(30, threads), out]);
      const x = await o.detect(`f2'-${start}`, out, [v0.payload]);
      f2.push({ name: `2 min from ${start.toFixed(1)} s`, o: x });
      log(`  ${start.toFixed(1)} s: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
    }
  }
  const f2Ok = f2.every((x) => x.o.verdict === 'correct' && x.o.trueZ[0]! >= Z_THRESHOLD);

  // F9: camcorder copies of every viewer.
  const f9: { name: string; o: Outcome }[] = [];
  if (want('f9')) {
    log(`[${o.elapsed()}] F9: camcorder copies ...`);
    for (const v of viewers) {
      const out = path.join(dir, `f9-${v.payload}.mp4`);
      if (!(o.reuse && existsSync(out)))
        await ffmpeg(ff, ['-threads', String(threads), '-i', v.mp4, '-vf', camcorderFilter(W, H), ...x264(CAMCORDER_CRF, threads), out]);
      const x = await o.detect(`f9-${v.payload}`, out, [v.payload]);
      f9.push({ name: `camcorder, viewer ${v.payload}`, o: x });
      log(`  ${v.payload}: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
      if (!o.keep) await rm(out, { force: true });
    }
  }
  const f9Ok = f9.every((x) => x.o.verdict === 'correct');

  // F9, step by step: where the camcorder's mark goes. One viewer's 100-s excerpt (50 slots) through each step alone
  // (then CRF 23), through the chain cut after each step (CRF 23), and the whole chain at the camcorder's CRF.
  // Soft mark = mean of reading x true bit (1.0: the mark as embedded); spread = its standard deviation over slots.
  const f9s: { name: string; o: Outcome; soft: number; spread: number; errors: number; live: number; fit: number }[] = [];
  if (want('f9s')) {
    const v = viewers[0]!;
    const steps = camcorderSteps(W, H);
    const start = 100;
    const branches = [
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
      { name: `whole chain, CRF ${CAMCORDER_CRF} (F9)`, filter: camcorderFilter(W, H), crf: CAMCORDER_CRF },
    ].map((b, i) => ({ ...b, out: path.join(dir, `f9s-${i}.mp4`) }));
    log(`[${o.elapsed()}] F9 by step: ${branches.length} copies of viewer ${v.payload}'s ${start}-${start + 100} s ...`);
    const todo = branches.filter((b) => !(o.reuse && existsSync(b.out)));
    // Two ffmpegs of about half the branches each (one decode per process, and the split keeps memory bounded).
    for (const group of [todo.slice(0, Math.ceil(todo.length / 2)), todo.slice(Math.ceil(todo.length / 2))].filter((g) => g.length)) {
      const graph = `[0:v]split=${group.length}${group.map((_, i) => `[s${i}]`).join('')};${group.map((b, i) => `[s${i}]${b.filter}[o${i}]`).join(';')}`;
      await ffmpeg(ff, [
        '-threads',
        String(threads),
        '-ss',
        String(start),
        '-t',
        '100',
        '-i',
        v.mp4,
        '-filter_complex',
        graph,
        ...group.flatMap((b, i) => ['-map', `[o${i}]`, ...x264(b.crf, threads), b.out]),
      ]);
    }
    for (const b of branches) {
      const x = await o.detect(`f9s-${b.name}`, b.out, [v.payload]);
      const marks = x.readings.map((r) => r.value * packedBit(o.codes, v.payload, r.segment));
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
      log(`  ${b.name}: soft ${fmt(soft)} +- ${fmt(spread)}, ${marks.filter((m) => m <= 0).length}/${marks.length} bits wrong, z ${fmt(x.trueZ[0]!)}`);
      if (!o.keep) await rm(b.out, { force: true });
    }
  }

  // F10: 1.04x and 0.96x speed, and a re-edit of six 40-s excerpts in shuffled order.
  const f10: { name: string; o: Outcome }[] = [];
  if (want('f10')) {
    log(`[${o.elapsed()}] F10: speed changes and a re-edit ...`);
    const v1 = viewers[1 % viewers.length]!;
    for (const speed of [1.04, 0.96]) {
      const out = path.join(dir, `f10-${speed}.mp4`);
      await ffmpeg(ff, ['-threads', String(threads), '-i', v1.mp4, '-vf', `setpts=PTS/${speed},fps=30,${half}`, ...x264(28, threads), out]);
      const x = await o.detect(`f10-${speed}`, out, [v1.payload]);
      f10.push({ name: `played at ${speed}x, 0.5x, CRF 28`, o: x });
      log(`  ${speed}x: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
    }
    {
      const starts = Array.from({ length: 6 }, (_, i) => i * ((o.seconds - 40) / 6) + o.R.next() * 5);
      const order = [3, 0, 5, 1, 4, 2];
      const graph =
        `[0:v]split=6${order.map((_, i) => `[s${i}]`).join('')};` +
        order.map((k, i) => `[s${i}]trim=start=${starts[k]!.toFixed(2)}:duration=40,setpts=PTS-STARTPTS[t${i}]`).join(';') +
        `;${order.map((_, i) => `[t${i}]`).join('')}concat=n=6:v=1:a=0,${half}[v]`;
      const out = path.join(dir, 'f10-reedit.mp4');
      await ffmpeg(ff, ['-threads', String(threads), '-i', v1.mp4, '-filter_complex', graph, '-map', '[v]', ...x264(28, threads), out]);
      const x = await o.detect('f10-reedit', out, [v1.payload]);
      f10.push({ name: `6 x 40 s shuffled (${order.map((k) => starts[k]!.toFixed(0)).join(', ')} s)`, o: x });
      log(`  re-edit: ${x.verdict} z ${fmt(x.trueZ[0]!)}`);
    }
  }
  const f10Ok = f10.every((x) => x.o.verdict === 'correct');

  // F7': three viewers averaged (full length, full size, CRF 23).
  const trio = viewers.slice(0, 3);
  let f7: (Outcome & { raw?: DetectResult }) | undefined;
  if (want('f7b')) {
    log(`[${o.elapsed()}] F7': three viewers averaged ...`);
    const f7Out = path.join(dir, 'f7-three.mp4');
    await ffmpeg(ff, [
      '-threads',
      String(threads),
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
      ...x264(23, threads),
      f7Out,
    ]);
    f7 = await o.detect(
      'f7-three',
      f7Out,
      trio.map((v) => v.payload),
    );
    log(`  accused ${f7.accused.join(', ') || 'nobody'}; z ${f7.trueZ.map((z) => fmt(z)).join(' / ')}`);
  }

  const f7Innocent = f7 ? f7.accused.filter((u) => !trio.some((v) => v.payload === u)) : [];
  const f7All = !!f7 && trio.every((v) => f7.accused.includes(v.payload));
  const stages = f7?.raw?.stages ?? [];
  const f7Ok = !!f7 && f7Innocent.length === 0 && (f7All || f7.accused.length > 0);

  // F6': null trials. Real readings (unmarked copies, other titles, marked leaks) against other titles' and other keys'
  // codebooks, plus noise readings against this title: 10,000 verdicts, each with its reported false-accusation figure.
  let trials = 0,
    accusations = 0,
    maxZ = -Infinity,
    minEstimate = 1,
    bookTrials = 0,
    books = 0,
    setCount = 0;
  const t6 = performance.now();
  if (want('f6b')) {
    log(`[${o.elapsed()}] F6': ${o.nullTrials} null trials ...`);
    const record = (v: Verdict) => {
      trials++;
      if (v.accused.length) accusations++;
      maxZ = Math.max(maxZ, v.best?.z ?? 0);
      // The most suspicious null: the smallest chance it reports that an innocent payload scores as high as its best.
      minEstimate = Math.min(minEstimate, v.falseAccusation.estimate);
    };
    const sets = [
      ...o.readingSets,
      ...f2.map((x) => x.o.readings),
      ...f9.map((x) => x.o.readings),
      ...f10.map((x) => x.o.readings),
      ...(f7 ? [f7.readings] : []),
    ].filter((r) => r.length);
    setCount = sets.length;
    books = Math.min(40, Math.ceil(o.nullTrials / 4 / Math.max(1, sets.length)));
    for (let b = 0; b < books; b++) {
      const other =
        b % 2
          ? packedCodebook(o.key, `bench-other-title-${o.seed}-${b}`, o.slots)
          : packedCodebook(Buffer.from(`another key ${o.seed} ${b}`), `title-${b}`, o.slots);
      for (const r of sets) record(scorePayloads(r, other));
    }
    bookTrials = trials;
    while (trials < o.nullTrials) {
      const kind = trials % 3;
      const readings: SegmentReading[] = [];
      for (let j = 0; j < o.slots; j++) {
        let v = kind === 0 ? 0.3 * o.R.gauss() : kind === 1 ? o.R.gauss() : o.R.gauss() / Math.max(0.05, Math.abs(o.R.gauss()));
        v = Math.max(-2, Math.min(2, v));
        readings.push({ segment: j, value: v, frames: 60 });
      }
      record(scorePayloads(readings, o.codes));
    }
  }
  const f6Ok = accusations === 0 && trials >= 10000;
  const f6S = (performance.now() - t6) / 1000;

  const part = <T>(p: HardLeakPart, items: T[]): T[] => (want(p) ? items : []);
  const lines = [
    ...part('f2b', [
      '',
      "-- F2': 2-minute excerpts (CRF 30 + 0.5x) --",
      table(header, rows(f2)),
      `F2' ${ok(f2Ok)}: ${f2.filter((x) => x.o.verdict === 'correct').length}/3 named at z >= ${Z_THRESHOLD}; z ${f2.map((x) => fmt(x.o.trueZ[0]!)).join(', ')} (2 code slots per 4-s segment: about 59 slots in 2 minutes, z ceiling ~ sqrt(59) = 7.7)`,
    ]),
    ...part('f9', [
      '',
      '-- F9: camcorder copies (perspective + rotation, barrel lens, blur 1.3, noise 8, gamma 1.2, 25 -> 30 fps, CRF 32) --',
      table(header, rows(f9)),
      `F9 ${ok(f9Ok)}: ${f9.filter((x) => x.o.verdict === 'correct').length}/${f9.length} named; z ${f9.map((x) => fmt(x.o.trueZ[0]!)).join(', ')}`,
    ]),
    ...part('f9s', [
      '',
      `-- F9 by step: viewer ${viewers[0]!.payload}'s 100-s excerpt (50 slots) through each camcorder step alone, the chain cut after each step, and all of it --`,
      table(
        ['copy', 'slots read', 'soft mark', 'spread', 'mark / spread', 'bits wrong', 'z (true)', 'frame live', 'registration r'],
        f9s.map((x) =>
          x.o.segmentsRead
            ? [x.name, String(x.o.segmentsRead), x.soft, x.spread, x.soft / x.spread, `${x.errors}/${x.o.readings.length}`, x.o.trueZ[0]!, x.live, x.fit]
            : [x.name, '0 (not aligned)', '-', '-', '-', '-', '-', '-', '-'],
        ),
      ),
      '(soft mark = mean over slots of reading x true bit: 1.0 is the mark as embedded; spread = its standard deviation; frame live = share of the leak frame that registration found to show the original)',
    ]),
    ...part('f10', [
      '',
      '-- F10: speed changes and re-edits --',
      table(header, rows(f10)),
      `F10 ${ok(f10Ok)}: ${f10.filter((x) => x.o.verdict === 'correct').length}/${f10.length} named`,
    ]),
    ...(f7
      ? [
          '',
          "-- F7': three viewers averaged (CRF 23) --",
          `colluders ${trio.map((v) => v.payload).join(', ')}: accused ${f7.accused.join(', ') || 'nobody'}; their z in the first stage ${f7.trueZ.map((z) => fmt(z)).join(' / ')} (ranks ${f7.trueRank.join(' / ')}); ${f7.segmentsRead} slots read`,
          `stages: ${stages.map((s) => `${s.payload} z ${fmt(s.z)} ${s.accused ? 'accused' : 'not accused'} (P false ~ ${s.falseAccusationEstimate.toExponential(1)})`).join('; ')}`,
          `innocents named: ${f7Innocent.length}; ${
            f7All
              ? 'all three named'
              : `not named: ${trio
                  .filter((v) => !f7.accused.includes(v.payload))
                  .map((v) => v.payload)
                  .join(', ')} (each keeps 1/3 of the mark: z ~ 0.58 sqrt(slots) before peeling)`
          }`,
          `F7' ${ok(f7Ok && f7All)}${f7Ok && !f7All ? ' (partly: no innocent named, not all three found)' : ''}`,
        ]
      : []),
    ...part('f6b', [
      '',
      "-- F6': null trials --",
      `${bookTrials} verdicts of real readings (${setCount} leaks: unmarked, other titles, marked) against ${books} other titles' / other keys' codebooks, ${trials - bookTrials} noise readings against this title: ${accusations} accusations in ${trials} trials; max best z ${fmt(maxZ)}; the most suspicious null reports P(an innocent payload scores this high by chance) = ${minEstimate.toExponential(2)}${minEstimate > 0.01 ? ' (chance level: nothing to accuse)' : ''}; ${fmt(f6S, 1)} s`,
      `F6' ${ok(f6Ok)}`,
    ]),
  ];
  const summary = [
    ...part('f2b', [["F2' 2-min leaks", ok(f2Ok), `z ${f2.map((x) => fmt(x.o.trueZ[0]!)).join(', ')}`]]),
    ...part('f9', [
      ['F9 camcorder', ok(f9Ok), `${f9.filter((x) => x.o.verdict === 'correct').length}/${f9.length}, z ${f9.map((x) => fmt(x.o.trueZ[0]!)).join(', ')}`],
    ]),
    ...part('f10', [['F10 speed / re-edit', ok(f10Ok), f10.map((x) => `${x.name.split(',')[0]}: z ${fmt(x.o.trueZ[0]!)}`).join('; ')]]),
    ...(f7 ? [["F7' three colluders", ok(f7Ok && f7All), `accused ${f7.accused.join(', ') || 'nobody'}, innocents ${f7Innocent.length}`]] : []),
    ...part('f6b', [["F6' null trials", ok(f6Ok), `${accusations}/${trials}`]]),
  ];
  const strip = (x: { name: string; o: Outcome }) => ({
    name: x.name,
    z: x.o.trueZ,
    rank: x.o.trueRank,
    accused: x.o.accused,
    slots: x.o.segmentsRead,
    verdict: x.o.verdict,
    detectS: x.o.detectS,
  });
  void PAYLOAD_COUNT;
  return {
    lines,
    summary,
    json: {
      f2: f2.map(strip),
      f9: f9.map(strip),
      f9s: f9s.map((x) => ({ ...strip(x), soft: x.soft, spread: x.spread, errors: x.errors, live: x.live, fit: x.fit })),
      f10: f10.map(strip),
      f7: f7 ? { accused: f7.accused, z: f7.trueZ, stages } : null,
      f6: { trials, accusations, maxZ, minEstimate, bookTrials },
    },
  };
}
