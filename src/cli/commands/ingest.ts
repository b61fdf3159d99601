// `wmark ingest <file-or-url>`: register a video with the local engine or a remote service (--remote) and, unless
// --no-wait, follow its ingest until it is ready to watermark.
import path from 'node:path';
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { isHttpUrl } from '../../core/http-url.js';
import { isFinalVideoStatus } from '../../service/watermark-service.js';
import { action } from '../action.js';
import { describeVideo, follow } from '../follow.js';
import { addRemoteOptions, durationFlag, positionalBeforeRemote, type RemoteFlags } from '../remote-flags.js';
import { renderVideo } from '../render.js';

interface IngestOptions extends RemoteFlags {
  key?: string;
  name?: string;
  forensic?: boolean;
  wait?: boolean;
  interval?: string;
}

export function registerIngest(program: Command): void {
  const ingest = program
    .command('ingest')
    .description('register a video (local file or http(s) URL) and prepare it for watermarking')
    .argument('[file-or-url]', 'source video')
    .option('--key <key>', 'custom key to refer to the video by (default: the source path or URL)')
    .option('--name <name>', 'human-readable name')
    .option('--forensic', 'also prepare it for FORENSIC watermarks (videos of 5 minutes or more)')
    .option('--no-wait', 'return once the video is registered, without waiting for its ingest')
    .option('--interval <duration>', 'remote: time between status checks while waiting (default 1s)')
    .action(
      action(async (ctx, given: string | undefined, opts: IngestOptions) => {
        const source = positionalBeforeRemote(given, opts, 'file-or-url');
        const intervalMs = opts.interval !== undefined ? durationFlag(opts.interval, '--interval') : undefined;
        const service = await ctx.service(opts, { queue: opts.wait === false ? 'detached' : 'in-process', defaultTimeout: '1h' });
        // A path is sent absolute: the service (even a local one) has another working folder than this shell.
        const sourceUrl = isHttpUrl(source.trim()) ? source.trim() : path.resolve(ctx.io.cwd, source);
        ctx.output.stage(`registering ${source} with ${service.description}`);
        const { video: registered, created } = await service.createVideo({
          sourceUrl,
          ...(opts.key !== undefined ? { key: opts.key } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.forensic ? { enableForensic: true } : {}),
        });
        let video = registered;
        if (!created && video.status === 'INGESTED') ctx.output.info(`already ingested as ${video.id}; nothing to do`);
        else if (!created && video.status === 'PENDING') ctx.output.info(`already being ingested as ${video.id}${opts.wait === false ? '' : '; waiting for it'}`);
        if (opts.wait !== false && !isFinalVideoStatus(video.status)) {
          const last = await follow(ctx, service.watchVideo(video.id, { signal: ctx.signal, intervalMs }), describeVideo, { label: `ingesting ${source}` });
          video = last.video;
        }
        ctx.output.result(video, (c) => renderVideo(video, c));
        if (typeof video.status === 'string' && video.status.startsWith('FAILED')) {
          ctx.output.warn(`ingest failed (${video.status})${typeof video.error === 'string' ? `: ${video.error}` : ''}`);
          return new WmarkError('INGEST_FAILED', '').exitCode;
        }
        return 0;
      }),
    );
  addRemoteOptions(ingest, { timeoutDefault: '1h' });
}

