// `wmark status`: is a `wmark serve` running on this data folder (or at --url), where do its renders go (in its own
// process, or to a render farm's queue: its depth and the workers connected now), and its state database: whether the
// serve's /readyz sees it, and, when this shell has its URL, whether it answers here and at which schema version.
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { localUrl } from '../../core/listen-url.js';
import type { DatabaseReport } from '../../engine/app/installation-checks.js';
import { action } from '../action.js';
import { flagError } from '../flag-error.js';
import type { Health, Readiness, ReadyDependency } from '../serve-health.js';
import { readServeRecord } from '../serve-record.js';

interface ServeStatus extends Health {
  url: string;
  pid?: number;
  /** Whether every dependency of the serve answers, as its /readyz says. */
  ready?: boolean;
  /** Each dependency of the serve (state database, render farm's queue, shared media store) and its state, from /readyz. */
  dependencies?: ReadyDependency[];
  /** The state database: as the serve sees it (`serve`), and as this shell reaches it (when it has the URL). */
  database?: { serve?: ReadyDependency } & Partial<DatabaseReport>;
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

/** One line a dependency: up, or down since when and why (where, when serve tells this caller). */
function printDependencies(dependencies: readonly ReadyDependency[], c: ChalkInstance): string[] {
  if (dependencies.length === 0) return ['dependencies: none (state in a SQLite file, renders in its own process)'];
  return [
    'dependencies:',
    ...dependencies.map((d) => {
      const since = d.downSince === undefined ? '' : ` since ${new Date(d.downSince).toLocaleTimeString()}`;
      const state = d.up ? c.green('up') : c.red(`down${since}${d.reason ? ` (${d.reason})` : ''}`);
      return `  ${d.name}: ${state}${d.location ? c.dim(` ${d.location}`) : ''}`;
    }),
  ];
}

function printDatabase(d: NonNullable<ServeStatus['database']>, c: ChalkInstance): string[] {
  const seen = d.serve;
  const lines = [`state database: ${seen?.location ?? d.database ?? c.dim('(where: asked on its own machine only)')}`];
  if (seen) {
    const since = seen.downSince === undefined ? '' : ` since ${new Date(seen.downSince).toLocaleTimeString()}`;
    lines.push(`  serve's /readyz: ${seen.up ? c.green('up') : c.red(`down${since}${seen.reason ? ` (${seen.reason})` : ''}`)}`);
  }
  if (d.detail !== undefined) lines.push(`  from here: ${d.ok ? c.green(d.detail) : c.red(d.detail)}`);
  else lines.push(c.dim('  from here: not checked (give --db or set WMARK_DB_URL to check it from this shell too)'));
  return lines;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      "the running `wmark serve` of this data folder (or --url): healthy, its render farm's queue and workers, and its state database (as its /readyz sees it, and from here with --db)",
    )
    .option('--url <url>', 'ask the serve at this URL instead of the one running on the data folder')
    .action(
      action(async (ctx, opts: { url?: string }) => {
        const config = await ctx.loadConfig();
        const record = opts.url ? undefined : readServeRecord(config.dataDir);
        const { origin, health } = opts.url
          ? await askUrl(opts.url)
          : await findServe(config.dataDir, [record?.url, config.server.port ? localUrl(config.server.host, config.server.port) : undefined]);
        const status: ServeStatus = { url: origin, ...(record && new URL(record.url).origin === origin ? { pid: record.pid } : {}), ...health };
        const ready = await readiness(origin);
        if (ready) Object.assign(status, { ready: ready.ready, dependencies: ready.dependencies });
        const seen = ready?.dependencies.find((d) => d.name === 'database');
        // pg loads only when there is a database to check.
        const here = config.db ? await (await import('../../engine/app/installation-checks.js')).checkDatabase(config.db.url) : undefined;
        if (seen || here) status.database = { ...(seen ? { serve: seen } : {}), ...here };
        ctx.output.result(status, (c) =>
          [
            printStatus(status, c),
            ...(status.dependencies ? printDependencies(status.dependencies, c) : []),
            ...(status.database ? printDatabase(status.database, c) : []),
          ].join('\n'),
        );
        const healthy = status.ok && (!status.queue || status.queue.reachable) && status.ready !== false && (here?.ok ?? true);
        return healthy ? 0 : new WmarkError('REMOTE_UNREACHABLE', '').exitCode;
      }),
    );
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    throw flagError('--url', 'an http(s) URL', url);
  }
}

async function healthAt(origin: string): Promise<Health> {
  const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
  const { healthSchema } = await import('../serve-health.js');
  return healthSchema.parse(await res.json());
}

async function askUrl(url: string): Promise<{ origin: string; health: Health }> {
  const origin = originOf(url);
  try {
    return { origin, health: await healthAt(origin) };
  } catch (error) {
    throw new WmarkError('REMOTE_UNREACHABLE', `no answer from ${origin}/healthz: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
}

/**
 * The serve of this data folder: where its record says, else at the configured address, since a record can be
 * missing or stale (a serve killed with -9, or a second serve on the folder that has stopped) while a serve answers.
 */
async function findServe(dataDir: string, urls: (string | undefined)[]): Promise<{ origin: string; health: Health }> {
  const candidates = [...new Set(urls.filter((u): u is string => u !== undefined).map(originOf))];
  for (const origin of candidates) {
    try {
      return { origin, health: await healthAt(origin) };
    } catch {
      // Not this one; the next address may answer.
    }
  }
  throw new WmarkError(
    'REMOTE_UNREACHABLE',
    `no wmark serve runs on ${dataDir}${candidates.length ? ` (nothing answers at ${candidates.join(' or ')})` : ''}`,
    {
      hint: 'Start `wmark serve`, or give --url of a running one.',
    },
  );
}

/** The serve's /readyz (200 or 503, both with a body), or undefined when it has none (an older wmark) or no answer. */
async function readiness(origin: string): Promise<Readiness | undefined> {
  try {
    const res = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
    const { readySchema } = await import('../serve-health.js');
    return readySchema.parse(await res.json());
  } catch {
    return undefined;
  }
}
