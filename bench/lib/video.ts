// Media helpers for suites: the cached generated source clip, PSNR over a region, x264 settings read from an output.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { SamplePlan } from '../../src/core/plan/sample-clip-args.js';
import { generateVideo } from '../../src/engine/app/sample-video.js';
import type { MediaTools } from '../../src/ffmpeg/locate-tools.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { FFMPEG_MEASURING, FFMPEG_QUIET } from './ffmpeg-args.js';
import { OUT_DIR } from './suite.js';

const execFileP = promisify(execFile);

export interface SourceClip {
  path: string;
  kind: SamplePlan['kind'];
  width: number;
  height: number;
  seconds: number;
  fps: number;
  /** Seconds spent generating it in this run (0 when it came from the cache). */
  generatedSeconds: number;
}

/**
 * The engine's own sample generator, cached under bench/out/: 'natural' (zooming fractal, film grain, a tone: costly to
 * encode, like real footage) unless the spec asks for 'scene' (the demo's landscape: cheap to encode, for long titles).
 */
export async function sourceClip(
  tools: MediaTools,
  spec: Omit<SamplePlan, 'output' | 'kind'> & { kind?: SamplePlan['kind'] },
  log: (m: string) => void,
): Promise<SourceClip> {
  const kind = spec.kind ?? 'natural';
  const output = path.join(OUT_DIR, `source-${kind}-${spec.width}x${spec.height}-${spec.seconds}s-${spec.fps}fps.mp4`);
  let generatedSeconds = 0;
  if (!existsSync(output)) {
    log(
      `generating the ${spec.seconds} s ${spec.width}x${spec.height} ${kind} source clip (one-time cost, cached as ${path.relative(process.cwd(), output)}) ...`,
    );
    const runner = createProcessRunner(tools.ffmpeg.path, tools.ffprobe.path);
    const t0 = performance.now();
    let last = -1;
    await generateVideo(runner, { ...spec, output, kind }, (f) => {
      const pct = Math.floor(f * 10) * 10;
      if (pct !== last) log(`  generating: ${pct}%`);
      last = pct;
    });
    generatedSeconds = (performance.now() - t0) / 1000;
    log(`  generated in ${generatedSeconds.toFixed(1)} s`);
  }
  return { path: output, kind, width: spec.width, height: spec.height, seconds: spec.seconds, fps: spec.fps, generatedSeconds };
}

/** A media file's duration in seconds (ffprobe's container duration). */
export async function mediaDuration(ffprobe: string, file: string): Promise<number> {
  const { stdout } = await execFileP(ffprobe, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', file]);
  return Number(stdout.trim());
}

export interface Region {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PsnrResult {
  y: number;
  u: number;
  v: number;
  average: number;
  min: number;
  max: number;
  /** Frames compared (from the stats file). */
  frames: number;
}

const num = (s: string | undefined) => (s === undefined ? NaN : s === 'inf' ? Infinity : Number(s));

/** PSNR of `distorted` against `reference` over one region of the frame; both are re-timed to start at 0. */
export async function psnr(ffmpeg: string, distorted: string, reference: string, region: Region): Promise<PsnrResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-psnr-'));
  try {
    const crop = `crop=${region.w}:${region.h}:${region.x}:${region.y}`;
    const graph = `[0:v]setpts=PTS-STARTPTS,${crop}[d];[1:v]setpts=PTS-STARTPTS,${crop}[r];[d][r]psnr=stats_file=psnr.log`;
    const { stderr } = await execFileP(
      ffmpeg,
      [...FFMPEG_MEASURING, '-i', path.resolve(distorted), '-i', path.resolve(reference), '-lavfi', graph, '-an', '-f', 'null', '-'],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    );
    const m = /PSNR y:(\S+) u:(\S+) v:(\S+) average:(\S+) min:(\S+) max:(\S+)/.exec(stderr);
    if (!m) throw new Error(`no PSNR line in ffmpeg output:\n${stderr.slice(-1500)}`);
    const stats = await readFile(path.join(dir, 'psnr.log'), 'utf8');
    return {
      y: num(m[1]),
      u: num(m[2]),
      v: num(m[3]),
      average: num(m[4]),
      min: num(m[5]),
      max: num(m[6]),
      frames: stats.trim().split('\n').filter(Boolean).length,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The x264 settings string (the SEI x264 writes into the first frame), as key=value pairs; read from the raw H.264 stream. */
export async function x264Options(ffmpeg: string, file: string): Promise<Record<string, string> | undefined> {
  // MPEG-TS splits the SEI across 188-byte packets, so take the elementary stream out first.
  const { stdout } = await execFileP(ffmpeg, [...FFMPEG_QUIET, '-i', file, '-map', '0:v:0', '-c', 'copy', '-frames:v', '1', '-f', 'h264', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  const text = (stdout as Buffer).toString('latin1');
  const m = /x264 - core \d+[^\0]*? - options: ([ -~]+)/.exec(text);
  if (!m) return undefined;
  return Object.fromEntries(
    m[1]!
      .trim()
      .split(' ')
      .map((kv) => {
        const eq = kv.indexOf('=');
        return eq < 0 ? [kv, ''] : [kv.slice(0, eq), kv.slice(eq + 1)];
      }),
  );
}

/** x264 settings that differ between two outputs, as "key: a vs b". */
export function diffOptions(a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  if (!a || !b) return ['(x264 settings not found in one of the outputs)'];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => a[k] !== b[k]).map((k) => `${k}: ${a[k] ?? '(absent)'} vs ${b[k] ?? '(absent)'}`);
}
