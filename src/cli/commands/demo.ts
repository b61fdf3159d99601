// `wmark demo`: the whole product on the built-in sample: generate and ingest it, start the service, create a
// watermark through the HTTP API, wait until it plays, and print the player link.
import path from 'node:path';
import type { Command } from 'commander';
import { signToken } from '../../core/jwt.js';
import { WmarkError } from '../../core/errors.js';
import { createCredential, tokenKey } from '../../engine/credentials.js';
import type { Engine } from '../../engine/engine.js';
import { ingestVideo } from '../../engine/ingest.js';
import { generateVideo, SAMPLE, samplePath } from '../../engine/sample-video.js';
import { startServer, type RunningServer } from '../../server/start-server.js';
import { action } from '../program.js';

const DEMO_LABEL = 'wmark demo';

/** The demo talks to the API like any client; it mints its token locally for a dedicated demo client id. */
function demoToken(engine: Engine): string {
  const existing = engine.store.listCredentials().find((c) => c.label === DEMO_LABEL && c.revokedOn === null);
  const clientId = existing?.clientId ?? createCredential(engine, DEMO_LABEL).clientId;
  const now = Math.floor(engine.now() / 1000);
  return signToken(tokenKey(engine), { sub: clientId, iat: now, exp: now + 3600 });
}

async function listen(engine: Engine, host: string, port: number, publicUrl: string | undefined, ttl: number): Promise<RunningServer> {
  try {
    return await startServer({ engine, host, port, publicUrl, tokenTtlSeconds: ttl });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startServer({ engine, host, port: 0, publicUrl, tokenTtlSeconds: ttl });
  }
}

async function api(url: string, init: RequestInit): Promise<Record<string, any>> {
  const response = await fetch(url, init);
  const body = (await response.json()) as Record<string, any>;
  if (!response.ok) throw new WmarkError('DEMO_FAILED', `${init.method ?? 'GET'} ${new URL(url).pathname} answered ${response.status}: ${JSON.stringify(body.message)}`);
  return body;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the whole product on a generated sample: ingest, serve, watermark through the API, print the player link')
    .option('--viewer <name>', 'viewer name drawn on the video', 'Ada Lovelace')
    .option('--email <email>', 'viewer email drawn on the video', 'ada@example.com')
    .option('--port <port>', 'port for the service (default 8080, or a free one when taken)')
    .option('--keep-serving', 'keep serving after the watermark is ready (default on a terminal; Ctrl-C stops)')
    .option('--no-keep-serving', 'exit once the watermark is ready')
    .action(
      action(async (ctx, opts: { viewer: string; email: string; port?: string; keepServing?: boolean }) => {
        ctx.setConfigFlags({ port: opts.port });
        const config = await ctx.loadConfig();
        const engine = await ctx.openEngine();
        const sample = samplePath(engine.paths.root);
        ctx.output.stage(`1/4 generating the sample video (${SAMPLE.width}x${SAMPLE.height}, ${SAMPLE.seconds} s, once)`);
        await generateVideo(engine.runner, { output: sample, ...SAMPLE, kind: 'natural' }, (f) => ctx.output.progress(`generating sample ${(f * 100).toFixed(0)}%`));
        ctx.output.stage('2/4 ingesting it into closed-GOP working segments');
        const { video } = await ingestVideo(engine, { source: sample, key: 'wmark-sample', name: 'wmark built-in sample' }, {
          onProgress: (f) => ctx.output.progress(`ingesting ${(f * 100).toFixed(0)}%`),
        });
        ctx.output.stage('3/4 starting wmark serve');
        const server = await listen(engine, config.server.host, config.server.port, config.publicUrl, config.server.tokenTtlSeconds);
        try {
          ctx.output.stage(`4/4 POST ${server.url}/1.0/watermark for ${opts.viewer}`);
          const auth = { Authorization: `Bearer ${demoToken(engine)}` };
          const started = Date.now();
          const created = await api(`${server.url}/1.0/watermark`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: JSON.stringify({ key: video.key, settingsTemplateMapping: { id: 'viewer-corner', mappings: { name: opts.viewer, email: opts.email } } }),
          });
          let state = created;
          while (state.status !== 'READY') {
            if (state.status === 'FAILED') throw new WmarkError('DEMO_FAILED', `the watermark failed: ${state.error ?? 'unknown reason'}`);
            if (ctx.signal?.aborted) throw new WmarkError('INTERRUPTED', 'interrupted');
            await new Promise((r) => setTimeout(r, 250));
            state = await api(created.href, {});
          }
          const playableMs = Date.now() - started;
          const keep = opts.keepServing ?? (Boolean(ctx.io.stdout.isTTY) && !ctx.io.env.CI);
          const summary = { sample, videoId: video.id, server: server.url, playableAfterMs: playableMs, response: created, ready: state, player: state.containers.href, keepServing: keep };
          ctx.output.result(summary, (c) =>
            [
              `${c.bold('sample')}     ${path.relative(ctx.io.cwd, sample) || sample}`,
              `${c.bold('service')}    ${server.url}  (API 1.0 + 2.0)`,
              `${c.bold('watermark')}  ${created.id}  ${c.green('READY')} after ${(playableMs / 1000).toFixed(2)} s (first POST answered ${created.status})`,
              `${c.bold('playlist')}   ${state.containers.m3u8}`,
              '',
              `Open the player: ${c.cyan(state.containers.href)}`,
              keep ? c.dim('Serving until Ctrl-C.') : c.dim('The service stopped with this command; run `npx wmark serve` to keep these links working.'),
            ].join('\n'),
          );
          if (!keep) {
            // Let the rest of the segments and the mp4 finish, so the files on disk are complete when we exit.
            ctx.output.stage('finishing the remaining segments and the mp4');
            while (engine.store.getWatermark(created.id)?.status !== 'READY' && !ctx.signal?.aborted) {
              if (engine.store.getWatermark(created.id)?.status === 'FAILED') throw new WmarkError('DEMO_FAILED', 'the watermark failed while finishing');
              await new Promise((r) => setTimeout(r, 200));
            }
          } else {
            await new Promise<void>((resolve) => {
              if (ctx.signal?.aborted) return resolve();
              ctx.signal?.addEventListener('abort', () => resolve(), { once: true });
            });
          }
        } finally {
          await server.close();
        }
      }),
    );
}
