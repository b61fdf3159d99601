// `wmark poll <href>`: follow a watermark's signed href (the 1.0 long-poll link) until READY or FAILED, with a
// spinner and the elapsed time at a terminal and one line per status change elsewhere.
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { action } from '../action.js';
import { describeWatermark, failedExit, follow } from '../follow.js';
import { DEFAULT_TIMEOUT, durationFlag, httpClient } from '../remote-flags.js';
import { renderWatermark } from '../render.js';

export function registerPoll(program: Command): void {
  program
    .command('poll')
    .description("poll a watermark's signed long-poll href (1.0) until READY or FAILED")
    .argument('<href>', 'the href from a watermark response')
    .option('--interval <duration>', 'time between polls (default 3s, as the API advises)')
    .option('--timeout <duration>', `give up after this long, exit 124 (default ${DEFAULT_TIMEOUT})`)
    .action(
      action(async (ctx, href: string, opts: { interval?: string; timeout?: string }) => {
        let url: URL;
        try {
          url = new URL(href);
        } catch {
          throw new WmarkError('BAD_HREF', `expected the href URL from a watermark response, got "${href}"`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WmarkError('BAD_HREF', `expected an http(s) URL, got "${href}"`);
        const { DEFAULT_POLL_INTERVAL_MS, watchHref } = await import('../../remote/remote-service.js');
        const intervalMs = opts.interval !== undefined ? durationFlag(opts.interval, '--interval') : DEFAULT_POLL_INTERVAL_MS;
        const timeout = opts.timeout ?? DEFAULT_TIMEOUT;
        const deadline = Date.now() + durationFlag(timeout, '--timeout');
        const started = Date.now();
        const states = watchHref(
          httpClient(ctx),
          { status: 'PENDING', href },
          { intervalMs, deadline, timeoutLabel: `--timeout (now ${timeout})`, signal: ctx.signal },
        );
        const last = await follow(ctx, states, describeWatermark, { label: 'watermark', pollEveryMs: intervalMs });
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        ctx.output.result(last.resource, (c) => renderWatermark(last.resource, c, `after ${seconds} s`));
        return failedExit(ctx, last.resource);
      }),
    );
}
