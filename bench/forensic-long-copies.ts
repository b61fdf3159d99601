// The forensic-long bench's copies of its title, each made once and kept between runs (--reingest makes them again):
// the forensic ingest and the viewer's copy through the CLI, measured as process trees and recorded in a state file;
// the full-length leak, its excerpts for the scaling runs, and part of a 720p leak.
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FORENSIC_DIR, SIDECAR_NAME } from '../src/engine/data-folder/layout.js';
import { KEY, type LongOptions } from './forensic-long-options.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { dirBytes, even, ffmpeg } from './lib/forensic-media.js';
import { OUT_DIR, type SuiteContext, WMARK_BIN, wmarkEnvironment } from './lib/suite.js';
import { runTreeMeasured, type TreeMeasured } from './lib/tree-measure.js';

export const MB = 1e6;

export interface Timed {
  wallS: number;
  cpuS: number;
  peakProcessMB: number;
  peakTreeMB: number;
}

export const timed = (m: TreeMeasured): Timed => ({
  wallS: m.wallMs / 1000,
  cpuS: m.cpuS,
  peakProcessMB: m.peakProcessRss / MB,
  peakTreeMB: m.peakTreeRss / MB,
});

/** What the state file keeps: the ingest and the viewer's copy. */
export interface State {
  title: string;
  videoId: string;
  segments: number;
  ingest: Timed & { at: string };
  viewer?: { payload: number; id: string; mp4: string } & Timed;
}

/** One leak of the viewer's copy, detected by the CLI. */
export interface Leak {
  name: string;
  file: string;
  minutes: number;
  width: number;
  height: number;
  /** Where it starts in the title, seconds. */
  start: number;
}

/** What every step of a run shares: its options, its folders and how it runs wmark and ffmpeg. */
export interface LongRun {
  o: LongOptions;
  log: (message: string) => void;
  elapsed: () => string;
  ffmpeg: string;
  dataDir: string;
  leakDir: string;
  stateFile: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  wmark: (...a: string[]) => string[];
}

/** ffmpeg, quietly, writing to a temporary name first so an interrupted run leaves no half file. */
async function encodeTo(run: LongRun, args: string[], file: string): Promise<void> {
  await ffmpeg(run.ffmpeg, [...FFMPEG_QUIET, ...args, `${file}.tmp.mp4`]);
  await rename(`${file}.tmp.mp4`, file);
}

/** The run's folders (under bench/out/forensic-long, per title) and wmark's environment. */
export async function startLongRun(ctx: SuiteContext, o: LongOptions, titleFile: string, suiteT0: number): Promise<LongRun> {
  const runDir = path.join(OUT_DIR, 'forensic-long', `run-${path.basename(titleFile, '.mp4')}`);
  const dataDir = path.join(runDir, 'data');
  const leakDir = path.join(runDir, 'leaks');
  if (o.reingest) await rm(runDir, { recursive: true, force: true });
  await mkdir(leakDir, { recursive: true });
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-forensic-long-cwd-');
  return {
    o,
    log: ctx.log,
    elapsed: () => `${((performance.now() - suiteT0) / 60000).toFixed(1)} min`,
    ffmpeg: ctx.tools.ffmpeg.path,
    dataDir,
    leakDir,
    stateFile: path.join(runDir, 'state.json'),
    cwd,
    env,
    wmark: (...a: string[]) => [WMARK_BIN, '--data-dir', dataDir, '--json', ...a],
  };
}

/** `wmark ingest --forensic` of the title, or the one the state file records (if its sidecar is still there). */
export async function ingestOnce(run: LongRun, titleFile: string): Promise<{ state: State; reused: boolean }> {
  const { log, dataDir, stateFile } = run;
  const kept: State | undefined = existsSync(stateFile) ? (JSON.parse(await readFile(stateFile, 'utf8')) as State) : undefined;
  if (kept && kept.title === titleFile && existsSync(path.join(dataDir, 'media', 'videos', kept.videoId, FORENSIC_DIR, SIDECAR_NAME))) {
    log(`reusing the ingest of ${kept.ingest.at} (${stateFile}; --reingest to redo it)`);
    return { state: kept, reused: true };
  }
  await rm(dataDir, { recursive: true, force: true });
  log(`[${run.elapsed()}] wmark ingest --forensic (${run.o.minutes} min) ...`);
  const m = await runTreeMeasured(process.execPath, run.wmark('ingest', titleFile, '--key', KEY, '--forensic'), { cwd: run.cwd, env: run.env, sampleMs: 500 });
  if (m.exitCode !== 0) throw new Error(`wmark ingest --forensic exited ${m.exitCode}\n${m.stderr.slice(-3000)}`);
  const v = JSON.parse(m.stdout) as { id: string; segments: number };
  const state = { title: titleFile, videoId: v.id, segments: v.segments, ingest: { ...timed(m), at: new Date().toISOString() } };
  await writeFile(stateFile, JSON.stringify(state, null, 2));
  log(`  ingest: ${(m.wallMs / 1000).toFixed(0)} s wall, ${m.cpuS.toFixed(0)} s cpu, peak RSS ${(m.peakTreeRss / MB).toFixed(0)} MB (tree)`);
  return { state, reused: false };
}

/** The ingested title's files: its sidecar, and the bytes of its working segments and variants. */
export function titleFiles(run: LongRun, state: State) {
  const videoDir = path.join(run.dataDir, 'media', 'videos', state.videoId);
  const forensicDir = path.join(videoDir, FORENSIC_DIR);
  const sidecarFile = path.join(forensicDir, SIDECAR_NAME);
  return {
    sidecarFile,
    sidecarBytes: statSync(sidecarFile).size,
    workingBytes: dirBytes(videoDir, (f) => f.endsWith('.ts')),
    variantBytes: dirBytes(forensicDir, (f) => f.endsWith('.ts')),
  };
}

/** `wmark watermark --forensic U --containers mp4`, or the copy the state file records for the same payload. */
export async function viewerOnce(run: LongRun, state: State): Promise<NonNullable<State['viewer']>> {
  const { payload } = run.o;
  if (state.viewer && state.viewer.payload === payload && existsSync(state.viewer.mp4)) return state.viewer;
  run.log(`[${run.elapsed()}] wmark watermark --forensic ${payload} --containers mp4 ...`);
  const m = await runTreeMeasured(process.execPath, run.wmark('watermark', '--key', KEY, '--forensic', String(payload), '--containers', 'mp4'), {
    cwd: run.cwd,
    env: run.env,
    sampleMs: 250,
  });
  if (m.exitCode !== 0) throw new Error(`wmark watermark exited ${m.exitCode}\n${m.stderr.slice(-3000)}`);
  const view = JSON.parse(m.stdout) as { id: string; status: string; files: { mp4?: string } };
  if (view.status !== 'READY' || !view.files.mp4) throw new Error(`watermark ${view.id}: status ${view.status}, no mp4`);
  state.viewer = { payload, id: view.id, mp4: view.files.mp4, ...timed(m) };
  await writeFile(run.stateFile, JSON.stringify(state, null, 2));
  // Leaks made from another viewer's copy are stale.
  await rm(run.leakDir, { recursive: true, force: true });
  await mkdir(run.leakDir, { recursive: true });
  return state.viewer;
}

/** The viewer's copy at --leak-scale and --leak-crf (x264 veryfast, audio copied), whole. */
export async function fullLeak(run: LongRun, viewerMp4: string): Promise<Leak> {
  const { width, height, leakScale, leakCrf, minutes } = run.o;
  const [lw, lh] = [even(width * leakScale), even(height * leakScale)];
  const file = path.join(run.leakDir, `leak-${lw}x${lh}-crf${leakCrf}.mp4`);
  if (!existsSync(file)) {
    run.log(`[${run.elapsed()}] the full-length leak: ${lw}x${lh}, CRF ${leakCrf} ...`);
    const video = ['-vf', `scale=${lw}:${lh}`, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(leakCrf), '-threads', '2'];
    await encodeTo(run, ['-i', viewerMp4, '-map', '0:v:0', '-map', '0:a:0?', ...video, '-c:a', 'copy'], file);
  }
  return { name: `${minutes}-min (full)`, file, minutes, width: lw, height: lh, start: 0 };
}

/**
 * The scaling runs' leaks: an excerpt of each --scaling length (cut from the full leak by stream copy, at the keyframe
 * before its start; each starts at another place of the title), the full leak standing for the title's length.
 */
export async function scalingLeaks(run: LongRun, full: Leak): Promise<Leak[]> {
  const { minutes } = run.o;
  const excerptStart = (m: number) => (m === 10 ? 180 : Math.round(((minutes - m) * 60 * 0.37) / 10) * 10);
  const leaks: Leak[] = [];
  for (const m of run.o.scaling) {
    if (m >= minutes) {
      leaks.push({ ...full, name: `${m}-min (full)`, minutes: m });
      continue;
    }
    const start = excerptStart(m);
    const file = path.join(run.leakDir, `excerpt-${m}min-at${start}s.mp4`);
    if (!existsSync(file)) await ffmpeg(run.ffmpeg, [...FFMPEG_QUIET, '-ss', String(start), '-i', full.file, '-t', String(m * 60), '-c', 'copy', file]);
    leaks.push({ name: `${m}-min`, file, minutes: m, width: full.width, height: full.height, start });
  }
  if (!leaks.some((l) => l.file === full.file)) leaks.push(full);
  return leaks;
}

/** --hd-minutes of the viewer's copy scaled up to 1280x720 at --leak-crf: a 720p leak, for its decode rate. */
export async function hdLeak(run: LongRun, viewerMp4: string): Promise<Leak | undefined> {
  const { hdMinutes, minutes, leakCrf } = run.o;
  if (hdMinutes <= 0) return undefined;
  const start = Math.round(((minutes - hdMinutes) * 60 * 0.61) / 10) * 10;
  const file = path.join(run.leakDir, `hd-1280x720-${hdMinutes}min-at${start}s-crf${leakCrf}.mp4`);
  if (!existsSync(file)) {
    run.log(`[${run.elapsed()}] a ${hdMinutes}-min 1280x720 leak (the viewer's copy scaled up, CRF ${leakCrf}) to measure a 720p decode ...`);
    const video = ['-vf', 'scale=1280:720:flags=bicubic', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(leakCrf), '-threads', '2', '-an'];
    await encodeTo(run, ['-ss', String(start), '-i', viewerMp4, '-t', String(hdMinutes * 60), '-map', '0:v:0', ...video], file);
  }
  return { name: `720p ${hdMinutes}-min${hdMinutes >= minutes ? ' (full)' : ''}`, file, minutes: hdMinutes, width: 1280, height: 720, start };
}
