// `wmark serve`: the Video Watermarking Service API (1.0 and 2.0) on top of the local engine.
import type { Command } from 'commander';
import { startServer } from '../../server/node-server.js';
import { action } from '../action.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the watermarking API (1.0 + 2.0), signed HLS/mp4 and the player page')
    .option('--port <port>', 'port to listen on (default 8080; 0 picks a free one)')
    .option('--host <host>', 'interface to bind (default 127.0.0.1)')
    .option('--public-url <url>', 'base URL for the links handed out (default: from the request Host header)')
    .option('--workers <n>', 'ffmpeg worker processes per job (default: number of cores)')
    .action(
      action(async (ctx, opts: { port?: string; host?: string; publicUrl?: string; workers?: string }) => {
        ctx.setConfigFlags({ port: opts.port, host: opts.host, publicUrl: opts.publicUrl, workers: opts.workers });
        const config = await ctx.loadConfig();
        const local = await ctx.localService();
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
        const server = await startServer({
          engine: local.engine,
          host: config.server.host,
          port: config.server.port,
          publicUrl: config.publicUrl,
          tokenTtlSeconds: config.server.tokenTtlSeconds,
          log: (line: string) => ctx.output.info(line),
        });
        if (server.resumed) ctx.output.info(`resuming ${server.resumed} unfinished job(s)`);
        if (ctx.output.mode === 'json') ctx.output.line({ url: server.url, dataDir: local.engine.paths.root }, () => '');
        else if (ctx.output.mode === 'plain') ctx.io.stdout.write(`${server.url}\n`);
        else ctx.output.result(server.url, (c) => `${c.bold('wmark serve')} listening on ${c.cyan(server.url)}  ${c.dim('(Ctrl-C to stop)')}`);
        await untilAborted(ctx.signal);
        ctx.output.info('shutting down: finishing requests; unfinished jobs resume on the next start');
        await server.close();
        return 0;
      }),
    );
}

/** Resolves when the run is interrupted (Ctrl-C, SIGTERM). */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
