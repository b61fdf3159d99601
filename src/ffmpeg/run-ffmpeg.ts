// Runs ffmpeg as a child process: progress from `-progress pipe:1`, cancellation, and the stderr tail as the failure reason.
import { spawn as spawnChild } from 'node:child_process';
import { WmarkError } from '../core/errors.js';
import { watchChild } from './child-watchdog.js';

export interface FfmpegRunOptions {
  /** Media duration in seconds, to turn out_time into a fraction. */
  durationSeconds?: number;
  onProgress?: (fraction: number) => void;
  signal?: AbortSignal;
  /** Stdout is returned when the command writes media to pipe:1 instead of progress. */
  captureStdout?: boolean;
  /** Report the number of frames written in the result (reads -progress even without onProgress). */
  countFrames?: boolean;
  cwd?: string;
}

export interface FfmpegRunResult {
  stdout: Buffer;
  stderr: string;
  /** Frames written, from the last `-progress` report (only when progress was requested). */
  frames?: number;
}

/** The seam the engine uses for every ffmpeg/ffprobe process, so tests can count or fake invocations. */
export interface ProcessRunner {
  ffmpeg(args: readonly string[], options?: FfmpegRunOptions): Promise<FfmpegRunResult>;
  ffprobe(args: readonly string[], options?: { signal?: AbortSignal }): Promise<FfmpegRunResult>;
}

const STDERR_TAIL = 2000;

export function tail(text: string, max = STDERR_TAIL): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(-max)}`;
}

/** Parses a chunk of `-progress` key=value output: the latest out_time (seconds) and frame count in it. */
export function parseProgress(chunk: string): { time?: number; frames?: number } {
  const out: { time?: number; frames?: number } = {};
  for (const line of chunk.split('\n')) {
    // ffmpeg 4 reports out_time_ms in microseconds too (a long-standing naming bug).
    const t = /^out_time_(?:us|ms)=(\d+)/.exec(line.trim());
    if (t) out.time = Number(t[1]) / 1e6;
    const f = /^frame=(\d+)/.exec(line.trim());
    if (f) out.frames = Number(f[1]);
  }
  return out;
}

/** After a cancel's SIGTERM, a process still running this long is killed outright (ffmpeg may hang on a dead input). */
export const FORCE_KILL_AFTER_MS = 5_000;

interface Finished {
  stdout: Buffer;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawn error (ENOENT: no such binary), when the process never ran. */
  error?: NodeJS.ErrnoException;
}

/**
 * Runs `bin` to its end with node's own child_process (execa cost a cold CLI 80 ms of module loading): stdin closed,
 * stdout and stderr collected (stdout handed to `onStdout` instead when given), SIGTERM on `signal` and SIGKILL
 * FORCE_KILL_AFTER_MS later. Never rejects: the caller reads the outcome.
 */
function runToEnd(bin: string, args: readonly string[], options: { cwd?: string; signal?: AbortSignal; onStdout?: (data: Buffer) => void }): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawnChild(bin, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    // Killed with us, whatever kills us (child-watchdog.ts).
    const release = watchChild(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let spawnError: NodeJS.ErrnoException | undefined;
    let forceKill: NodeJS.Timeout | undefined;
    const onAbort = () => {
      child.kill('SIGTERM');
      forceKill = setTimeout(() => child.kill('SIGKILL'), FORCE_KILL_AFTER_MS);
      forceKill.unref();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (data: Buffer) => (options.onStdout ? options.onStdout(data) : out.push(data)));
    child.stderr.on('data', (data: Buffer) => err.push(data));
    child.on('error', (error: NodeJS.ErrnoException) => (spawnError = error));
    // 'close' (not 'exit'): every byte of both pipes has been read by then.
    child.on('close', (code, signal) => {
      clearTimeout(forceKill);
      options.signal?.removeEventListener('abort', onAbort);
      release();
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), code, signal, ...(spawnError ? { error: spawnError } : {}) });
    });
  });
}

export function createProcessRunner(ffmpegPath: string, ffprobePath: string): ProcessRunner {
  async function spawn(bin: string, args: readonly string[], options: FfmpegRunOptions = {}): Promise<FfmpegRunResult> {
    const wantsProgress = Boolean(options.onProgress || options.countFrames) && !options.captureStdout;
    const fullArgs = wantsProgress ? ['-progress', 'pipe:1', '-nostats', ...args] : [...args];
    let frames: number | undefined;
    let pending = '';
    const onProgressData = (data: Buffer) => {
      // Reports can split across chunks: only parse whole lines.
      pending += data.toString('utf8');
      const cut = pending.lastIndexOf('\n');
      if (cut < 0) return;
      const { time, frames: f } = parseProgress(pending.slice(0, cut));
      pending = pending.slice(cut + 1);
      if (f !== undefined) frames = f;
      if (time !== undefined && options.durationSeconds && options.durationSeconds > 0) {
        options.onProgress?.(Math.max(0, Math.min(1, time / options.durationSeconds)));
      }
    };
    const result = await runToEnd(bin, fullArgs, { cwd: options.cwd, signal: options.signal, ...(wantsProgress ? { onStdout: onProgressData } : {}) });
    const name = bin.includes('ffprobe') ? 'ffprobe' : 'ffmpeg';
    if (options.signal?.aborted) throw new WmarkError('CANCELLED', `${name} was cancelled`);
    if (result.error) {
      if (result.error.code === 'ENOENT') {
        throw new WmarkError('FFMPEG_NOT_FOUND', `${name} not found at ${bin}`, { hint: 'Run `wmark doctor`, or set WMARK_FFMPEG / WMARK_FFPROBE.' });
      }
      throw new WmarkError('FFMPEG_FAILED', `${name} could not be started: ${result.error.message}`);
    }
    if (result.code !== 0) {
      const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
      throw new WmarkError(result.signal ? 'FFMPEG_CRASHED' : 'FFMPEG_FAILED', `${name} ${how}: ${tail(result.stderr, 600) || '(no output)'}`, {
        details: [tail(result.stderr)],
      });
    }
    return { stdout: result.stdout, stderr: result.stderr, frames };
  }
  return {
    ffmpeg: (args, options) => spawn(ffmpegPath, ['-hide_banner', '-nostdin', ...args], options),
    ffprobe: (args, options) => spawn(ffprobePath, ['-hide_banner', ...args], { signal: options?.signal, captureStdout: true }),
  };
}
