// The text suite's job: `wmark watermark` with one TEXT setting vs a plain one-shot ffmpeg (decode -> drawtext -> libx264
// -> HLS), alternated for N rounds, then wmark's fixed costs and PSNR outside the text area. The text suite
// (bench/text.ts) reports it, and pay and cluster run it as one of their parts.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { framesPerSegment } from '../src/core/plan/segment-timing.js';
import { drawtextFilter, fontPixels } from '../src/core/plan/text-drawing.js';
import { parseSettings } from '../src/core/setting-schema.js';
import type { TextSetting } from '../src/core/setting-types.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { fail, type Measured, median, runMeasured, settle, waitForQuiet } from './lib/measure.js';
import { newPlayableWatermark, playlistPlayable, playlistStats } from './lib/playlist.js';
import { OUT_DIR, type SuiteContext, WMARK_BIN, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { diffOptions, psnr, type Region, sourceClip, x264Options } from './lib/video.js';

/** wmark's defaults (src/config/load-config.ts): the baseline must encode with the same preset and CRF. */
export const PRESET = 'veryfast';
export const CRF = 23;
const KEY = 'bench-text';
export const PLAYLIST = 'video.m3u8';
export const POLL_MS = 25;
export const TARGET_RATIO = 1.0;
export const TARGET_PLAYABLE_S = 3;

/** The one TEXT setting both jobs draw: bottom-right corner, so the rest of the frame can be compared with the source. */
export const PLACEMENT = { x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.04, fontOpacity: 0.5 } as const;

export interface JobResult {
  wallS: number;
  cpuS: number;
  userS: number;
  sysS: number;
  /** Seconds from spawn until a playlist with at least one segment existed. */
  playableS: number | null;
  /** Average cores used by other processes on the machine during the job (noise; ideally ~0). */
  otherCores: number;
  outputDir: string;
}

export interface RoundResult {
  round: number;
  text: string;
  baseline: JobResult;
  wmark: JobResult & { watermarkId: string };
}

function summarize(m: Measured, outputDir: string): JobResult {
  return {
    wallS: m.wallMs / 1000,
    cpuS: m.cpuS,
    userS: m.userS,
    sysS: m.sysS,
    playableS: m.readyMs === undefined ? null : m.readyMs / 1000,
    otherCores: m.foreignCpuS / (m.wallMs / 1000),
    outputDir,
  };
}

function textSetting(content: string): TextSetting {
  const parsed = parseSettings([{ type: 'TEXT', content, ...PLACEMENT }], { apiVersion: '2.0', path: 'bench' });
  if (!parsed.ok) throw new Error(`bench setting rejected: ${parsed.issues.join('; ')}`);
  return parsed.value[0] as TextSetting;
}

/**
 * The baseline a competent user would write: one ffmpeg, default threads, the same drawtext (text from a file,
 * expansion off), the same preset/CRF, fixed 4 s GOPs so the HLS muxer can cut 4 s segments, audio copied (wmark copies
 * the audio too), VOD HLS.
 */
function baselineArgs(source: string, filter: string, fps: number, outDir: string): string[] {
  const gop = String(framesPerSegment({ num: fps, den: 1 }));
  return [
    ...FFMPEG_QUIET,
    '-i',
    source,
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    '-vf',
    filter,
    '-c:v',
    'libx264',
    '-preset',
    PRESET,
    '-crf',
    String(CRF),
    '-g',
    gop,
    '-keyint_min',
    gop,
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'copy',
    '-f',
    'hls',
    '-hls_time',
    '4',
    '-hls_playlist_type',
    'vod',
    '-hls_segment_filename',
    path.join(outDir, 'seg_%05d.ts'),
    path.join(outDir, PLAYLIST),
  ];
}

/** `node` arguments of `wmark watermark` drawing `text` at PLACEMENT on the video with `key`. */
export function wmarkArgs(dataDir: string, text: string, containers: string | undefined, key = KEY): string[] {
  return [
    WMARK_BIN,
    '--data-dir',
    dataDir,
    '--json',
    'watermark',
    '--key',
    key,
    '--text',
    text,
    '--x',
    String(PLACEMENT.x),
    '--y',
    String(PLACEMENT.y),
    '--align',
    PLACEMENT.align,
    '--vertical-align',
    PLACEMENT.verticalAlign,
    '--font-size',
    String(PLACEMENT.fontSize),
    '--font-opacity',
    String(PLACEMENT.fontOpacity),
    ...(containers ? ['--containers', containers] : []),
  ];
}

function quote(args: string[]): string {
  return args.map((a) => (/^[\w./=:@,+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export interface TextJobOptions {
  rounds: number;
  /** Length of the generated 720p30 clip. */
  seconds: number;
  /** Passed to `wmark watermark --containers` (undefined: wmark's default). */
  containers?: string;
  /** Before each timed job, wait up to this long for other processes to go quiet (0: off). */
  quietWaitMs: number;
  /** Working folder under bench/out/ (a suite that embeds this measurement uses its own). */
  runName: string;
  keep: boolean;
}

export type TextJobResult = Awaited<ReturnType<typeof measureTextJob>>;

/** Reads the text suite's options; another suite embedding the measurement passes its own defaults. */
export function textJobOptions(ctx: SuiteContext, defaults: { runName: string; quietWaitS: number }): TextJobOptions {
  const opt = ctx.args.options;
  return {
    rounds: ctx.args.rounds,
    seconds: opt.seconds !== undefined ? Number(opt.seconds) : 60,
    containers: typeof opt.containers === 'string' ? opt.containers : undefined,
    quietWaitMs: (opt['quiet-wait'] !== undefined ? Number(opt['quiet-wait']) : defaults.quietWaitS) * 1000,
    runName: defaults.runName,
    keep: ctx.args.keep,
  };
}

/** What every round of the job shares: the clip, the working folders, wmark's environment and its ingest. */
interface TextJobSetup {
  ctx: SuiteContext;
  options: TextJobOptions;
  quiet: () => Promise<unknown>;
  clip: Awaited<ReturnType<typeof sourceClip>>;
  runDir: string;
  dataDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  ingest: Measured;
  video: { id: string; segments: number; duration: number };
}

/** Generates (or reuses) the clip, makes the working folders and ingests the clip into wmark, once per run. */
async function prepareTextJob(ctx: SuiteContext, options: TextJobOptions): Promise<TextJobSetup> {
  const { tools, log } = ctx;
  const { quietWaitMs } = options;
  const quiet = () => (quietWaitMs > 0 ? waitForQuiet(0.3, quietWaitMs, log) : Promise.resolve(0));
  const clip = await sourceClip(tools, { width: 1280, height: 720, seconds: options.seconds, fps: 30, audio: true }, log);

  const runDir = path.join(OUT_DIR, options.runName);
  await rm(runDir, { recursive: true, force: true });
  await mkdir(runDir, { recursive: true });
  const dataDir = path.join(runDir, 'data');
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-text-cwd-');
  warnIfDistStale(log);

  // Warm the page cache and the node/ffmpeg binaries, so round 1 is not penalised.
  execFileSync(process.execPath, [WMARK_BIN, '--version'], { env, cwd, stdio: 'ignore' });
  execFileSync(tools.ffmpeg.path, ['-hide_banner', '-version'], { stdio: 'ignore' });

  // wmark ingest: a one-time cost per video, reported on its own and not part of the ratio.
  log('ingesting the source into wmark (one-time per video) ...');
  settle();
  await quiet();
  const ingest = await runMeasured(process.execPath, [WMARK_BIN, '--data-dir', dataDir, '--json', 'ingest', clip.path, '--key', KEY], { env, cwd });
  if (ingest.exitCode !== 0) fail('wmark ingest', ingest);
  const video = JSON.parse(ingest.stdout) as TextJobSetup['video'];
  log(`  ingested ${video.id}: ${video.segments} segments, ${(ingest.wallMs / 1000).toFixed(1)} s`);
  return { ctx, options, quiet, clip, runDir, dataDir, cwd, env, ingest, video };
}

/** One round: the plain ffmpeg one-shot, then `wmark watermark` as a user runs it, each with a new text. */
async function runTextRound(s: TextJobSetup, r: number): Promise<{ round: RoundResult; baselineCommand: string[]; wmarkCommand: string[] }> {
  const { tools, log } = s.ctx;
  const { clip, cwd, env, quiet } = s;
  // A new text each round (same length), so wmark never finds an existing watermark.
  const text = `bench r${r} viewer-${randomBytes(4).toString('hex')}@example.com`;
  const setting = textSetting(text);

  // 1. plain ffmpeg one-shot
  const bDir = path.join(s.runDir, `baseline-${r}`);
  await mkdir(bDir, { recursive: true });
  await writeFile(path.join(bDir, 'text_0.txt'), text, 'utf8');
  const filter = drawtextFilter({ setting, textFile: 'text_0.txt', fontFile: tools.font.path, frameHeight: clip.height, timeOrigin: 0 });
  const baselineCommand = [tools.ffmpeg.path, ...baselineArgs(clip.path, filter, clip.fps, bDir)];
  log(`round ${r}/${s.options.rounds}: ffmpeg one-shot ...`);
  settle();
  await quiet();
  const b = await runMeasured(tools.ffmpeg.path, baselineCommand.slice(1), {
    cwd: bDir,
    env,
    poll: { intervalMs: POLL_MS, check: () => playlistPlayable(path.join(bDir, PLAYLIST)) },
  });
  if (b.exitCode !== 0) fail('baseline ffmpeg', b);
  log(`  ${(b.wallMs / 1000).toFixed(2)} s wall, ${b.cpuS.toFixed(2)} s cpu`);

  // 2. wmark watermark, as a user runs it
  const wmarkCommand = [process.execPath, ...wmarkArgs(s.dataDir, text, s.options.containers)];
  log(`round ${r}/${s.options.rounds}: wmark watermark ...`);
  const playable = newPlayableWatermark(path.join(s.dataDir, 'media', 'watermarks', s.video.id));
  settle();
  await quiet();
  const w = await runMeasured(process.execPath, wmarkCommand.slice(1), { cwd, env, poll: { intervalMs: POLL_MS, check: playable } });
  if (w.exitCode !== 0) fail('wmark watermark', w);
  const view = JSON.parse(w.stdout) as { id: string; status: string; created: boolean; files: { dir: string; m3u8?: string; mp4?: string } };
  if (view.status !== 'READY' || !view.created) throw new Error(`wmark returned status ${view.status} created=${view.created}; expected a new READY watermark`);
  log(`  ${(w.wallMs / 1000).toFixed(2)} s wall, ${w.cpuS.toFixed(2)} s cpu, playable after ${((w.readyMs ?? NaN) / 1000).toFixed(2)} s`);
  const round = { round: r, text, baseline: summarize(b, bDir), wmark: { ...summarize(w, view.files.dir), watermarkId: view.id } };
  return { round, baselineCommand, wmarkCommand };
}

/** Fixed costs of a wmark run: process start, and a repeated request (the watermark exists, nothing is encoded). */
async function textFixedCosts(s: TextJobSetup, last: RoundResult): Promise<{ startupS: number; repeatRequestS: number }> {
  const { cwd, env } = s;
  const startup = [] as number[];
  const repeat = [] as number[];
  for (let i = 0; i < 3; i++) {
    startup.push((await runMeasured(process.execPath, [WMARK_BIN, '--version'], { env, cwd })).wallMs / 1000);
    const again = await runMeasured(process.execPath, wmarkArgs(s.dataDir, last.text, s.options.containers), { env, cwd });
    if (again.exitCode !== 0) fail('wmark watermark (repeat)', again);
    repeat.push(again.wallMs / 1000);
  }
  return { startupS: median(startup), repeatRequestS: median(repeat) };
}

/** Quality of the last round's outputs: PSNR against the source outside the text area, playlists, x264 settings. */
async function textQuality(s: TextJobSetup, last: RoundResult, fontPx: number) {
  const { clip } = s;
  const ffmpeg = s.ctx.tools.ffmpeg.path;
  s.ctx.log('measuring PSNR outside the text area ...');
  // Leave out the text area (bottom-right); keep the full-width band above it.
  const textTop = Math.floor(PLACEMENT.y * clip.height - 2 * fontPx);
  const region: Region = { x: 0, y: 0, w: clip.width, h: Math.floor(textTop / 16) * 16 };
  const wDir = last.wmark.outputDir;
  const wOut = existsSync(path.join(wDir, 'video.mp4')) ? path.join(wDir, 'video.mp4') : path.join(wDir, PLAYLIST);
  const bOut = path.join(last.baseline.outputDir, PLAYLIST);
  const psnrW = await psnr(ffmpeg, wOut, clip.path, region);
  const psnrB = await psnr(ffmpeg, bOut, clip.path, region);
  const x264Diff = diffOptions(
    await x264Options(ffmpeg, path.join(wDir, 'seg_00000.ts')),
    await x264Options(ffmpeg, path.join(last.baseline.outputDir, 'seg_00000.ts')),
  );
  return {
    psnr: { region, wmark: psnrW, wmarkFrom: path.basename(wOut), baseline: psnrB },
    outputs: { wmark: playlistStats(path.join(wDir, PLAYLIST)), baseline: playlistStats(bOut) },
    x264Diff,
  };
}

/** The rounds' medians per job, and the wmark/ffmpeg ratio per round (each wmark run against the baseline just before). */
export function textJobFigures(rounds: RoundResult[]) {
  const med = (pick: (r: RoundResult) => number | null) => median(rounds.map((r) => pick(r) ?? NaN));
  const medJob = (job: 'baseline' | 'wmark') => ({
    wallS: med((r) => r[job].wallS),
    cpuS: med((r) => r[job].cpuS),
    userS: med((r) => r[job].userS),
    sysS: med((r) => r[job].sysS),
    playableS: med((r) => r[job].playableS),
    otherCores: med((r) => r[job].otherCores),
  });
  const m = { baseline: medJob('baseline'), wmark: medJob('wmark') };
  const wallRatio = median(rounds.map((r) => r.wmark.wallS / r.baseline.wallS));
  const cpuRatio = median(rounds.map((r) => r.wmark.cpuS / r.baseline.cpuS));
  return {
    median: m,
    ratio: {
      wall: wallRatio,
      cpu: cpuRatio,
      perRoundWall: rounds.map((r) => r.wmark.wallS / r.baseline.wallS),
      target: TARGET_RATIO,
      met: wallRatio <= TARGET_RATIO,
    },
    playable: { wmarkS: m.wmark.playableS, baselineS: m.baseline.playableS, target: TARGET_PLAYABLE_S, met: m.wmark.playableS <= TARGET_PLAYABLE_S },
  };
}

/**
 * The complete TEXT job, wmark against the plain ffmpeg one-shot, alternated for `rounds` rounds; then wmark's fixed
 * costs and PSNR outside the text area. Returns everything the report shows (JSON-able).
 */
export async function measureTextJob(ctx: SuiteContext, options: TextJobOptions) {
  const s = await prepareTextJob(ctx, options);
  const { clip, ingest, video } = s;
  const fontPx = fontPixels(textSetting('x'), clip.height);
  const rounds: RoundResult[] = [];
  let commands = { baseline: [] as string[], wmark: [] as string[] };
  for (let r = 1; r <= options.rounds; r++) {
    const { round, baselineCommand, wmarkCommand } = await runTextRound(s, r);
    rounds.push(round);
    commands = { baseline: baselineCommand, wmark: wmarkCommand };
  }
  const last = rounds[rounds.length - 1]!;
  const fixedCosts = await textFixedCosts(s, last);
  const quality = await textQuality(s, last, fontPx);

  await rm(s.cwd, { recursive: true, force: true });
  if (!options.keep) await rm(s.runDir, { recursive: true, force: true });
  else ctx.log(`kept working files in ${s.runDir}`);
  const figures = textJobFigures(rounds);
  return {
    suite: 'text',
    date: new Date().toISOString(),
    machine: ctx.machine,
    source: { ...clip, bytes: statSync(clip.path).size },
    placement: PLACEMENT,
    fontPx,
    encode: { preset: PRESET, crf: CRF },
    containers: options.containers ?? 'default',
    commands: { baseline: quote(commands.baseline), wmark: quote(commands.wmark) },
    ingest: { wallS: ingest.wallMs / 1000, cpuS: ingest.cpuS, userS: ingest.userS, sysS: ingest.sysS, segments: video.segments, cpuSource: ingest.cpuSource },
    rounds: rounds.map((r) => ({ ...r, baseline: { ...r.baseline, outputDir: undefined }, wmark: { ...r.wmark, outputDir: undefined } })),
    median: figures.median,
    ratio: figures.ratio,
    playable: figures.playable,
    fixedCosts,
    psnr: quality.psnr,
    outputs: quality.outputs,
    x264Diff: quality.x264Diff,
  };
}
