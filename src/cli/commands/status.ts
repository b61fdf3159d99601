// `wmark status`: is a `wmark serve` running on this data folder (or at --url), and where do its renders go: in its
// own process, or to a render farm's queue (its depth and the workers connected now). Reads the service's /healthz.
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { z } from 'zod';
import { WmarkError } from '../../core/errors.js';
import { action } from '../action.js';
import { flagError } from '../flag-error.js';
import { readServeRecord } from '../serve-record.js';

/**
 * What /healthz answers; the queue only on a farm (see src/farm/farm-renderer.ts). Asked from another machine, the
 * queue's URL, the media store and the workers' ids are left out.
 */
const healthSchema = z.object({
  ok: z.boolean(),
  queue: z
    .object({
      url: z.string().optional(),
      media: z.string().optional(),
      reachable: z.boolean(),
      depth: z.object({ waiting: z.number(), active: z.number() }).nullable(),
      workers: z.array(z.object({ id: z.string().optional(), version: z.string().optional() })).nullable(),
    })
    .optional(),
});

type Health = z.infer<typeof healthSchema>;

export interface ServeStatus extends Health {
  url: string;
  pid?: number;
}

function printStatus(s: ServeStatus, c: ChalkInstance): string {
  const lines = [`${c.bold('wmark serve')} ${c.cyan(s.url)}${s.pid ? c.dim(` (pid ${s.pid})`) : ''}: ${s.ok ? c.green('ok') : c.red('not ok')}`];
  if (!s.queue) {
    lines.push('renders: in its own process (no --queue)');
    return lines.join('\n');
  }
  const q = s.queue;
  lines.push(`render farm: ${q.url ?? c.dim('(where: asked on its own machine only)')} ${q.reachable ? c.green('reachable') : c.red('not answering')}`);
  if (q.depth) lines.push(`  tasks: ${q.depth.waiting} waiting, ${q.depth.active} rendering`);
  if (q.workers) {
    const listed = q.workers.map((w) => [w.id, w.version && `wmark ${w.version}`].filter(Boolean).join(' ') || 'a worker').join(', ');
    lines.push(`  workers: ${q.workers.length ? `${q.workers.length} (${listed})` : c.yellow('none connected (start `wmark worker`)')}`);
  }
  if (q.media) lines.push(`  media: ${q.media}`);
  return lines.join('\n');
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("the running `wmark serve` of this data folder (or --url): healthy, and its render farm's queue and workers")
    .option('--url <url>', 'ask the serve at this URL instead of the one running on the data folder')
    .action(
      action(async (ctx, opts: { url?: string }) => {
        const config = await ctx.loadConfig();
        const record = opts.url ? undefined : readServeRecord(config.dataDir);
        const url = opts.url ?? record?.url;
        if (!url) {
          throw new WmarkError('REMOTE_UNREACHABLE', `no wmark serve runs on ${config.dataDir}`, {
            hint: 'Start `wmark serve`, or give --url of a running one.',
          });
        }
        let origin: string;
        try {
          origin = new URL(url).origin;
        } catch {
          throw flagError('--url', 'an http(s) URL', url);
        }
        let health: Health;
        try {
          const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
          health = healthSchema.parse(await res.json());
        } catch (error) {
          throw new WmarkError('REMOTE_UNREACHABLE', `no answer from ${origin}/healthz: ${(error as Error).message.split('\n')[0]}`, { cause: error });
        }
        const status: ServeStatus = { url: origin, ...(record ? { pid: record.pid } : {}), ...health };
        ctx.output.result(status, (c) => printStatus(status, c));
        return status.ok && (!status.queue || status.queue.reachable) ? 0 : new WmarkError('REMOTE_UNREACHABLE', '').exitCode;
      }),
    );
}
