// `wmark poll <href>`: follow a signed long-poll link until READY or FAILED (spinner with elapsed time on a TTY, nothing animated elsewhere).
import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { WmarkError } from '../../core/errors.js';
import { HttpClient, formatSeconds } from '../../remote/client.js';
import { DEFAULT_POLL_INTERVAL_MS, pollHref } from '../../remote/poll.js';
import type { RemoteWatermark } from '../../remote/schemas.js';
import type { CliContext } from '../context.js';
import { action } from '../program.js';
import { VERSION } from '../version.js';
import { DEFAULT_TIMEOUT, parseDuration } from './remote-common.js';

interface PollOptions {
  interval?: string;
  timeout?: string;
}

export function registerPoll(program: Command): void {
  program
    .command('poll')
    .description('poll a watermark\'s signed long-poll href (1.0) until READY or FAILED')
    .argument('<href>', 'the href from a watermark response')
    .option('--interval <duration>', 'time between polls (default 3s, as SPEC 4.3)')
    .option('--timeout <duration>', `give up after this long, exit 124 (default ${DEFAULT_TIMEOUT})`)
    .action(action(pollAction));
}

async function pollAction(ctx: CliContext, href: string, opts: PollOptions): Promise<number> {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new WmarkError('BAD_HREF', `expected the href URL from a watermark response, got "${href}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WmarkError('BAD_HREF', `expected an http(s) URL, got "${href}"`);
  const intervalMs = opts.interval !== undefined ? parseDuration(opts.interval, '--interval') : DEFAULT_POLL_INTERVAL_MS;
  const timeout = opts.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = parseDuration(timeout, '--timeout');
  const client = new HttpClient({ signal: ctx.signal, userAgent: `wmark/${VERSION}`, onRetry: (n) => ctx.output.info(`${n.reason} from ${n.request}; retrying in ${formatSeconds(n.delayMs)}`) });
  const result = await pollWithProgress(ctx, client, href, { intervalMs, deadline: Date.now() + timeoutMs, timeoutLabel: `--timeout (now ${timeout})` });
  ctx.output.result(result.response, (c) => renderPolled(result.response, result.elapsedMs, c));
  return failedExit(ctx, result.response);
}

/** Polls with a live spinner ("PENDING 12 s") at a terminal; elsewhere one stderr line per status change. */
export async function pollWithProgress(ctx: CliContext, client: HttpClient, href: string, options: { intervalMs: number; deadline: number; timeoutLabel: string; label?: string }) {
  const started = Date.now();
  const prefix = options.label ? `${options.label}: ` : '';
  let status = 'waiting';
  let lastReported: string | undefined;
  const show = () => ctx.output.progress(`${prefix}${status}  ${formatSeconds(Date.now() - started)}`);
  const ticker = ctx.output.interactive ? setInterval(show, 1000) : undefined;
  if (ctx.output.interactive) show();
  try {
    return await pollHref(client, href, {
      intervalMs: options.intervalMs,
      deadline: options.deadline,
      timeoutLabel: options.timeoutLabel,
      signal: ctx.signal,
      onStatus: (s) => {
        status = s;
        if (ctx.output.interactive) show();
        else if (s !== lastReported && ctx.output.mode !== 'json') ctx.output.info(`${prefix}${s}, polling every ${formatSeconds(options.intervalMs)}`);
        lastReported = s;
      },
    });
  } finally {
    if (ticker) clearInterval(ticker);
    ctx.output.stopSpinner();
  }
}

/** FAILED is a result, printed on stdout like READY, but the exit code says the job failed (6). */
export function failedExit(ctx: CliContext, response: RemoteWatermark): number {
  if (response.status !== 'FAILED') return 0;
  const reason = typeof response.error === 'string' ? `: ${response.error}` : '';
  ctx.output.warn(`the watermark job FAILED${reason}`);
  return new WmarkError('WATERMARK_FAILED', 'watermark failed').exitCode;
}

export function renderPolled(r: RemoteWatermark, elapsedMs: number, c: ChalkInstance): string {
  return renderRemoteWatermark(r, c, `after ${formatSeconds(elapsedMs)}`);
}

export function renderRemoteWatermark(r: RemoteWatermark, c: ChalkInstance, note?: string): string {
  const status = r.status === 'READY' ? c.green(r.status) : r.status === 'FAILED' ? c.red(r.status) : c.yellow(r.status);
  const containers = r.containers ?? {};
  return [
    `${c.bold('watermark')} ${typeof r.id === 'string' ? `${r.id}  ` : ''}${status}${note ? c.dim(`  (${note})`) : ''}`,
    ...(containers.href ? [`  player    ${containers.href}`] : []),
    ...(containers.m3u8 ? [`  playlist  ${containers.m3u8}`] : r.status === 'PENDING' ? [`  playlist  ${c.dim('(listed once READY)')}`] : []),
    ...(containers.mp4 ? [`  mp4       ${containers.mp4}`] : []),
    ...(r.href ? [`  href      ${r.href}`] : []),
    ...(typeof r.error === 'string' ? [`  error     ${c.red(r.error)}`] : []),
  ].join('\n');
}
