// `wmark ingest <file-or-url>`: register a video with the local engine or a remote service (--remote) and, unless
// --no-wait, follow its ingest until it is ready to watermark.
import path from 'node:path';
import { type Command, Option } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { FORENSIC_LAYOUTS, type ForensicLayoutChoice } from '../../core/forensic/variant-plan.js';
import { isHttpUrl } from '../../core/http-url.js';
import type { LocalService } from '../../engine/app/local-service.js';
import { isFinalVideoStatus } from '../../service/watermark-service.js';
import { action } from '../action.js';
import { describeVideo, follow } from '../follow.js';
import { addRemoteOptions, durationFlag, positionalBeforeRemote, type RemoteFlags } from '../remote-flags.js';
import { renderVideo } from '../render.js';

interface IngestOptions extends RemoteFlags {
  key?: string;
  name?: string;
  forensic?: boolean;
  forensicLayout?: ForensicLayoutChoice;
  replace?: boolean;
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
    .addOption(
      new Option(
        '--forensic-layout <layout>',
        "with --forensic (implied): how segments carry the code. 'whole' (default): leaks from 2 min, delivery within 1 % of an unmarked title, ingest ~4 encodes per segment; " +
          "'split': leaks from 2 min, ingest ~2 encodes, +18-48 % bytes per view; 'single': leaks from ~3.5 min, ingest ~2 encodes, delivery within 1 %",
      ).choices(FORENSIC_LAYOUTS),
    )
    .option('--replace', 'local: the key already names another video: forget it (its media, watermarks and their links) and ingest this source under the key')
    .option('--no-wait', 'return once the video is registered, without waiting for its ingest')
    .option('--interval <duration>', 'remote: time between status checks while waiting (default 1s)')
    .action(
      action(async (ctx, given: string | undefined, opts: IngestOptions) => {
        const source = positionalBeforeRemote(given, opts, 'file-or-url');
        if (opts.replace && opts.remote !== undefined) {
          throw new WmarkError('LOCAL_ONLY', '--replace applies to the local engine; the service API has no replace', {
            hint: 'Ingest under a new --key instead.',
          });
        }
        const intervalMs = opts.interval !== undefined ? durationFlag(opts.interval, '--interval') : undefined;
        const service = await ctx.service(opts, { queue: opts.wait === false ? 'detached' : 'in-process', defaultTimeout: '1h' });
        // A path is sent absolute: the service (even a local one) has another working folder than this shell.
        const sourceUrl = isHttpUrl(source.trim()) ? source.trim() : path.resolve(ctx.io.cwd, source);
        ctx.output.stage(`registering ${source} with ${service.description}`);
        const request = {
          sourceUrl,
          ...(opts.key !== undefined ? { key: opts.key } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.forensic || opts.forensicLayout ? { enableForensic: true } : {}),
          ...(opts.forensicLayout ? { forensicLayout: opts.forensicLayout } : {}),
        };
        const {
          video: registered,
          created,
          replaced,
        }: Awaited<ReturnType<LocalService['replaceVideo']>> = opts.replace && service.kind === 'local'
          ? await service.replaceVideo(request)
          : await service.createVideo(request);
        if (replaced) {
          const lost = replaced.watermarks ? ` and its ${replaced.watermarks} watermark(s), whose links no longer play` : '';
          ctx.output.warn(`replaced video ${replaced.videoId} (${replaced.sourceUrl})${lost}`);
        }
        let video = registered;
        if (!created && video.status === 'INGESTED') ctx.output.info(`already ingested as ${video.id}; nothing to do`);
        else if (!created && video.status === 'PENDING')
          ctx.output.info(`already being ingested as ${video.id}${opts.wait === false ? '' : '; waiting for it'}`);
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
