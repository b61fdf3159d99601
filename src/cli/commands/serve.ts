// `wmark serve`: the Video Watermarking Service API (1.0 and 2.0) on top of the local engine.
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { parseTrustedProxies } from '../../core/forwarded-for.js';
import { isWildcardHost } from '../../core/listen-url.js';
import type { ServerServiceOptions } from '../../engine/app/server-service.js';
import { redactQueueUrl } from '../../farm/queue-url.js';
import type { RunningServer } from '../../server/app/node-server.js';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import { announceFirstKey } from '../first-key.js';
import { flagError } from '../flag-error.js';
import { addMediaOptions, type MediaFlags, mediaFlags } from '../media-flags.js';
import { type ServeLog, serveLog } from '../serve-log.js';
import { recordServe } from '../serve-record.js';
import { whenAborted } from '../signals.js';

export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve the watermarking API (1.0 + 2.0), signed HLS/mp4 and the player page')
    .option('--port <port>', 'port to listen on (default 8080; 0 picks a free one)')
    .option('--host <host>', 'interface to bind (default 127.0.0.1)')
    .option('--public-url <url>', 'base URL for the links handed out, as clients reach serve (default: where serve listens; env WMARK_PUBLIC_URL)')
    .option('--trust-proxy <list>', 'proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client (env WMARK_TRUST_PROXY)')
    .option('--workers <n>', 'ffmpeg worker processes per job (default: number of cores)')
    .option('--render <mode>', 'on-demand: render the opening, then the segments players ask for (default); full: every segment of every watermark')
    .option('--source-root <dir>', 'a folder API clients may ingest local files from (repeatable; default: any file on loopback, none beyond)', collect)
    .option('--cors-origin <origin>', 'an origin whose pages may call the API (repeatable; default *, never with credentials)', collect)
    .option(
      '--queue <url>',
      'a render farm: ingests, forensic preparation and segment renders go to `wmark worker`s through this Redis, redis://HOST:PORT (env WMARK_QUEUE_URL)',
    );
  addMediaOptions(command, "with --queue, the media store shared with the workers (default: this data folder's media folder, which workers must mount)")
    .option('--allow-private-sources', 'let API clients ingest http(s) sources on loopback, private or link-local addresses')
    .option('--shutdown-timeout <seconds>', 'on SIGTERM or Ctrl-C, how long requests in flight get to finish (default 10; env WMARK_SHUTDOWN_TIMEOUT)')
    .option('--metrics-public', 'GET /metrics answers callers on other machines too (default: this machine only; env WMARK_METRICS_PUBLIC)')
    .option(
      '--drain-seconds <seconds>',
      'on SIGTERM or Ctrl-C, first answer /readyz 503 and keep serving this long, so a load balancer moves on (default 0; env WMARK_DRAIN_SECONDS)',
    )
    .option('--auth-ipv6-prefix <bits>', 'failed credential checks are counted per IPv6 prefix of this many bits (default 64; env WMARK_AUTH_IPV6_PREFIX)')
    .action(action(runServe));
}

interface ServeFlags extends MediaFlags {
  port?: string;
  host?: string;
  publicUrl?: string;
  trustProxy?: string;
  workers?: string;
  render?: string;
  sourceRoot?: string[];
  allowPrivateSources?: boolean;
  corsOrigin?: string[];
  queue?: string;
  shutdownTimeout?: string;
  metricsPublic?: boolean;
  drainSeconds?: string;
  authIpv6Prefix?: string;
}

type ServeConfig = Awaited<ReturnType<CliContext['loadConfig']>>;

/** Opens the engine (on a render farm with --queue), starts the API server on it, and serves until stopped. */
async function runServe(ctx: CliContext, opts: ServeFlags): Promise<number> {
  const render = renderMode(opts.render);
  ctx.setConfigFlags({
    port: opts.port,
    host: opts.host,
    publicUrl: opts.publicUrl,
    trustProxy: opts.trustProxy,
    workers: opts.workers,
    queue: opts.queue,
    shutdownTimeout: opts.shutdownTimeout,
    metricsPublic: opts.metricsPublic,
    drainSeconds: opts.drainSeconds,
    authIpv6Prefix: opts.authIpv6Prefix,
  });
  const config = await ctx.loadConfig();
  const media = mediaFlags(opts, config);
  if (media.media && !config.queue) {
    throw new WmarkError(
      'BAD_FLAG',
      "--media needs --queue: the shared media store is where a render farm's workers read and write, and without a farm serve renders into its own data folder",
      {
        hint: 'Give --queue redis://HOST:PORT too (or set WMARK_QUEUE_URL), or leave out --media (and unset WMARK_MEDIA_URL / media.url).',
      },
    );
  }
  // The deployment is chosen before the engine is built: a farm's queue and store are connected first.
  const farm = config.queue ? await connectFarm(config.queue.url, config.dataDir, media) : undefined;
  const engine = await ctx.openEngine(farm ? { deployment: farm.deployment } : {}).catch(async (error: unknown) => {
    await farm?.abandon();
    throw error;
  });
  // JSON lines when stderr is not a terminal (a service manager, a container), readable ones at a terminal.
  const logs = serveLog(ctx.io, ctx.output);
  const { log } = logs;
  const server = await startApiServer(engine, config, opts, render, logs);
  const local = server.service;
  describeLinks(log, config.server.host, config.publicUrl, server.linkBase);
  if (config.server.trustProxy) log(`client addresses: from X-Forwarded-For on requests through ${config.server.trustProxy}`);
  if (farm) await describeFarm(logs, local.dataDir, config.queue!.url, media, farm.shared?.location);
  // Named without its password, like every URL serve prints.
  if (config.db) log(`state: ${await local.operations.stateDatabase()}`);
  // Shown once as it always was, never as a log record: a log collector keeps no API key.
  await announceFirstKey(ctx, local, 'serve');
  const dataDir = local.dataDir;
  // Local commands on this data folder sign their links for this address while it runs.
  const forget = await recordServe(dataDir, server, 'wmark serve');
  try {
    return await serveUntilStopped(ctx, logs, server, dataDir, {
      drainSeconds: config.server.drainSeconds,
      shutdownSeconds: config.shutdownTimeoutSeconds,
    });
  } finally {
    forget();
  }
}

/** The HTTP server on the engine, with the server settings of the config and the flags; a port in use says so. */
async function startApiServer(
  engine: Awaited<ReturnType<CliContext['openEngine']>>,
  config: ServeConfig,
  opts: ServeFlags,
  render: RenderMode,
  logs: ServeLog,
): Promise<RunningServer> {
  const { log } = logs;
  const [{ startServer }, { serverService }] = await Promise.all([import('../../server/app/node-server.js'), import('../../engine/app/server-service.js')]);
  return startServer({
    service: serverService(engine, {
      host: config.server.host,
      render,
      sources: { sourceRoots: opts.sourceRoot, allowPrivateSources: opts.allowPrivateSources },
      log,
    }),
    host: config.server.host,
    port: config.server.port,
    publicUrl: config.publicUrl,
    // Validated with the rest of the config.
    trustProxy: config.server.trustProxy === undefined ? undefined : parseTrustedProxies(config.server.trustProxy),
    tokenTtlSeconds: config.server.tokenTtlSeconds,
    corsOrigins: opts.corsOrigin,
    metricsPublic: config.server.metricsPublic,
    authLimit: { ipv6PrefixBits: config.server.authIpv6Prefix },
    log,
    logRequest: (record) => logs.logRequest(record),
  }).catch((error: unknown) => {
    throw listenError(error, config.server.host, config.server.port);
  });
}

async function serveUntilStopped(
  ctx: CliContext,
  logs: ServeLog,
  server: RunningServer,
  dataDir: string,
  { drainSeconds, shutdownSeconds }: { drainSeconds: number; shutdownSeconds: number },
): Promise<number> {
  if (server.resumed) logs.log(`resuming ${server.resumed} unfinished job(s)`);
  if (ctx.output.mode === 'json') ctx.output.line({ url: server.url, dataDir }, () => '');
  else if (ctx.output.mode === 'plain') ctx.io.stdout.write(`${server.url}\n`);
  else ctx.output.result(server.url, (c) => `${c.bold('wmark serve')} listening on ${c.cyan(server.url)}  ${c.dim('(Ctrl-C to stop)')}`);
  await whenAborted(ctx.signal);
  // A drain first (a rolling restart behind a load balancer): /readyz says 503 while every request is still answered.
  const drain = drainSeconds > 0 ? `draining for ${drainSeconds} s (/readyz answers 503, requests are still answered), then ` : '';
  logs.log(
    `shutting down: ${drain}requests in flight get ${shutdownSeconds} s; unfinished jobs resume on the next start (Ctrl-C or SIGTERM again stops at once)`,
  );
  await server.close({ timeoutMs: shutdownSeconds * 1000, drainMs: drainSeconds * 1000 });
  return 0;
}

/** A server bound to every interface signs its links for loopback unless told the address clients use: say so once. */
function describeLinks(log: (line: string) => void, host: string, publicUrl: string | undefined, linkBase: string): void {
  if (publicUrl !== undefined || !isWildcardHost(host)) return;
  log(
    `links name ${linkBase}, which only this machine reaches: clients on other machines need --public-url (the address they use, e.g. https://videos.example.com)`,
  );
}

/** Connects to the farm's Redis (QUEUE_UNREACHABLE, exit 5, when it does not answer) and its shared store. */
async function connectFarm(url: string, dataDir: string, media: MediaFlags) {
  // BullMQ and the Redis client (and the AWS SDK, for a bucket) load only when serve has a farm.
  const farm = await import('../../farm/farm-deployment.js');
  return farm.connectFarm({ queueUrl: url, dataDir, media });
}

/** Says where the farm's work goes and how to start its workers, and writes down a shared store for later commands. */
async function describeFarm(logs: ServeLog, dataDir: string, url: string, media: MediaFlags, shared: string | undefined): Promise<void> {
  const { mediaFolder, rememberSharedStore } = await import('../../engine/app/data-folder-files.js');
  if (shared)
    await rememberSharedStore(dataDir, {
      url: media.media!,
      ...(media.s3Endpoint ? { s3Endpoint: media.s3Endpoint } : {}),
      ...(media.s3Region ? { s3Region: media.s3Region } : {}),
    });
  const folder = mediaFolder(dataDir);
  const store = shared ? [`--media ${shared}`, ...(media.s3Endpoint ? [`--s3-endpoint ${media.s3Endpoint}`] : [])].join(' ') : `--media ${folder}`;
  logs.log(
    [
      `render farm: segment renders, ingests and forensic preparation go to ${redactQueueUrl(url)}; this process encodes none itself.`,
      shared ? `  media: ${shared} (rendered segments and mp4s live there only); start workers with:` : `  start workers on machines that mount ${folder}:`,
      `  wmark worker --queue ${redactQueueUrl(url)} ${store}`,
    ].join('\n'),
  );
}

/** How `serve` renders new watermarks (--render). */
type RenderMode = NonNullable<ServerServiceOptions['render']>;

function renderMode(value: string | undefined): RenderMode {
  if (value === undefined || value === 'on-demand' || value === 'full') return value ?? 'on-demand';
  throw flagError('--render', 'on-demand or full', value);
}

/** A port that cannot be had is the user's to change (exit 2), not a bug. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: string } | undefined)?.code;
  if (code === 'EADDRINUSE')
    return new WmarkError('PORT_IN_USE', `port ${port} on ${host} is already in use (another wmark serve or another program listens there)`, { cause: error });
  if (code === 'EACCES') return new WmarkError('PORT_NOT_ALLOWED', `not allowed to listen on port ${port} on ${host}`, { cause: error });
  if (code === 'EADDRNOTAVAIL')
    return new WmarkError('BAD_FLAG', `cannot listen on ${host}: no such address on this machine`, {
      hint: 'Give --host 127.0.0.1, 0.0.0.0 or an address of this machine.',
      cause: error,
    });
  return error;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
