// `wmark demo`: the whole product on the built-in sample: generate and ingest it, start the service, create a
// watermark through the HTTP API with the same client remote mode uses, wait until it plays, print the player link.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { parseVideoRequest, parseWatermarkOrder } from '../../core/api-requests.js';
import { WmarkError } from '../../core/errors.js';
import type { Engine } from '../../engine/app/configured-engine.js';
import type { LocalService } from '../../engine/app/local-service.js';
import { HttpClient } from '../../remote/client.js';
import type { RunningServer } from '../../server/app/node-server.js';
import { lastOf } from '../../service/watch.js';
import type { WatermarkResource } from '../../service/watermark-service.js';
import { VERSION } from '../../version.js';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import { announceFirstKey, DEMO_LABEL } from '../first-key.js';
import { describeVideo, describeWatermark, follow } from '../follow.js';
import { recordServe } from '../serve-record.js';
import { whenAborted } from '../signals.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the whole product on a generated sample: ingest, serve, watermark through the API, print the player link')
    .option('--viewer <name>', 'viewer name drawn on the video', 'Ada Lovelace')
    .option('--email <email>', 'viewer email drawn on the video', 'ada@example.com')
    .option('--port <port>', 'port for the service (default 8080, or a free one when taken)')
    .option('--keep-serving', 'keep serving after the watermark is ready (default on a terminal; Ctrl-C stops)')
    .option('--no-keep-serving', 'exit once the watermark is ready')
    .action(action((ctx, opts: { viewer: string; email: string; port?: string; keepServing?: boolean }) => demo(ctx, opts)));
}

async function demo(ctx: CliContext, opts: { viewer: string; email: string; port?: string; keepServing?: boolean }): Promise<number> {
  ctx.setConfigFlags({ port: opts.port });
  const config = await ctx.loadConfig();
  const engine = await ctx.openEngine();
  const local = await ctx.localService();
  const { sample, video } = await ingestSample(ctx, engine, local);

  ctx.output.stage('3/4 starting wmark serve');
  const server = await listen(engine, config.server.host, config.server.port, config.publicUrl, config.server.tokenTtlSeconds);
  const port = new URL(server.url).port;
  if (config.server.port !== 0 && String(config.server.port) !== port)
    ctx.output.info(`port ${config.server.port} is in use, so the demo serves on port ${port}: its links name that port`);
  await announceFirstKey(ctx, local, 'demo');
  // While it serves, local commands on this data folder sign their links for it, as with `wmark serve`.
  const forget = await recordServe(local.dataDir, server, 'wmark demo');
  try {
    const api = await demoClient(ctx, server.url, local);
    ctx.output.stage(`4/4 POST ${server.url}/1.0/watermark for ${opts.viewer}`);
    const started = Date.now();
    const settings = demoSettings(opts.viewer, opts.email);
    const order = parseWatermarkOrder({ key: video.key, settings }, { api: await api.apiVersion(), nowMs: Date.now() });
    const { resource: created } = await api.watermarks.request(order);
    const ready = await lastOf(api.watermarks.watch(created, 'playable', { intervalMs: 250, signal: ctx.signal }));
    const state = ready.resource as WatermarkResource;
    if (state.status !== 'READY') throw new WmarkError('DEMO_FAILED', `the watermark failed: ${state.error ?? 'unknown reason'}`);
    const playableMs = Date.now() - started;
    const keep = opts.keepServing ?? (Boolean(ctx.io.stdout.isTTY) && !ctx.io.env.CI);
    const files = path.resolve((await local.watermarks.files(state)).dir);
    // The links are signed for this port: a serve on the same port and data folder plays them again, and
    // `watermark view` signs fresh ones for whichever serve runs.
    const serveAgain = again(ctx, `serve --port ${port}`);
    const freshLinks = again(ctx, `watermark view ${created.id}`);
    const summary = {
      sample,
      videoId: video.id,
      server: server.url,
      settings,
      playableAfterMs: playableMs,
      response: created,
      ready: state,
      player: state.containers?.href,
      files,
      keepServing: keep,
      serveAgain,
      freshLinks,
    };
    ctx.output.result(summary, (c) =>
      [
        `${c.bold('sample')}     ${sample}`,
        `${c.bold('service')}    ${server.url}  (API 1.0 + 2.0)`,
        `${c.bold('watermark')}  ${created.id}  ${c.green('READY')} after ${(playableMs / 1000).toFixed(2)} s (first POST answered ${created.status})`,
        `${c.bold('playlist')}   ${state.containers?.m3u8}`,
        `${c.bold('files')}      ${files}`,
        '',
        `Open the player: ${c.cyan(state.containers?.href ?? '')}`,
        c.dim(`${keep ? 'Serving until Ctrl-C.' : 'The service stops when this command ends.'} Afterwards, \`${serveAgain}\` plays these links again,`),
        c.dim(`and \`${freshLinks}\` prints fresh links for whichever \`wmark serve\` runs on this data folder.`),
      ].join('\n'),
    );
    if (keep) await whenAborted(ctx.signal);
    else {
      // Let the rest of the segments and the mp4 finish, so the files on disk are complete when we exit.
      ctx.output.stage('finishing the remaining segments and the mp4');
      const done = await follow(ctx, server.service.watermarks.watch(created, 'complete', { signal: ctx.signal }), describeWatermark, { label: 'finishing' });
      if (done.status === 'FAILED') throw new WmarkError('DEMO_FAILED', 'the watermark failed while finishing');
    }
  } finally {
    await server.close();
    forget();
  }
  return 0;
}

/** Steps 1 and 2: the sample video (made once) and its ingest under the demo's own key, followed to the end. */
async function ingestSample(ctx: CliContext, engine: Engine, local: LocalService) {
  const { demoSample, SAMPLE } = await import('../../engine/app/sample-video.js');
  const { path: sample, make } = demoSample(engine);
  // A rerun finds the sample and its ingest from the first run, and says so rather than what a first run does.
  ctx.output.stage(
    existsSync(sample)
      ? `1/4 reusing the sample video made by an earlier demo (${sample})`
      : `1/4 generating the sample video (${SAMPLE.width}x${SAMPLE.height}, ${SAMPLE.seconds} s, once)`,
  );
  await make((f: number) => ctx.output.progress(`generating sample ${(f * 100).toFixed(0)}%`));
  const request = parseVideoRequest({ sourceUrl: sample, key: 'wmark-sample', name: 'wmark built-in sample' });
  // The key is the demo's own: when it names a sample since made again (a file with another date, or other bytes), the
  // demo takes the key back for the sample it has now instead of failing on its own earlier run.
  const { video, created } = await local.videos.create(request).catch((error: unknown) => {
    if (!(error instanceof WmarkError) || error.code !== 'KEY_EXISTS') throw error;
    ctx.output.info('the sample under key wmark-sample was made again since its ingest: ingesting it anew');
    return local.videos.replace(request);
  });
  ctx.output.stage(created ? '2/4 ingesting it into closed-GOP working segments' : '2/4 the sample is ingested already (key wmark-sample)');
  const ingested = (await follow(ctx, local.videos.watch(video.id, { signal: ctx.signal }), describeVideo, { label: 'ingesting the sample' })).video;
  if (ingested.status !== 'INGESTED') throw new WmarkError('DEMO_FAILED', `the sample could not be ingested: ${ingested.error ?? ingested.status}`);
  return { sample, video };
}

/** The demo talks to its service like any client: the remote client, with a token for a dedicated demo client id. */
async function demoClient(ctx: CliContext, baseUrl: string, local: LocalService) {
  const [{ RemoteService }, { RemoteSession }] = await Promise.all([import('../../remote/remote-service.js'), import('../../remote/session.js')]);
  const client = new HttpClient({ signal: ctx.signal, userAgent: `wmark/${VERSION}` });
  const session = new RemoteSession({
    baseUrl,
    client,
    env: {},
    credentialsFile: '',
    deadline: Date.now() + 10 * 60_000,
    timeoutLabel: 'the demo',
    token: await local.credentials.tokenFor(DEMO_LABEL),
  });
  return new RemoteService(session, '1.0');
}

/** A wmark command line for the same data folder and config as this run. */
function again(ctx: CliContext, command: string): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const globals = [
    ...(ctx.flags.dataDir !== undefined ? ['--data-dir', quote(path.resolve(ctx.io.cwd, ctx.flags.dataDir))] : []),
    ...(ctx.flags.config !== undefined ? ['--config', quote(path.resolve(ctx.io.cwd, ctx.flags.config))] : []),
  ];
  return ['wmark', ...globals, command].join(' ');
}

/**
 * The demo's mark: the viewer's name and email in the bottom-right corner, large and opaque enough to read at a glance,
 * with a firm shadow so it stands out on the bright sky and the dark hills alike.
 */
function demoSettings(viewer: string, email: string): Record<string, unknown>[] {
  return [
    {
      type: 'TEXT',
      content: `${viewer}\n${email}`,
      x: 0.96,
      y: 0.93,
      align: 'RIGHT',
      verticalAlign: 'BOTTOM',
      fontSize: 0.05,
      fontColor: 'FFFFFF',
      fontOpacity: 0.85,
      shadowColor: '000000',
      shadowOpacity: 0.7,
      shadowOffsetX: 0.08,
      shadowOffsetY: 0.08,
    },
  ];
}

async function listen(engine: Engine, host: string, port: number, publicUrl: string | undefined, ttl: number): Promise<RunningServer> {
  const [{ startServer }, { serverService }] = await Promise.all([import('../../server/app/node-server.js'), import('../../engine/app/server-service.js')]);
  const service = serverService(engine, { host });
  try {
    return await startServer({ service, host, port, publicUrl, tokenTtlSeconds: ttl });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startServer({ service, host, port: 0, publicUrl, tokenTtlSeconds: ttl });
  }
}
