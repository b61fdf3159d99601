// Suite `band-ingest`: why a band title's ingest costs about twice today's, and what the ways to cut it would cost.
// Per clip (720p25 by default: the engine's grainy `natural` sample, testsrc2 with a racing box, a talking-head-like
// low-motion picture; all with a tone), rounds alternating the variants, CPU seconds of every child process:
//   - today: the working-form encode (src/core/plan/ingest-args.ts: libx264 veryfast CRF 15, fastdecode, segments);
//   - band, as the engine does it (src/engine/band/band-media.ts), per working segment and per step: the decode of the
//     working segment (measured alone, to split the engine's one ffmpeg run), the bands' lossless rows (that run minus
//     the decode), the shared encode (patched x264, one thread), the muxes;
//   - option A, one decode: one ffmpeg decodes the source and feeds the working form's libx264, the bands' rows and,
//     through a pipe, the patched x264's shared encode of the whole title; one mux cuts it into HLS segments;
//   - option B, the shared encode is the working form: the same without the working form's libx264, and what that costs
//     every full render decoding a delivery-CRF mezzanine: PSNR and SSIM against the marked source of a full render
//     (the render plan's own arguments, a centred mark that fits no band) from each mezzanine, and the bytes;
//   - option C, lazily: the ingest is today's, and the first band viewer waits for the band media of the first
//     segment (its steps' wall time, from the band run), the later segments being made ahead of playback.
// Options: --clips natural,motion,talking  --seconds S (default 12)  --height H (default 720)
// Needs the patched x264 (scripts/build-x264.sh; WMARK_X264 or WMARK_X264_CACHE).
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bandLayout } from '../src/core/plan/band-fit.js';
import { BAND_REFS, bandIngestArgs, bandSegmentMuxArgs, sharedEncodeArgs } from '../src/core/plan/band-plan.js';
import { ingestArgs, parseSegmentList } from '../src/core/plan/ingest-args.js';
import { segmentRenderArgs } from '../src/core/plan/render-args.js';
import { framesPerSegment, leadSegmentFrames, segmentBoundaries, segmentFileName } from '../src/core/plan/segment-timing.js';
import { workingFormPlan } from '../src/core/plan/working-form.js';
import { firstVideoTime } from '../src/ffmpeg/probe-media.js';
import { createProcessRunner } from '../src/ffmpeg/run-ffmpeg.js';
import { type ClipResult, DELIVERY, type Kind, type Options, type Round, report, type Steps } from './band-ingest-report.js';
import { spread } from './lib/band-figures.js';
import { bandX264, inWorkFolder } from './lib/band-run.js';
import { FFMPEG_MEASURING, FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { fail, type Measured, runMeasured } from './lib/measure.js';
import { OUT_DIR, type Suite, type SuiteContext } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

const FPS = { num: 25, den: 1 };

function parseOptions(ctx: SuiteContext): Options {
  const clips = String(ctx.args.options.clips ?? 'natural,motion,talking').split(',') as Kind[];
  if (!clips.every((c) => ['natural', 'motion', 'talking'].includes(c))) throw new Error('--clips: natural, motion, talking');
  const seconds = Number(ctx.args.options.seconds ?? 12);
  if (!Number.isInteger(seconds) || seconds < 4) throw new Error('--seconds: 4 or more');
  const height = Number(ctx.args.options.height ?? 720);
  if (!Number.isInteger(height) || height < 144 || height % 16) throw new Error('--height: a multiple of 16, 144 or more');
  return { clips, seconds, height };
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function run(ctx: SuiteContext, what: string, cmd: string, args: readonly string[]): Promise<Measured> {
  const m = await runMeasured(cmd, args, { env: ctx.env });
  if (m.exitCode !== 0) fail(what, m);
  return m;
}

/** A generated source (high-quality H.264 + AAC in mp4, as a platform would be handed), cached under bench/out/. */
async function source(ctx: SuiteContext, kind: Kind, width: number, height: number, seconds: number): Promise<string> {
  if (kind === 'natural') return (await sourceClip(ctx.tools, { width, height, seconds, fps: FPS.num, kind: 'natural' }, ctx.log)).path;
  const output = path.join(OUT_DIR, `source-ingest-${kind}-${width}x${height}-${seconds}s.mp4`);
  if (existsSync(output)) return output;
  const d = seconds;
  const r = FPS.num;
  const graph =
    kind === 'motion'
      ? `testsrc2=s=${width}x${height}:r=${r}:d=${d}[bg];testsrc=s=${width >> 2}x${height >> 2}:r=${r}:d=${d}[box];` +
        `[bg][box]overlay=x='${width / 2.7}+${width / 3.2}*sin(2*t)':y='${height / 2.7}+${height / 2.4}*sin(3*t)'[v]`
      : // A still, soft background (a blurred test card), a skin-toned head that sways and nods a little, light grain.
        `testsrc2=s=${width}x${height}:r=${r}:d=0.04,boxblur=20:2,loop=loop=-1:size=1:start=0,setpts=N/${r}/TB,trim=duration=${d}[bg];` +
        `nullsrc=s=${width >> 2}x${Math.round(height / 1.8)}:d=0.04,format=rgba,geq=r=208:g=160:b=128:` +
        `a='255*lte(hypot((X-W/2)/(W/2),(Y-H/2)/(H/2)),1)',loop=loop=-1:size=1:start=0,setpts=N/${r}/TB[head];` +
        `[bg][head]overlay=x='${(width * 3) / 8}+${width / 64}*sin(1.3*t)':y='${height / 4}+${height / 90}*sin(2.1*t)':shortest=1,` +
        `noise=alls=6:allf=t,format=yuv420p[v]`;
  await mkdir(OUT_DIR, { recursive: true });
  ctx.log(`generating the ${seconds} s ${width}x${height} ${kind} source (cached as ${path.relative(process.cwd(), output)}) ...`);
  await run(ctx, `${kind} source`, ctx.tools.ffmpeg.path, [
    ...FFMPEG_QUIET,
    '-filter_complex',
    `${graph};sine=f=440:d=${d}[a]`,
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-c:v',
    'libx264',
    '-preset',
    'medium',
    '-crf',
    '12',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-t',
    String(d),
    output,
  ]);
  return output;
}

/** The ingest plan of a probed 720p25 source with audio, as the engine makes it. */
function plan(src: string, outDir: string, width: number, height: number, seconds: number) {
  const p = workingFormPlan({ fpsNum: FPS.num, fpsDen: FPS.den, width, height, hasAudio: true, durationSeconds: seconds, enableForensic: false });
  return { ...p, source: src, outDir };
}

async function segmentsOf(dir: string): Promise<{ files: string[]; durations: number[] }> {
  const list = parseSegmentList(await readFile(path.join(dir, 'segments.csv'), 'utf8'));
  return { files: list.map((e) => path.join(dir, e.file)), durations: list.map((e) => e.duration) };
}

async function bytesOf(files: string[]): Promise<number> {
  return (await Promise.all(files.map((f) => stat(f)))).reduce((a, s) => a + s.size, 0);
}

/** The engine's band media of `dir`'s working segments, step by step (src/engine/band/band-media.ts, one worker). */
async function bandSteps(ctx: SuiteContext, x264: string, dir: string, width: number, height: number, origin: number): Promise<Steps> {
  const ff = ctx.tools.ffmpeg.path;
  const { files, durations } = await segmentsOf(dir);
  const bands = bandLayout(height, { top: true });
  const out = path.join(dir, 'band');
  await mkdir(out, { recursive: true });
  const steps: Steps = { decode: 0, rows: 0, shared: 0, mux: 0, firstWallS: 0, allWallS: 0, bytes: 0 };
  let start = origin;
  for (let k = 0; k < files.length; k++) {
    const y4m = path.join(out, `full_${k}.y4m`);
    const raw = path.join(out, `shared_${k}.264`);
    const cuts = bands.map((rows, b) => ({ cut: { rows, width, height }, output: path.join(out, `rows${b}_${k}.nut`) }));
    const decode = await run(ctx, 'decode', ff, [...FFMPEG_QUIET, ...bandIngestArgs(files[k]!, y4m, [])]);
    const both = await run(ctx, 'decode + rows', ff, [...FFMPEG_QUIET, ...bandIngestArgs(files[k]!, y4m, cuts)]);
    const options = { ...DELIVERY, refs: BAND_REFS, gop: framesPerSegment(FPS), threads: 1 };
    const shared = await run(ctx, 'shared encode', x264, sharedEncodeArgs(y4m, raw, bands, options));
    const muxes = bandSegmentMuxArgs(raw, files[k]!, path.join(out, segmentFileName(k)), {
      start,
      fps: `${FPS.num}/${FPS.den}`,
      hasAudio: true,
      videoOnly: path.join(out, `video_${k}.ts`),
    });
    let mux = 0;
    let muxWall = 0;
    for (const args of muxes) {
      const m = await run(ctx, 'mux', ff, [...FFMPEG_QUIET, ...args]);
      mux += m.cpuS;
      muxWall += m.wallMs / 1000;
    }
    steps.decode += decode.cpuS;
    steps.rows += both.cpuS - decode.cpuS;
    steps.shared += shared.cpuS;
    steps.mux += mux;
    const wall = (both.wallMs + shared.wallMs) / 1000 + muxWall;
    if (k === 0) steps.firstWallS = wall;
    steps.allWallS += wall;
    steps.bytes += (await stat(path.join(out, segmentFileName(k)))).size;
    await rm(y4m, { force: true });
    start += durations[k]!;
  }
  return steps;
}

/** The working form's frame cuts (lead segments, then one GOP), as an x264 qpfile forcing IDR frames there. */
function idrQpfile(maxFrames: number): string {
  const cuts = [0, ...segmentBoundaries(leadSegmentFrames(FPS), framesPerSegment(FPS), maxFrames)];
  return cuts.map((n) => `${n} I -1\n`).join('');
}

/**
 * Options A and B: one ffmpeg decodes the source (the working form's filters), splits the picture to the bands' rows
 * (segmented Ut Video), the patched x264 through a pipe (the shared encode of the title, IDR frames where the working
 * form cuts), and (A only) the working form's libx264; a second ffmpeg cuts the shared encode into HLS segments with the
 * audio. Returns the CPU of both runs and the segments' folder.
 */
async function oneDecode(ctx: SuiteContext, x264: string, src: string, dir: string, width: number, height: number, seconds: number, working: boolean) {
  const ff = ctx.tools.ffmpeg.path;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const p = plan(src, dir, width, height, seconds);
  const today = ingestArgs(p);
  const vf = today[today.indexOf('-vf') + 1]!;
  const cuts = today[today.indexOf('-segment_frames') + 1]!;
  const bands = bandLayout(height, { top: true });
  const qp = path.join(dir, 'idr.qp');
  await writeFile(qp, idrQpfile(p.maxFrames ?? 0));
  const crops = bands.map((b) => `crop=${width}:${16 * (b.bottom - b.top)}:0:${16 * b.top}`);
  const n = bands.length + (working ? 2 : 1);
  const labels = ['[s]', ...bands.map((_, i) => `[c${i}]`), ...(working ? ['[w]'] : [])];
  const graph = [`[0:v:0]${vf},split=${n}${labels.join('')}`, ...crops.map((c, i) => `[c${i}]${c}[b${i}]`)].join(';');
  const rows = bands.flatMap((_, i) => [
    '-map',
    `[b${i}]`,
    '-c:v',
    'utvideo',
    '-f',
    'segment',
    '-segment_format',
    'nut',
    '-segment_frames',
    cuts,
    path.join(dir, `rows${i}_%05d.nut`),
  ]);
  // The working form's own output options (codec, GOP, audio, segment muxer), from ingestArgs.
  const workingOut = working ? ['-map', '[w]', '-map', '0:a:0', ...today.slice(today.indexOf('-c:v'))] : [];
  const audio = working ? [] : ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-ar', '48000', path.join(dir, 'audio.m4a')];
  const decodeArgs = [...FFMPEG_QUIET, '-i', src, '-filter_complex', graph, ...workingOut, ...rows, ...audio, '-map', '[s]', '-f', 'yuv4mpegpipe', '-'];
  const options = { ...DELIVERY, refs: BAND_REFS, gop: framesPerSegment(FPS), threads: 1 };
  const x264Args = sharedEncodeArgs('-', path.join(dir, 'shared.264'), bands, options);
  x264Args.splice(x264Args.length - 1, 0, '--demuxer', 'y4m', '--qpfile', qp);
  const pipe = `${[ff, ...decodeArgs].map(sh).join(' ')} | ${[x264, ...x264Args].map(sh).join(' ')}`;
  const encode = await run(ctx, working ? 'option A' : 'option B', 'bash', ['-o', 'pipefail', '-c', pipe]);
  const audioIn = working ? `concat:${(await segmentsOf(dir)).files.join('|')}` : path.join(dir, 'audio.m4a');
  const segDir = path.join(dir, 'shared');
  await mkdir(segDir, { recursive: true });
  const mux = await run(ctx, 'segment mux', ff, [
    ...FFMPEG_QUIET,
    '-r',
    `${FPS.num}/${FPS.den}`,
    '-i',
    path.join(dir, 'shared.264'),
    '-i',
    audioIn,
    '-map',
    '0:v:0',
    '-map',
    '1:a:0',
    '-c',
    'copy',
    '-f',
    'segment',
    '-segment_format',
    'mpegts',
    '-segment_frames',
    cuts,
    '-segment_list',
    path.join(segDir, 'segments.csv'),
    '-segment_list_type',
    'csv',
    path.join(segDir, 'seg_%05d.ts'),
  ]);
  return { cpuS: encode.cpuS + mux.cpuS, segDir };
}

/** PSNR (average) and SSIM (All) of `distorted` against `reference`, both re-timed to start at 0. */
async function quality(ff: string, distorted: string, reference: string): Promise<{ psnr: number; ssim: number }> {
  const graph = '[0:v]setpts=PTS-STARTPTS,split[d1][d2];[1:v]setpts=PTS-STARTPTS,split[r1][r2];[d1][r1]psnr;[d2][r2]ssim';
  const m = await runMeasured(ff, [...FFMPEG_MEASURING, '-i', distorted, '-i', reference, '-lavfi', graph, '-an', '-f', 'null', '-']);
  const p = /PSNR .*average:(\S+)/.exec(m.stderr);
  const s = /SSIM .*All:(\S+)/.exec(m.stderr);
  if (m.exitCode !== 0 || !p || !s) fail('quality', m);
  return { psnr: Number(p![1]), ssim: Number(s![1]) };
}

/** Full renders of a centred mark (fits no band) of every segment of a mezzanine, with the render plan's arguments. */
async function fullRender(ctx: SuiteContext, mezzDir: string, outDir: string, filterScript: string): Promise<{ file: string; cpuS: number }> {
  const ff = ctx.tools.ffmpeg.path;
  await mkdir(outDir, { recursive: true });
  const files = (await readdir(mezzDir)).filter((f) => /^seg_\d+\.ts$/.test(f)).sort();
  let cpuS = 0;
  const outs: string[] = [];
  for (const f of files) {
    const output = path.join(outDir, f);
    const args = segmentRenderArgs({
      input: path.join(mezzDir, f),
      output,
      filterScript,
      gop: framesPerSegment(FPS),
      threads: 1,
      encode: DELIVERY,
      hasAudio: true,
    });
    cpuS += (await run(ctx, 'full render', ff, [...FFMPEG_QUIET, ...args])).cpuS;
    outs.push(output);
  }
  const joined = path.join(outDir, 'all.ts');
  await run(ctx, 'join', ff, [...FFMPEG_QUIET, '-i', `concat:${outs.join('|')}`, '-c', 'copy', '-f', 'mpegts', joined]);
  return { file: joined, cpuS };
}

async function measureClip(ctx: SuiteContext, x264: string, options: Options, kind: Kind, work: string): Promise<ClipResult> {
  const ff = ctx.tools.ffmpeg.path;
  const height = options.height;
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const src = await source(ctx, kind, width, height, options.seconds);
  const runner = createProcessRunner(ff, ctx.tools.ffprobe.path);
  const rounds: Round[] = [];
  const dirs = { today: path.join(work, kind, 'today'), a: path.join(work, kind, 'a'), b: path.join(work, kind, 'b') };
  for (let r = 0; r < ctx.args.rounds; r++) {
    ctx.log(`band-ingest ${kind}: round ${r + 1}/${ctx.args.rounds}: today, band steps, option A, option B`);
    await rm(dirs.today, { recursive: true, force: true });
    await mkdir(dirs.today, { recursive: true });
    const today = await run(ctx, 'working form', ff, [...FFMPEG_QUIET, ...ingestArgs(plan(src, dirs.today, width, height, options.seconds))]);
    const origin = await firstVideoTime(runner, path.join(dirs.today, segmentFileName(0)));
    const steps = await bandSteps(ctx, x264, dirs.today, width, height, origin);
    const a = await oneDecode(ctx, x264, src, dirs.a, width, height, options.seconds, true);
    const b = await oneDecode(ctx, x264, src, dirs.b, width, height, options.seconds, false);
    rounds.push({ today: today.cpuS, steps, optionA: a.cpuS, optionB: b.cpuS });
  }
  ctx.log(`band-ingest ${kind}: full renders from each mezzanine`);
  const font = ctx.tools.font.path;
  const markFile = path.join(work, kind, 'mark.txt');
  await writeFile(
    markFile,
    `drawtext=fontfile=${font}:text='viewer 1 alice@example.com':fontsize=40:fontcolor=white:box=1:boxcolor=black@0.5:x=(w-tw)/2:y=(h-th)/2`,
  );
  const reference = path.join(work, kind, 'ref.y4m');
  const vf = ingestArgs(plan(src, dirs.today, width, height, options.seconds)).find((a) => a.startsWith('fps='))!;
  await run(ctx, 'reference', ff, [...FFMPEG_QUIET, '-i', src, '-vf', `${vf},${(await readFile(markFile, 'utf8')).trim()}`, '-f', 'yuv4mpegpipe', reference]);
  const fromCrf15 = await fullRender(ctx, dirs.today, path.join(work, kind, 'render15'), markFile);
  const fromShared = await fullRender(ctx, path.join(dirs.b, 'shared'), path.join(work, kind, 'renderShared'), markFile);
  const [q15, qShared] = [await quality(ff, fromCrf15.file, reference), await quality(ff, fromShared.file, reference)];
  const todayFiles = (await segmentsOf(dirs.today)).files;
  const sharedFiles = (await segmentsOf(path.join(dirs.b, 'shared'))).files;
  await rm(reference, { force: true });
  return {
    kind,
    seconds: options.seconds,
    segments: todayFiles.length,
    rounds,
    bandRatio: spread(rounds.map((r) => (r.today + r.steps.decode + r.steps.rows + r.steps.shared + r.steps.mux) / r.today)),
    aRatio: spread(rounds.map((r) => r.optionA / r.today)),
    bRatio: spread(rounds.map((r) => r.optionB / r.today)),
    quality: {
      crf15: { ...q15, bytes: await bytesOf(todayFiles), renderCpuS: fromCrf15.cpuS },
      shared: { ...qShared, bytes: await bytesOf(sharedFiles), renderCpuS: fromShared.cpuS },
    },
  };
}

export const suite: Suite = {
  name: 'band-ingest',
  description: 'band title ingest: where the extra CPU goes, and options A (one decode), B (shared encode as the working form), C (lazy)',
  async run(ctx) {
    const options = parseOptions(ctx);
    const x264 = bandX264(ctx, 'band-ingest');
    const results: ClipResult[] = [];
    await inWorkFolder(ctx, 'band-ingest-run', async (work) => {
      for (const kind of options.clips) results.push(await measureClip(ctx, x264, options, kind, work));
    });
    process.stdout.write(`${report(results, options)}\n`);
    return { options, results };
  },
};
