// Runs the patched x264 CLI (band rendering's encoder) as a child process, under the same rules as ffmpeg: cancellation,
// a stall watchdog fed by its progress lines on stderr, and the stderr tail as the failure reason.
import { WmarkError } from '../core/errors.js';
import { DEFAULT_STALL_MS, runToEnd, tail } from './run-ffmpeg.js';

export interface X264RunOptions {
  signal?: AbortSignal;
  stallMs?: number;
  cwd?: string;
}

/** Runs `x264 args` to its end; resolves with its stderr (x264's report), rejects with a WmarkError. */
export async function runX264(bin: string, args: readonly string[], options: X264RunOptions = {}): Promise<{ stderr: string }> {
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  // x264 rewrites a progress line on stderr several times a second while frames come out (on by default).
  let lastOutput = Date.now();
  const result = await runToEnd(bin, args, {
    cwd: options.cwd,
    signal: options.signal,
    onStderr: () => {
      lastOutput = Date.now();
    },
    stalled: () => Date.now() - lastOutput > stallMs,
    checkEveryMs: Math.min(1000, Math.max(50, stallMs / 4)),
  });
  if (options.signal?.aborted) throw new WmarkError('CANCELLED', 'x264 was cancelled');
  if (result.stalled)
    throw new WmarkError('FFMPEG_STALLED', `x264 made no progress for ${Math.round(stallMs / 1000)} s and was stopped: ${tail(result.stderr, 600)}`);
  if (result.error) {
    if (result.error.code === 'ENOENT')
      throw new WmarkError('FFMPEG_NOT_FOUND', `x264 not found at ${bin}`, { hint: 'Run scripts/build-x264.sh, or set WMARK_X264.' });
    throw new WmarkError('FFMPEG_FAILED', `x264 could not be started: ${result.error.message}`);
  }
  if (result.code !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    throw new WmarkError(result.signal ? 'FFMPEG_CRASHED' : 'FFMPEG_FAILED', `x264 ${how}: ${tail(result.stderr, 600) || '(no output)'}`, {
      details: [tail(result.stderr)],
    });
  }
  return { stderr: result.stderr };
}
