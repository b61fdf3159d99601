import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { measureForensicViewer, syntheticViewerSpec } from './lib/forensic-viewer.js';
import { median, settle, waitForQuiet } from './lib/measure.js';
import { fmt, formatMachine, OUT_DIR, type Suite, type SuiteContext, table, verdict, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { psnr, sourceClip } from './lib/video.js';
import {
  BATCH_KEY,
  BATCH_PSNR_DB,
  BATCH_RATIO,
  type Bench,
  type Figure,
  FORENSIC_US,
  FULL_RATIO,
  ingest,
  met,
  type Part,
  type PartResult,
  parseOptions,
  SERVING_RATIO,
  viewerText,
  wmark,
} from './pay-common.js';
import { servedParts } from './pay-served.js';
import { measureServing, servingOptions } from './serve.js';
import { textJobPsnr, textJobTable } from './text.js';
import { measureTextJob, PLACEMENT, textJobOptions } from './text-job.js';

// ---------------------------------------------------------------------------------------------------------------
// 4: a batch of viewers against the same viewers one job at a time.

/** The template both ways use: the viewer's name at PLACEMENT. */
const TEMPLATE = { name: 'pay viewer corner', settings: [{ type: 'TEXT', content: '%name%', ...PLACEMENT }] };

/** The batch part's data folders: one ingest, copied, so the separate jobs and the batch each render into their own. */
interface BatchFolders {
  separateDir: string;
  batchDir: string;
  templateId: string;
  /** The `wmark watermark` arguments both ways share. */
  common: string[];
}

type BatchRun = { wallS: number; cpuS: number; dirs: string[] };
type BatchRound = { separateS: number; batchS: number; ratio: number; cpuRatio: number; psnrDb: number; names: string[] };

/**
 * One ingest, copied: separate jobs and the batch render the same viewers (same settings, hence the same watermark
 * ids) into data folders of their own, so neither finds the other's output.
 */
async function batchFolders(b: Bench): Promise<BatchFolders> {
  const base = path.join(b.runDir, 'batch-base');
  await ingest(b, base, b.clip, BATCH_KEY);
  const templateFile = path.join(b.runDir, 'template.json');
  await writeFile(templateFile, JSON.stringify(TEMPLATE));
  const template = JSON.parse((await wmark(b, base, ['template', 'create', templateFile])).stdout) as { id: string };
  const separateDir = path.join(b.runDir, 'batch-separate');
  const batchDir = path.join(b.runDir, 'batch-batch');
  await cp(base, separateDir, { recursive: true });
  await cp(base, batchDir, { recursive: true });
  return { separateDir, batchDir, templateId: template.id, common: ['watermark', '--key', BATCH_KEY, '--template', template.id, '--containers', 'm3u8'] };
}

/** The viewers one `--map name=...` job after another: the walls and CPU summed. */
async function runSeparate(b: Bench, f: BatchFolders, names: string[]): Promise<BatchRun> {
  const dirs: string[] = [];
  let wallMs = 0;
  let cpuS = 0;
  for (const name of names) {
    settle();
    const m = await wmark(b, f.separateDir, [...f.common, '--map', `name=${name}`]);
    wallMs += m.wallMs;
    cpuS += m.cpuS;
    dirs.push((JSON.parse(m.stdout) as { files: { dir: string } }).files.dir);
  }
  return { wallS: wallMs / 1000, cpuS, dirs };
}

/** The viewers as one `--batch` of a CSV: every line READY, each viewer's output folder found by its name. */
async function runBatch(b: Bench, f: BatchFolders, names: string[], r: number): Promise<BatchRun> {
  const csv = path.join(b.runDir, `batch-r${r}.csv`);
  await writeFile(csv, `name\n${names.map((n) => `"${n}"`).join('\n')}\n`);
  settle();
  const m = await wmark(b, f.batchDir, [...f.common, '--batch', csv, ...(b.o.batchConcurrency ? ['--concurrency', String(b.o.batchConcurrency)] : [])]);
  const lines = m.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { status: string; mappings: { name: string }; files: { dir: string } });
  if (lines.length !== names.length || lines.some((l) => l.status !== 'READY'))
    throw new Error(`batch: expected ${names.length} READY lines, got ${m.stdout.slice(0, 2000)}`);
  return { wallS: m.wallMs / 1000, cpuS: m.cpuS, dirs: names.map((n) => lines.find((l) => l.mappings.name === n)!.files.dir) };
}

/** One round: both ways on new viewers, the first alternating (so drift favours neither), and viewer 1's PSNR between them. */
async function batchRound(b: Bench, f: BatchFolders, r: number): Promise<BatchRound> {
  const names = Array.from({ length: b.o.viewers }, (_, i) => viewerText(`batch r${r} v${i + 1}`));
  await b.quiet();
  b.ctx.log(`4 round ${r}/${b.o.batchRounds}: ${b.o.viewers} separate jobs and one --batch of ${b.o.viewers} ...`);
  let separate: BatchRun;
  let batched: BatchRun;
  if (r % 2) {
    separate = await runSeparate(b, f, names);
    batched = await runBatch(b, f, names, r);
  } else {
    batched = await runBatch(b, f, names, r);
    separate = await runSeparate(b, f, names);
  }
  b.ctx.log(`  separate ${fmt(separate.wallS)} s, batch ${fmt(batched.wallS)} s; PSNR of viewer 1 ...`);
  const full = { x: 0, y: 0, w: b.clip.width, h: b.clip.height };
  const p = await psnr(b.ctx.tools.ffmpeg.path, path.join(batched.dirs[0]!, 'video.m3u8'), path.join(separate.dirs[0]!, 'video.m3u8'), full);
  return {
    separateS: separate.wallS,
    batchS: batched.wallS,
    ratio: batched.wallS / separate.wallS,
    cpuRatio: batched.cpuS / separate.cpuS,
    psnrDb: p.average,
    names,
  };
}

async function batch(b: Bench): Promise<PartResult> {
  const f = await batchFolders(b);
  const rounds: BatchRound[] = [];
  for (let r = 1; r <= b.o.batchRounds; r++) rounds.push(await batchRound(b, f, r));
  const ratio = median(rounds.map((r) => r.ratio));
  const psnrDb = Math.min(...rounds.map((r) => r.psnrDb));
  return {
    part: 'batch',
    figures: [
      {
        id: '4',
        name: 'batch / separate jobs, wall',
        what: `--batch of ${b.o.viewers} viewers / ${b.o.viewers} separate jobs, wall`,
        measured: ratio,
        unit: 'x',
        target: BATCH_RATIO,
      },
      {
        id: '4',
        name: 'batch vs single job, PSNR',
        what: 'PSNR of a batch output vs the single-job output of the same viewer (viewer 1, all planes)',
        measured: psnrDb,
        unit: 'dB',
        target: BATCH_PSNR_DB,
        atLeast: true,
        note: psnrDb === Infinity ? 'identical' : undefined,
      },
    ],
    lines: [
      `4  batch: \`wmark watermark --template <%name% at the corner> --batch <${b.o.viewers} rows>${b.o.batchConcurrency ? ` --concurrency ${b.o.batchConcurrency}` : ' (default concurrency)'}\` vs ${b.o.viewers} \`--map name=...\` runs one after another, on the ${b.clip.seconds} s clip, m3u8 only`,
      ...rounds.map(
        (r, i) =>
          `   round ${i + 1}: separate ${fmt(r.separateS)} s (sum of ${b.o.viewers} process walls), batch ${fmt(r.batchS)} s: ratio ${fmt(r.ratio)}, CPU time ratio ${fmt(r.cpuRatio)}; PSNR ${r.psnrDb === Infinity ? 'inf (identical)' : `${fmt(r.psnrDb)} dB`}`,
      ),
      `   (the wall ratio also rewards running jobs side by side: ${b.o.viewers} separate jobs pay ${b.o.viewers} process starts and each renders its lead segments one after another; the CPU ratio shows what shared decoding saves)`,
    ],
    json: { templateId: f.templateId, rounds, ratio, psnrDb },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 5-7: the existing suites' measurements, against the targets above.

async function fullJob(b: Bench): Promise<PartResult> {
  const r = await measureTextJob(b.ctx, textJobOptions(b.ctx, { runName: 'pay-text-run', quietWaitS: b.o.quietWaitMs / 1000 }));
  const noWorse = r.psnr.wmark.y >= r.psnr.baseline.y;
  return {
    part: 'full',
    figures: [
      {
        id: '5',
        name: 'full job / ffmpeg one-shot, wall',
        what: 'complete TEXT job, wmark / plain ffmpeg one-shot, wall (median of per-round ratios)',
        measured: r.ratio.wall,
        unit: 'x',
        target: FULL_RATIO,
      },
      {
        id: '5',
        name: 'full job PSNR-Y outside text, vs one-shot',
        what: 'PSNR-Y outside the text area, wmark minus one-shot (no worse: >= 0)',
        measured: r.psnr.wmark.y - r.psnr.baseline.y,
        unit: 'dB',
        target: 0,
        atLeast: true,
        note: noWorse ? undefined : 'wmark below the one-shot',
      },
    ],
    lines: [
      `5  full job (the text suite's measurement, ${r.rounds.length} round(s), wmark's default containers):`,
      ...[...textJobTable(r, b.ctx.machine.availableParallelism), ...textJobPsnr(r)].flatMap((l) => l.split('\n')).map((l) => `   ${l}`),
    ],
    json: r,
  };
}

async function serving(b: Bench): Promise<PartResult> {
  const { result: r } = await measureServing(b.ctx, servingOptions(b.ctx, { runName: 'pay-serve-run', durationS: 5, quietWaitS: b.o.quietWaitMs / 1000 }));
  return {
    part: 'serving',
    figures: [
      {
        id: '6',
        name: 'signed GETs / bare node:http',
        what: 'signed segment GETs of wmark serve / a bare node:http handler, req/s',
        measured: r.ratio.getReqPerS,
        unit: 'x',
        target: SERVING_RATIO,
        atLeast: true,
      },
    ],
    lines: [
      `6  serving (the serve suite's measurement: ${r.config.connections} connections, ${r.config.durationS} s per measurement, ${r.rounds.length} round(s)):`,
      ...r.rounds.map(
        (x) =>
          `   round ${x.round}: wmark ${fmt(x.wmarkGet.reqPerS, 0)} req/s, bare ${fmt(x.bareGet.reqPerS, 0)} req/s: ${fmt(x.ratio)}; server CPU ${fmt(x.wmarkGet.serverCpuUsPerReq, 0)} vs ${fmt(x.bareGet.serverCpuUsPerReq, 0)} us/request`,
      ),
    ],
    json: r,
  };
}

async function forensicViewer(): Promise<PartResult> {
  const t = await measureForensicViewer(syntheticViewerSpec(300, 4, 2000));
  return {
    part: 'forensic',
    figures: [
      {
        id: '7',
        name: 'new forensic viewer',
        what: `a new forensic viewer's playlist (${t.segments} segments, its own process), the forensic bench's F4`,
        measured: t.playlistUs,
        unit: 'us',
        target: FORENSIC_US,
      },
    ],
    lines: [
      `7  forensic viewer: a synthetic 5-minute title (4 s segments, 2 code slots each, no encode), playlist built 2000 times per repetition in a child process`,
      `   writeMediaPlaylist: median ${fmt(t.playlistUs, 1)} us (repetitions ${t.samplesUs.map((x) => fmt(x, 1)).join(' ')}), ${t.playlistBytes} bytes`,
      `   with the viewer's codeword computed and mapped to variant files: median ${fmt(t.playlistWithCodewordUs, 1)} us (${t.samplesWithCodewordUs.map((x) => fmt(x, 1)).join(' ')})`,
    ],
    json: t,
  };
}

function report(b: Bench, results: PartResult[], elapsedS: number): string[] {
  const figures = results.flatMap((r) => r.figures);
  const value = (f: Figure) => (Number.isFinite(f.measured) ? `${fmt(f.measured)} ${f.unit}` : (f.note ?? String(f.measured)));
  return [
    '',
    `== bench pay: pay only for what is watched ==`,
    formatMachine(b.ctx.machine),
    `clip:    ${path.relative(process.cwd(), b.clip.path)} (${b.clip.seconds} s ${b.clip.width}x${b.clip.height} ${b.clip.fps} fps, natural, with audio)`,
    '',
    ...results.flatMap((r) => [...r.lines, '']),
    ...figures.map(
      (f) =>
        `${f.id.padEnd(2)} ${f.what}:  ${value(f)}  (target ${f.atLeast ? '>=' : '<='} ${fmt(f.target)} ${f.unit})  ${verdict(met(f))}${f.note && Number.isFinite(f.measured) ? `  [${f.note}]` : ''}`,
    ),
    '',
    table(
      ['figure', 'measured', 'target', 'result'],
      figures.map((f) => [`${f.id.padEnd(2)} ${f.name}`, value(f), `${f.atLeast ? '>=' : '<='} ${fmt(f.target)} ${f.unit}`, verdict(met(f))]),
    ),
    `suite time ${fmt(elapsedS / 60, 1)} min`,
    '',
  ];
}

export const suite: Suite = {
  name: 'pay',
  description: 'pay only for what is watched: lead latency, on-demand cost, seek, shared-decode batch, full job, serving, forensic viewer',
  async run(ctx: SuiteContext) {
    const t0 = performance.now();
    const o = parseOptions(ctx);
    const runDir = path.join(OUT_DIR, 'pay-run');
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true });
    const { cwd, env } = await wmarkEnvironment(ctx, 'bench-pay-cwd-');
    warnIfDistStale(ctx.log);
    const clip = await sourceClip(ctx.tools, { width: 1280, height: 720, seconds: 60, fps: 30, audio: true }, ctx.log);
    const b: Bench = { ctx, o, runDir, cwd, env, clip, quiet: () => (o.quietWaitMs > 0 ? waitForQuiet(0.3, o.quietWaitMs, ctx.log) : Promise.resolve(0)) };
    try {
      const results: PartResult[] = [];
      if (['lead', 'ondemand', 'seek'].some((p) => o.only.has(p as Part))) results.push(...(await servedParts(b)));
      if (o.only.has('batch')) results.push(await batch(b));
      if (o.only.has('full')) results.push(await fullJob(b));
      if (o.only.has('serving')) results.push(await serving(b));
      if (o.only.has('forensic')) results.push(await forensicViewer());
      const elapsedS = (performance.now() - t0) / 1000;
      process.stdout.write(`${report(b, results, elapsedS).join('\n')}\n`);
      return {
        suite: 'pay',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: { ...o, only: [...o.only] },
        clip,
        figures: results.flatMap((r) => r.figures.map((f) => ({ ...f, met: met(f) }))),
        parts: results.map((r) => ({ part: r.part, ...(r.json as object) })),
        suiteSeconds: elapsedS,
      };
    } finally {
      await rm(cwd, { recursive: true, force: true });
      if (!ctx.args.keep) await rm(runDir, { recursive: true, force: true });
      else ctx.log(`kept working files in ${runDir}`);
    }
  },
};
