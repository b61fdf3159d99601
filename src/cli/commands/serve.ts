// `wmark serve`: the Video Watermarking Service API (1.0 and 2.0) on top of the local engine.
import path from 'node:path';
import type { Command } from 'commander';
import { redactQueueUrl } from '../../cluster/queue-url.js';
import { WmarkError } from '../../core/errors.js';
import { attachIngestFarm, FARM_INGEST_JOBS } from '../../engine/ingest-farm.js';
import { rememberSharedMedia } from '../../engine/media-publish.js';
import { attachSegmentFarm, FARM_WATERMARK_JOBS, type SegmentFarm } from '../../engine/segment-farm.js';
import { FolderMediaStore } from '../../media/folder-store.js';
import { serverSourcePolicy } from '../../engine/source-policy.js';
import type { RenderMode } from '../../engine/state-store.js';
import type { Engine } from '../../engine/engine.js';
import type { MediaStore } from '../../media/media-store.js';
import { isHttpUrl } from '../../core/http-url.js';
import type { CliContext } from '../context.js';
import { removeServeRecord, writeServeRecord } from '../serve-record.js';
import type { RunningServer } from '../../server/node-server.js';
import { action } from '../action.js';
import { addMediaOptions, mediaFlags, type MediaFlags } from '../media-flags.js';

export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve the watermarking API (1.0 + 2.0), signed HLS/mp4 and the player page')
    .option('--port <port>', 'port to listen on (default 8080; 0 picks a free one)')
    .option('--host <host>', 'interface to bind (default 127.0.0.1)')
    .option('--public-url <url>', 'base URL for the links handed out (default: from the request Host header)')
    .option('--workers <n>', 'ffmpeg worker processes per job (default: number of cores)')
    .option('--render <mode>', 'on-demand: render the opening, then the segments players ask for (default); full: every segment of every watermark')
    .option('--source-root <dir>', 'a folder API clients may ingest local files from (repeatable; default: any file on loopback, none beyond)', collect)
    .option('--cors-origin <origin>', 'an origin whose pages may call the API (repeatable; default *, never with credentials)', collect)
    .option('--queue <url>', 'a render farm: ingests, forensic preparation and segment renders go to `wmark worker`s through this Redis, redis://HOST:PORT (env WMARK_QUEUE_URL)');
  addMediaOptions(command, 'with --queue, the media store shared with the workers (default: this data folder\'s media folder, which workers must mount)')
    .option('--allow-private-sources', 'let API clients ingest http(s) sources on loopback, private or link-local addresses')
    .action(
      action(async (ctx, opts: { port?: string; host?: string; publicUrl?: string; workers?: string; render?: string; sourceRoot?: string[]; allowPrivateSources?: boolean; corsOrigin?: string[]; queue?: string } & MediaFlags) => {
        const render = renderMode(opts.render);
        ctx.setConfigFlags({ port: opts.port, host: opts.host, publicUrl: opts.publicUrl, workers: opts.workers, queue: opts.queue });
        const config = await ctx.loadConfig();
        const media = mediaFlags(opts, config);
        if (media.media && !config.queue) {
          throw new WmarkError('BAD_FLAG', '--media needs --queue: the shared media store is where a render farm\'s workers read and write, and without a farm serve renders into its own data folder', {
            hint: 'Give --queue redis://HOST:PORT too (or set WMARK_QUEUE_URL), or leave out --media (and unset WMARK_MEDIA_URL / media.url).',
          });
        }
        const local = await ctx.localService();
        // Attached before the server starts: the jobs it resumes already publish to the store and render on the farm.
        const store = media.media ? await openSharedMedia(local.engine, media) : undefined;
        const farm = config.queue ? await openFarm(ctx, local.engine, config.queue.url, media).catch((error: unknown) => (store?.close(), Promise.reject(error))) : undefined;
        if (local.listKeys().every((k) => k.revokedOn !== null)) {
          const cred = local.createKey('created by first `wmark serve`');
          ctx.output.info(
            [
              'No API credentials existed, so one pair was created. It is shown only this once:',
              `  client id: ${cred.clientId}`,
              `  API key:   ${cred.apiKey}`,
              'Manage credentials with `wmark auth keys list|create|revoke`.',
            ].join('\n'),
          );
        }
        const server = await (await import('../../server/node-server.js')).startServer({
          engine: local.engine,
          host: config.server.host,
          port: config.server.port,
          publicUrl: config.publicUrl,
          tokenTtlSeconds: config.server.tokenTtlSeconds,
          corsOrigins: opts.corsOrigin,
          render,
          ...(farm ? { watermarkJobConcurrency: FARM_WATERMARK_JOBS, jobConcurrency: FARM_INGEST_JOBS } : {}),
          sourcePolicy: serverSourcePolicy(config.server.host, { sourceRoots: opts.sourceRoot, allowPrivateSources: opts.allowPrivateSources }),
          log: (line: string) => ctx.output.info(line),
        }).catch(async (error: unknown) => {
          await farm?.close();
          store?.close();
          throw listenError(error, config.server.host, config.server.port);
        });
        const dataDir = local.engine.paths.root;
        // Local commands on this data folder sign their links for this address while it runs.
        // Bound to every interface (0.0.0.0, ::), it is reached here through loopback.
        const reachable = server.url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, (_, host: string) => (host === '[::]' ? 'http://[::1]' : 'http://127.0.0.1'));
        await writeServeRecord(dataDir, { url: server.url, baseUrl: config.publicUrl ?? reachable, pid: process.pid, startedOn: new Date().toISOString() });
        try {
          return await serveUntilStopped(ctx, server, dataDir);
        } finally {
          // After the server: its jobs stop waiting first; tasks already queued stay in Redis for the next start.
          await farm?.close();
          store?.close();
          removeServeRecord(dataDir);
        }
      }),
    );
}

async function serveUntilStopped(ctx: CliContext, server: RunningServer, dataDir: string): Promise<number> {
  if (server.resumed) ctx.output.info(`resuming ${server.resumed} unfinished job(s)`);
  if (ctx.output.mode === 'json') ctx.output.line({ url: server.url, dataDir }, () => '');
  else if (ctx.output.mode === 'plain') ctx.io.stdout.write(`${server.url}\n`);
  else ctx.output.result(server.url, (c) => `${c.bold('wmark serve')} listening on ${c.cyan(server.url)}  ${c.dim('(Ctrl-C to stop)')}`);
  await untilAborted(ctx.signal);
  ctx.output.info('shutting down: finishing requests; unfinished jobs resume on the next start');
  await server.close();
  return 0;
}

/** Connects to the farm's Redis (QUEUE_UNREACHABLE, exit 5, when it does not answer) and says how to start workers. */
async function openFarm(ctx: CliContext, engine: Engine, url: string, media: MediaFlags): Promise<SegmentFarm> {
  // BullMQ and the Redis client load only when serve has a farm.
  const { SegmentQueue } = await import('../../cluster/segment-queue.js');
  const queue = await SegmentQueue.open(url);
  const farm = await attachSegmentFarm(engine, queue, url);
  // Sources go to the shared store for the workers, and working segments and variants come back there.
  attachIngestFarm(engine, queue, engine.media ?? new FolderMediaStore(engine.paths.media));
  const store = engine.media ? [`--media ${engine.media.location}`, ...(media.s3Endpoint ? [`--s3-endpoint ${media.s3Endpoint}`] : [])].join(' ') : `--media ${engine.paths.media}`;
  ctx.output.info(
    [
      `render farm: segment renders, ingests and forensic preparation go to ${redactQueueUrl(url)}; this process encodes none itself.`,
      engine.media ? `  media: ${engine.media.location} (rendered segments and mp4s live there only); start workers with:` : `  start workers on machines that mount ${engine.paths.media}:`,
      `  wmark worker --queue ${redactQueueUrl(url)} ${store}`,
    ].join('\n'),
  );
  return farm;
}

/**
 * Opens the store --media names and makes it the engine's (engine.media), after one request that shows it answers
 * (a missing bucket or refused credentials fail here, at start, not at the first render). The data folder's own media
 * folder named as --media is what serve uses anyway: nothing to attach.
 */
async function openSharedMedia(engine: Engine, media: MediaFlags): Promise<MediaStore | undefined> {
  if (media.s3Endpoint !== undefined && !isHttpUrl(media.s3Endpoint)) throw new WmarkError('BAD_FLAG', `--s3-endpoint takes an http(s) URL, e.g. http://minio.internal:9000; got ${JSON.stringify(media.s3Endpoint)}`);
  // Loaded here, not at start: the AWS SDK takes a while to load, which every other command would pay.
  const { openMediaStore } = await import('../../media/open-media-store.js');
  const store = openMediaStore(media.media!, { endpoint: media.s3Endpoint, region: media.s3Region });
  if (store.location === path.resolve(engine.paths.media)) {
    store.close();
    return undefined;
  }
  try {
    // A listing, not a HEAD: S3 answers a HEAD in a missing bucket as a missing object.
    await store.list('wmark-start-check');
  } catch (error) {
    store.close();
    throw error;
  }
  engine.media = store;
  await rememberSharedMedia(engine, { url: media.media!, ...(media.s3Endpoint ? { s3Endpoint: media.s3Endpoint } : {}), ...(media.s3Region ? { s3Region: media.s3Region } : {}) });
  return store;
}

function renderMode(value: string | undefined): RenderMode {
  if (value === undefined || value === 'on-demand' || value === 'full') return value ?? 'on-demand';
  throw new WmarkError('BAD_FLAG', `--render: expected on-demand or full, got "${value}"`);
}

/** A port that cannot be had is the user's to change (exit 2), not a bug. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: string } | undefined)?.code;
  if (code === 'EADDRINUSE') return new WmarkError('PORT_IN_USE', `port ${port} on ${host} is already in use (another wmark serve or another program listens there)`, { cause: error });
  if (code === 'EACCES') return new WmarkError('PORT_NOT_ALLOWED', `not allowed to listen on port ${port} on ${host}`, { cause: error });
  if (code === 'EADDRNOTAVAIL') return new WmarkError('BAD_FLAG', `cannot listen on ${host}: no such address on this machine`, { hint: 'Give --host 127.0.0.1, 0.0.0.0 or an address of this machine.', cause: error });
  return error;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Resolves when the run is interrupted (Ctrl-C, SIGTERM). */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
