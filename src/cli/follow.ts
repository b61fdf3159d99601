// Shows a job's progress stream: a spinner with the elapsed time at a terminal; elsewhere (CI logs) one stderr line per
// status or stage change and every 10 % of segments; nothing with --json.
import { WmarkError } from '../core/errors.js';
import { formatSeconds } from '../remote/client.js';
import { lastOf } from '../service/watch.js';
import type { VideoProgress, WatermarkProgress, WatermarkResource } from '../service/watermark-service.js';
import type { CliContext } from './context.js';

export interface FollowOptions {
  /** Prefix of every line ("watermark", "line 3"). */
  label: string;
  /** Said in plain mode when the status changes and nothing finer is known (a remote service being polled). */
  pollEveryMs?: number;
}

/** Consumes a watch to its end while showing it; returns the last state. */
export async function follow<T>(ctx: CliContext, states: AsyncIterable<T>, describe: (state: T) => Described, options: FollowOptions): Promise<T> {
  const started = Date.now();
  const out = ctx.output;
  let current = 'waiting';
  let lastLine: string | undefined;
  let lastTenth = -1;
  const show = () => out.progress(`${options.label}: ${current}  ${formatSeconds(Date.now() - started)}`);
  const ticker = out.interactive ? setInterval(show, 1000) : undefined;
  try {
    return await lastOf(states, (state) => {
      const d = describe(state);
      current = d.detail ? `${d.status}, ${d.detail}` : d.status;
      if (out.interactive) return show();
      if (out.mode === 'json') return;
      const line = `${d.status}|${d.stage ?? ''}`;
      const tenth = d.tenths ?? -1;
      if (line !== lastLine) {
        lastLine = line;
        lastTenth = tenth;
        const polling = d.detail === undefined && options.pollEveryMs !== undefined ? `, polling every ${formatSeconds(options.pollEveryMs)}` : '';
        out.info(`${options.label}: ${current}${polling}`);
      } else if (tenth > lastTenth) {
        lastTenth = tenth;
        out.info(`${options.label}: ${current}`);
      }
    });
  } finally {
    if (ticker) clearInterval(ticker);
    out.stopSpinner();
  }
}

/** A state as the display needs it: status and stage decide when a plain line is due, tenths of the work too. */
export interface Described {
  status: string;
  stage?: string;
  /** The text after the status ("rendering 3/15 segments"). */
  detail?: string;
  tenths?: number;
}

/**
 * A watermark's progress in words that say what happens. The API calls a watermark READY as soon as it plays; while
 * the rest still renders, that reads "playable, rendering 3/7 segments" rather than "READY, rendering ...". The mp4
 * join is one step, not a count.
 */
export function describeWatermark(p: WatermarkProgress): Described {
  if (!p.stage) return { status: p.status };
  const status = p.status === 'READY' && !p.final ? 'playable' : p.status;
  if (p.stage === 'joining mp4') return { status, stage: p.stage, detail: 'joining the segments into the mp4' };
  if (p.total === undefined || p.done === undefined || p.total === 0) return { status, stage: p.stage, detail: p.stage };
  return { status, stage: p.stage, detail: `${p.stage} ${p.done}/${p.total} segments`, tenths: Math.floor((10 * p.done) / p.total) };
}

export function describeVideo(p: VideoProgress): Described {
  const status = p.video.status ?? 'unknown';
  if (!p.stage) return { status };
  if (p.fraction === undefined) return { status, stage: p.stage, detail: p.stage };
  return { status, stage: p.stage, detail: `${p.stage} ${Math.round(p.fraction * 100)}%`, tenths: Math.floor(p.fraction * 10) };
}

/** FAILED is a result, printed on stdout like READY, but the exit code says the job failed (6). */
export function failedExit(ctx: CliContext, resource: WatermarkResource): number {
  if (resource.status !== 'FAILED') return 0;
  ctx.output.warn(`the watermark job FAILED${typeof resource.error === 'string' ? `: ${resource.error}` : ''}`);
  return new WmarkError('WATERMARK_FAILED', 'watermark failed').exitCode;
}
