// The forensic bench's setup: its folders and clip, the plain and forensic ingests (F8, measured through the CLI), the
// forensic title opened in-process (codebook, layout, sidecar), and the viewers' copies (F4).
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Rng, rng } from '../harness/rng.js';
import { codeword, forensicKey, PAYLOAD_COUNT, packedCodebook } from '../src/core/forensic/keyed-bits.js';
import { decodeSidecar } from '../src/core/forensic/sidecar-format.js';
import { variantFileFor } from '../src/core/forensic/title-layout.js';
import { segmentFileName } from '../src/core/plan/segment-timing.js';
import { FORENSIC_DIR, SIDECAR_NAME } from '../src/engine/data-folder/layout.js';
import { openEngine } from '../src/engine/open/open-engine.js';
import type { VideoRecord } from '../src/engine/state/state-store.js';
import { readTitleLayout } from '../src/engine/watermark/watermark-segments.js';
import type { Ctx } from './forensic-detect.js';
import { ENGINE_ENCODE, FORENSIC_KEY, type ForensicOptions, FPS, PLAIN_KEY, SECONDS, wanted } from './forensic-options.js';
import { dirBytes, warmRead } from './lib/forensic-media.js';
import type { Part } from './lib/forensic-parts.js';
import { type ForensicViewerTiming, measureForensicViewer } from './lib/forensic-viewer.js';
import { fail, runMeasured, settle, waitForQuiet } from './lib/measure.js';
import { OUT_DIR, type SuiteContext, WMARK_BIN, wmarkEnvironment } from './lib/suite.js';
import { type SourceClip, sourceClip } from './lib/video.js';

/** What every part of a run shares: its options, its folders and clip, and how it runs wmark. */
export interface ForensicRun {
  o: ForensicOptions;
  want: (part: Part) => boolean;
  /** Keep the working files (--keep). */
  keep: boolean;
  log: (message: string) => void;
  /** Minutes since the suite started, for the progress lines. */
  elapsed: () => string;
  suiteT0: number;
  ff: string;
  R: Rng;
  clip: SourceClip;
  runDir: string;
  dataDir: string;
  leakDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** wmark's arguments on this run's data folder, with --json. */
  wmark: (...a: string[]) => string[];
  /** Waits for a quiet machine (up to --quiet-wait) before a timed job. */
  quiet: () => Promise<number>;
}

/** The forensic title opened in-process: what detection needs, and what F3, F4 and F8 read of it. */
export interface Title extends Ctx {
  plainVideo: VideoRecord | undefined;
  videoDir: string;
  forensicDir: string;
  sidecarBytes: number;
  key: Buffer;
  codebookS: number;
  variantBytes: number;
  workingBytes: number;
  plainWorkingBytes: number;
}

type TimedIngest = { wallS: number; cpuS: number; id: string; otherCores?: number };
export type Ingests = { plain?: TimedIngest; forensic: TimedIngest; reused?: boolean };

export interface Viewer {
  payload: number;
  id: string;
  mp4: string;
  m3u8: { wallS: number; cpuS: number };
  mp4Join: { wallS: number; cpuS: number };
  playlistBytes: number;
  linkedSegments: number;
  mp4Bytes: number;
}

/** The clip (generated once, cached), a fresh run folder (but with --reuse) and wmark's environment. */
export async function startRun(ctx: SuiteContext, o: ForensicOptions): Promise<ForensicRun> {
  const { tools, log } = ctx;
  const suiteT0 = performance.now();
  const clip = await sourceClip(tools, { width: o.width, height: o.height, seconds: SECONDS, fps: FPS, audio: true }, log);
  const runDir = path.join(OUT_DIR, `forensic-run-${o.height}p${o.layoutChoice === 'whole' ? '' : `-${o.layoutChoice}`}`);
  log(`forensic layout: ${o.layoutChoice}`);
  if (!o.reuse) await rm(runDir, { recursive: true, force: true });
  const dataDir = path.join(runDir, 'data');
  const leakDir = path.join(runDir, 'leaks');
  await mkdir(leakDir, { recursive: true });
  const { cwd, env } = await wmarkEnvironment(ctx, 'bench-forensic-cwd-');
  execFileSync(process.execPath, [WMARK_BIN, '--version'], { env, cwd, stdio: 'ignore' });
  return {
    o,
    want: wanted(o),
    keep: ctx.args.keep,
    log,
    elapsed: () => `${((performance.now() - suiteT0) / 60000).toFixed(1)} min`,
    suiteT0,
    ff: tools.ffmpeg.path,
    R: rng(o.seed),
    clip,
    runDir,
    dataDir,
    leakDir,
    env,
    cwd,
    wmark: (...a: string[]) => [WMARK_BIN, '--data-dir', dataDir, '--json', ...a],
    quiet: () => (o.quietWaitMs > 0 ? waitForQuiet(0.3, o.quietWaitMs, log) : Promise.resolve(0)),
  };
}

/** F8: the plain and the forensic ingest, measured (or those of an earlier run, with --reuse). */
export async function ingestBoth(run: ForensicRun): Promise<Ingests> {
  const { log, o } = run;
  const ingestFile = path.join(run.runDir, 'ingest.json');
  // The plain ingest is there for F8's ratio and F6's unmarked working copy only.
  const needPlain = run.want('f8') || run.want('f6');
  const earlier = o.reuse && existsSync(ingestFile) ? (JSON.parse(await readFile(ingestFile, 'utf8')) as Ingests) : undefined;
  if (earlier && (earlier.plain || !needPlain)) {
    log(`reusing the ingests of an earlier run (${ingestFile})`);
    return { ...earlier, reused: true };
  }
  log('warming the page cache with the source ...');
  await warmRead(run.clip.path);
  const timed = async (label: string, extra: string[], key: string) => {
    log(`[${run.elapsed()}] ${label} ...`);
    settle();
    await run.quiet();
    const m = await runMeasured(process.execPath, run.wmark('ingest', run.clip.path, '--key', key, ...extra), { env: run.env, cwd: run.cwd });
    if (m.exitCode !== 0) fail(label, m);
    const v = JSON.parse(m.stdout) as { id: string; segments: number };
    log(`  ${label}: ${(m.wallMs / 1000).toFixed(1)} s wall, ${m.cpuS.toFixed(1)} s cpu, ${v.segments} segments`);
    return { wallS: m.wallMs / 1000, cpuS: m.cpuS, id: v.id, otherCores: m.foreignCpuS / (m.wallMs / 1000) };
  };
  const plain = needPlain ? await timed('wmark ingest (plain)', [], PLAIN_KEY) : undefined;
  const forensic = earlier?.forensic ?? (await timed(`wmark ingest --forensic-layout ${o.layoutChoice}`, ['--forensic-layout', o.layoutChoice], FORENSIC_KEY));
  const ingest = { ...(plain ? { plain } : {}), forensic, ...(earlier ? { reused: true } : {}) };
  await writeFile(ingestFile, JSON.stringify({ plain: ingest.plain, forensic: ingest.forensic }));
  return ingest;
}

/** Opens the engine on the run's data folder and reads the forensic title: its layout, codebook and sidecar. */
export async function openTitle(run: ForensicRun): Promise<Title> {
  const { dataDir } = run;
  const engine = await openEngine({ dataDir, workers: run.o.threads, encode: { ...ENGINE_ENCODE } });
  const video = (await engine.store.getVideoByKey(FORENSIC_KEY))!;
  const plainVideo = await engine.store.getVideoByKey(PLAIN_KEY);
  const videoDir = path.join(dataDir, 'media', 'videos', video.id);
  const forensicDir = path.join(videoDir, FORENSIC_DIR);
  const sidecarBytes = statSync(path.join(forensicDir, SIDECAR_NAME)).size;
  const sidecar = decodeSidecar(await readFile(path.join(forensicDir, SIDECAR_NAME)));
  const segments = video.segments.length;
  const key = forensicKey(engine.secret);
  const t = performance.now();
  const layout = await readTitleLayout(engine, video);
  const codes = packedCodebook(key, video.id, layout.slots);
  const codebookS = (performance.now() - t) / 1000;
  const segmentBytes = (dir: string) => dirBytes(dir, (f) => f.endsWith('.ts'));
  const title: Title = {
    engine,
    video,
    sidecar,
    codes,
    segments,
    layout,
    plainVideo,
    videoDir,
    forensicDir,
    sidecarBytes,
    key,
    codebookS,
    variantBytes: segmentBytes(forensicDir),
    workingBytes: segmentBytes(videoDir),
    plainWorkingBytes: plainVideo ? segmentBytes(path.join(dataDir, 'media', 'videos', plainVideo.id)) : NaN,
  };
  run.log(`video ${video.id}: ${segments} segments, sidecar ${(sidecarBytes / 1e6).toFixed(2)} MB, codebook ${codebookS.toFixed(2)} s`);
  return title;
}

/** The viewers' payloads: distinct, drawn from the run's seed. */
export function drawPayloads(run: ForensicRun): number[] {
  const payloads: number[] = [];
  while (payloads.length < run.o.payloadCount) {
    const u = run.R.int(PAYLOAD_COUNT);
    if (!payloads.includes(u)) payloads.push(u);
  }
  run.log(`payloads (seed ${run.o.seed}): ${payloads.join(', ')}`);
  return payloads;
}

/** F4: one viewer's copy through the CLI (its playlist, then its mp4), and how many of its segments are hard links. */
async function makeViewer(run: ForensicRun, title: Title, u: number): Promise<Viewer> {
  const { env, cwd } = run;
  const { key, video, layout, segments, forensicDir } = title;
  settle();
  const m1 = await runMeasured(process.execPath, run.wmark('watermark', '--key', FORENSIC_KEY, '--forensic', String(u), '--containers', 'm3u8'), {
    env,
    cwd,
  });
  if (m1.exitCode !== 0) fail('wmark watermark --forensic (m3u8)', m1);
  const m2 = await runMeasured(process.execPath, run.wmark('watermark', '--key', FORENSIC_KEY, '--forensic', String(u), '--containers', 'mp4'), { env, cwd });
  if (m2.exitCode !== 0) fail('wmark watermark --forensic (mp4)', m2);
  const view = JSON.parse(m2.stdout) as { id: string; status: string; files: { dir: string; m3u8?: string; mp4?: string } };
  if (view.status !== 'READY' || !view.files.mp4) throw new Error(`watermark ${view.id}: status ${view.status}, no mp4`);
  const code = codeword(key, video.id, u, layout.slots);
  let linked = 0;
  for (let k = 0; k < segments; k++) {
    const seg = statSync(path.join(view.files.dir, segmentFileName(k)));
    const variant = statSync(path.join(forensicDir, variantFileFor(layout, code, k)));
    if (seg.ino === variant.ino && seg.dev === variant.dev) linked++;
  }
  const m3u8 = path.join(view.files.dir, 'video.m3u8');
  run.log(
    `  viewer ${u}: watermark ${(m1.wallMs / 1000).toFixed(2)} s (m3u8), +${(m2.wallMs / 1000).toFixed(2)} s (mp4 join), ${linked}/${segments} segments are links to variant files`,
  );
  return {
    payload: u,
    id: view.id,
    mp4: view.files.mp4,
    m3u8: { wallS: m1.wallMs / 1000, cpuS: m1.cpuS },
    mp4Join: { wallS: m2.wallMs / 1000, cpuS: m2.cpuS },
    playlistBytes: existsSync(m3u8) ? statSync(m3u8).size : NaN,
    linkedSegments: linked,
    mp4Bytes: statSync(view.files.mp4).size,
  };
}

/** F4: every viewer's copy, one after another. */
export async function makeViewers(run: ForensicRun, title: Title, payloads: number[]): Promise<Viewer[]> {
  const viewers: Viewer[] = [];
  for (const u of payloads) viewers.push(await makeViewer(run, title, u));
  return viewers;
}

/**
 * F4: the per-viewer playlist itself, codeword + writeMediaPlaylist over the video's segments, timed in a child process
 * so this suite's heap (codebooks, decoded frames to come) does not distort tens of microseconds.
 */
export async function timeViewerPlaylist(run: ForensicRun, title: Title): Promise<ForensicViewerTiming> {
  if (!run.want('f4')) return { playlistUs: NaN, playlistWithCodewordUs: NaN, playlistBytes: NaN, segments: NaN, samplesUs: [], samplesWithCodewordUs: [] };
  return measureForensicViewer({
    keyHex: title.key.toString('hex'),
    videoId: title.video.id,
    layoutVersion: title.layout.version,
    slotsPerSegment: title.layout.slotsPerSegment,
    segments: title.video.segments,
    iterations: 2000,
  });
}
