// Runs ffmpeg as a child process: progress from `-progress pipe:1`, cancellation, and the stderr tail as the failure reason.
import { execa } from 'execa';
import { WmarkError } from '../core/errors.js';

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

export function createProcessRunner(ffmpegPath: string, ffprobePath: string): ProcessRunner {
  async function spawn(bin: string, args: readonly string[], options: FfmpegRunOptions = {}): Promise<FfmpegRunResult> {
    const wantsProgress = Boolean(options.onProgress || options.countFrames) && !options.captureStdout;
    const fullArgs = wantsProgress ? ['-progress', 'pipe:1', '-nostats', ...args] : [...args];
    const child = execa(bin, fullArgs, {
      cancelSignal: options.signal,
      encoding: 'buffer',
      reject: false,
      stdin: 'ignore',
      cwd: options.cwd,
      maxBuffer: 1024 * 1024 * 1024,
    });
    let frames: number | undefined;
    if (wantsProgress && child.stdout) {
      let pending = '';
      child.stdout.on('data', (data: Buffer) => {
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
      });
    }
    const result = await child;
    const stderr = Buffer.from(result.stderr as Uint8Array).toString('utf8');
    if (result.isCanceled || options.signal?.aborted) {
      throw new WmarkError('CANCELLED', `${bin.endsWith('ffprobe') ? 'ffprobe' : 'ffmpeg'} was cancelled`);
    }
    if (result.failed) {
      const name = bin.includes('ffprobe') ? 'ffprobe' : 'ffmpeg';
      const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
      if ((result as { code?: string }).code === 'ENOENT' || /ENOENT/.test(String(result.message))) {
        throw new WmarkError('FFMPEG_NOT_FOUND', `${name} not found at ${bin}`, { hint: 'Run `wmark doctor`, or set WMARK_FFMPEG / WMARK_FFPROBE.' });
      }
      throw new WmarkError(result.signal ? 'FFMPEG_CRASHED' : 'FFMPEG_FAILED', `${name} ${how}: ${tail(stderr, 600) || '(no output)'}`, {
        details: [tail(stderr)],
      });
    }
    return { stdout: wantsProgress ? Buffer.alloc(0) : Buffer.from(result.stdout as Uint8Array), stderr, frames };
  }
  return {
    ffmpeg: (args, options) => spawn(ffmpegPath, ['-hide_banner', '-nostdin', ...args], options),
    ffprobe: (args, options) => spawn(ffprobePath, ['-hide_banner', ...args], { signal: options?.signal, captureStdout: true }),
  };
}
