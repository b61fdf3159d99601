// Runs ffmpeg, ffprobe and the patched x264 as child processes: progress from ffmpeg's `-progress pipe:3` (a pipe of
// its own, so stdout stays free for media) or x264's report on stderr, cancellation, a stall watchdog on that progress
// timed by the runner's clock, and the stderr tail as the failure reason.
import { spawn as spawnChild } from 'node:child_process';
import { WmarkError } from '../core/errors.js';
import { watchChild } from './child-watchdog.js';

interface FfmpegRunOptions {
  /** Media duration in seconds, to turn out_time into a fraction. */
  durationSeconds?: number;
  onProgress?: (fraction: number) => void;
  signal?: AbortSignal;
  /** The command writes media to pipe:1, returned as stdout (progress has a pipe of its own). */
  captureStdout?: boolean;
  /** The command streams media to pipe:1: each chunk is handed here as it arrives, and none is kept. */
  onStdout?: (data: Buffer) => void;
  cwd?: string;
}

interface FfmpegRunResult {
  stdout: Buffer;
  stderr: string;
  /** Frames written, from the last `-progress` report (ffmpeg runs that reported any). */
  frames?: number;
}

/** The seam the engine uses for every ffmpeg, ffprobe and x264 process, so tests can count or fake invocations. */
export interface ProcessRunner {
  ffmpeg(args: readonly string[], options?: FfmpegRunOptions): Promise<FfmpegRunResult>;
  ffprobe(args: readonly string[], options?: { signal?: AbortSignal }): Promise<FfmpegRunResult>;
  /** Runs the patched x264 CLI at `bin` (band rendering's encoder); resolves with its stderr (x264's report). */
  x264(bin: string, args: readonly string[], options?: { signal?: AbortSignal; cwd?: string }): Promise<{ stderr: string }>;
}

const STDERR_TAIL = 2000;

export function tail(text: string, max = STDERR_TAIL): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(-max)}`;
}

/** Parses a chunk of `-progress` key=value output: the latest out_time (seconds), frame count and bytes written in it. */
export function parseProgress(chunk: string): { time?: number; frames?: number; bytes?: number } {
  const out: { time?: number; frames?: number; bytes?: number } = {};
  for (const line of chunk.split('\n')) {
    // ffmpeg 4 reports out_time_ms in microseconds too (a long-standing naming bug).
    const t = /^out_time_(?:us|ms)=(\d+)/.exec(line.trim());
    if (t) out.time = Number(t[1]) / 1e6;
    const f = /^frame=(\d+)/.exec(line.trim());
    if (f) out.frames = Number(f[1]);
    const b = /^total_size=(\d+)/.exec(line.trim());
    if (b) out.bytes = Number(b[1]);
  }
  return out;
}

/**
 * ffmpeg reports progress twice a second while its main loop turns. A run whose frame count, output time and output
 * size have not moved for this long is stuck (a filter graph that waits forever on an input that has ended, a hung
 * device) and is killed: the job fails with FFMPEG_STALLED instead of hanging. Every run of wmark's moves within
 * seconds; the longest quiet stretch is a decode that drops frames before its output starts.
 */
const DEFAULT_STALL_MS = 5 * 60_000;

/**
 * Watches a run's progress: `seen` takes each parsed report, `stalledFor(now)` says how long nothing has moved. Pure
 * (the clock is passed in), so the rule is tested without waiting.
 */
export function progressWatch(start: number): {
  seen(report: { time?: number; frames?: number; bytes?: number }, now: number): void;
  stalledFor(now: number): number;
} {
  let last = start;
  let state = '';
  return {
    seen(report, now) {
      const next = `${report.frames ?? ''}/${report.time ?? ''}/${report.bytes ?? ''}`;
      if (next !== state && (report.frames !== undefined || report.time !== undefined || report.bytes !== undefined)) {
        state = next;
        last = now;
      }
    },
    stalledFor: (now) => now - last,
  };
}

/** After a cancel's SIGTERM, a process still running this long is killed outright (ffmpeg may hang on a dead input). */
export const FORCE_KILL_AFTER_MS = 5_000;

export interface Finished {
  stdout: Buffer;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawn error (ENOENT: no such binary), when the process never ran. */
  error?: NodeJS.ErrnoException;
  /** Stopped by the stall watchdog. */
  stalled: boolean;
}

/**
 * Runs `bin` to its end with node's own child_process (loading execa would slow every cold CLI start): stdin closed,
 * stdout (unless handed to `onStdout`) and stderr collected (fd 3 handed to `onProgress` when given),
 * SIGTERM on `signal` or when `stalled()` says so, and SIGKILL FORCE_KILL_AFTER_MS later. Never rejects: the caller
 * reads the outcome.
 */
export function runToEnd(
  bin: string,
  args: readonly string[],
  options: {
    cwd?: string;
    signal?: AbortSignal;
    onProgress?: (data: Buffer) => void;
    onStdout?: (data: Buffer) => void;
    onStderr?: (data: Buffer) => void;
    stalled?: () => boolean;
    checkEveryMs?: number;
  },
): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawnChild(bin, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe', ...(options.onProgress ? (['pipe'] as const) : [])] });
    // Killed with us, whatever kills us (child-watchdog.ts).
    const release = watchChild(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let spawnError: NodeJS.ErrnoException | undefined;
    let forceKill: NodeJS.Timeout | undefined;
    let stalled = false;
    const stop = () => {
      if (forceKill) return;
      child.kill('SIGTERM');
      forceKill = setTimeout(() => child.kill('SIGKILL'), FORCE_KILL_AFTER_MS);
      forceKill.unref();
    };
    const watch = options.stalled
      ? setInterval(() => {
          if (options.stalled!()) {
            stalled = true;
            stop();
          }
        }, options.checkEveryMs ?? 1000)
      : undefined;
    watch?.unref();
    if (options.signal?.aborted) stop();
    else options.signal?.addEventListener('abort', stop, { once: true });
    child.stdout!.on('data', options.onStdout ?? ((data: Buffer) => out.push(data)));
    child.stderr!.on('data', (data: Buffer) => {
      err.push(data);
      options.onStderr?.(data);
    });
    if (options.onProgress) (child.stdio[3] as NodeJS.ReadableStream).on('data', options.onProgress);
    child.on('error', (error: NodeJS.ErrnoException) => (spawnError = error));
    // 'close' (not 'exit'): every byte of every pipe has been read by then.
    child.on('close', (code, signal) => {
      clearTimeout(forceKill);
      clearInterval(watch);
      options.signal?.removeEventListener('abort', stop);
      release();
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), code, signal, stalled, ...(spawnError ? { error: spawnError } : {}) });
    });
  });
}

/** How to tell a user where a tool is missing from. */
const NOT_FOUND_HINTS = {
  ffmpeg: 'Run `wmark doctor`, or set WMARK_FFMPEG / WMARK_FFPROBE.',
  ffprobe: 'Run `wmark doctor`, or set WMARK_FFMPEG / WMARK_FFPROBE.',
  x264: 'Run scripts/build-x264.sh, or set WMARK_X264.',
} as const;

/** Why a run of `name` did not end well (cancelled, stalled, never started, failed), or undefined when it did. */
function runFailure(name: keyof typeof NOT_FOUND_HINTS, bin: string, result: Finished, run: { signal?: AbortSignal; stallMs: number; frames?: number }) {
  if (run.signal?.aborted) return new WmarkError('CANCELLED', `${name} was cancelled`);
  const output = tail(result.stderr, 600) || '(no output)';
  if (result.stalled) {
    const at = name !== 'ffmpeg' ? '' : run.frames !== undefined ? ` (at frame ${run.frames})` : ' (before its first frame)';
    return new WmarkError('FFMPEG_STALLED', `${name} made no progress for ${Math.round(run.stallMs / 1000)} s${at} and was stopped: ${output}`, {
      details: [tail(result.stderr)],
    });
  }
  if (result.error) {
    if (result.error.code === 'ENOENT') return new WmarkError('FFMPEG_NOT_FOUND', `${name} not found at ${bin}`, { hint: NOT_FOUND_HINTS[name] });
    return new WmarkError('FFMPEG_FAILED', `${name} could not be started: ${result.error.message}`);
  }
  if (result.code === 0) return undefined;
  const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
  return new WmarkError(result.signal ? 'FFMPEG_CRASHED' : 'FFMPEG_FAILED', `${name} ${how}: ${output}`, { details: [tail(result.stderr)] });
}

/** How often the stall watchdog looks: a quarter of the stall time, between 50 ms and a second. */
const checkEvery = (stallMs: number) => Math.min(1000, Math.max(50, stallMs / 4));

/**
 * The runner of ffmpeg at `ffmpegPath`, ffprobe at `ffprobePath` and any x264 it is handed. `stallMs`: how long a run
 * may make no progress (DEFAULT_STALL_MS); `now`: the clock of that watch (the engine's or the worker's; the wall
 * clock where none is given).
 */
export function createProcessRunner(ffmpegPath: string, ffprobePath: string, options: { stallMs?: number; now?: () => number } = {}): ProcessRunner {
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const now = options.now ?? Date.now;
  async function spawn(bin: string, args: readonly string[], options: FfmpegRunOptions = {}, progress = false): Promise<FfmpegRunResult> {
    const fullArgs = progress ? ['-progress', 'pipe:3', '-nostats', ...args] : [...args];
    let frames: number | undefined;
    let pending = '';
    const watch = progressWatch(now());
    const onProgressData = (data: Buffer) => {
      // Reports can split across chunks: only parse whole lines.
      pending += data.toString('utf8');
      const cut = pending.lastIndexOf('\n');
      if (cut < 0) return;
      const report = parseProgress(pending.slice(0, cut));
      pending = pending.slice(cut + 1);
      watch.seen(report, now());
      if (report.frames !== undefined) frames = report.frames;
      if (report.time !== undefined && options.durationSeconds && options.durationSeconds > 0) {
        options.onProgress?.(Math.max(0, Math.min(1, report.time / options.durationSeconds)));
      }
    };
    const result = await runToEnd(bin, fullArgs, {
      cwd: options.cwd,
      signal: options.signal,
      onStdout: options.onStdout,
      ...(progress ? { onProgress: onProgressData, stalled: () => watch.stalledFor(now()) > stallMs, checkEveryMs: checkEvery(stallMs) } : {}),
    });
    const failure = runFailure(bin.includes('ffprobe') ? 'ffprobe' : 'ffmpeg', bin, result, { signal: options.signal, stallMs, frames });
    if (failure) throw failure;
    return { stdout: result.stdout, stderr: result.stderr, ...(frames !== undefined ? { frames } : {}) };
  }
  async function x264(bin: string, args: readonly string[], options: { signal?: AbortSignal; cwd?: string } = {}): Promise<{ stderr: string }> {
    // x264 rewrites a progress line on stderr several times a second while frames come out (on by default).
    let lastOutput = now();
    const result = await runToEnd(bin, args, {
      cwd: options.cwd,
      signal: options.signal,
      onStderr: () => {
        lastOutput = now();
      },
      stalled: () => now() - lastOutput > stallMs,
      checkEveryMs: checkEvery(stallMs),
    });
    const failure = runFailure('x264', bin, result, { signal: options.signal, stallMs });
    if (failure) throw failure;
    return { stderr: result.stderr };
  }
  return {
    // Every ffmpeg run reports progress on fd 3: for callers that want it, and for the stall watchdog on all.
    ffmpeg: (args, options) => spawn(ffmpegPath, ['-hide_banner', '-nostdin', ...args], options, true),
    ffprobe: (args, options) => spawn(ffprobePath, ['-hide_banner', ...args], { signal: options?.signal, captureStdout: true }),
    x264,
  };
}
