// `wmark ingest <file-or-url>`: register a video with the local engine or a remote service (--remote) and, unless
// --no-wait, follow its ingest until it is ready to watermark.
import path from 'node:path';
import { type Command, Option } from 'commander';
import { parseVideoRequest } from '../../core/api-requests.js';
import { isWmarkError, WmarkError } from '../../core/errors.js';
import { FORENSIC_LAYOUT_TRADES } from '../../core/forensic/variant-plan.js';
import { DEFAULT_FORENSIC_LAYOUT, FORENSIC_LAYOUTS, type ForensicLayoutChoice } from '../../core/forensic-layout.js';
import { isHttpUrl } from '../../core/http-url.js';
import { defaultVideoKey } from '../../core/video-key.js';
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
    .option('--key <key>', 'the name to refer to the video by (default: the file name without its extension)')
    .option('--name <name>', 'human-readable name')
    .option('--forensic', 'also prepare it for FORENSIC watermarks (videos of 5 minutes or more)')
    .addOption(new Option('--forensic-layout <layout>', `with --forensic (implied): how segments carry the code. ${layoutTrades()}`).choices(FORENSIC_LAYOUTS))
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
        // Without --key, the file's name: refused (KEY_EXISTS) when it already names another source.
        const key = opts.key ?? defaultVideoKey(sourceUrl);
        const request = parseVideoRequest({
          sourceUrl,
          key,
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.forensic || opts.forensicLayout ? { enableForensic: true } : {}),
          ...(opts.forensicLayout ? { forensicLayout: opts.forensicLayout } : {}),
        });
        const {
          video: registered,
          created,
          replaced,
        }: Awaited<ReturnType<LocalService['videos']['replace']>> = await (opts.replace && service.kind === 'local'
          ? service.videos.replace(request)
          : service.videos.create(request)
        ).catch((error: unknown) => {
          throw opts.key === undefined && isWmarkError(error) && error.code === 'KEY_EXISTS' ? takenKey(key, source, error) : error;
        });
        if (replaced) {
          const lost = replaced.watermarks ? ` and its ${replaced.watermarks} watermark(s), whose links no longer play` : '';
          ctx.output.warn(`replaced video ${replaced.videoId} (${replaced.sourceUrl})${lost}`);
        }
        let video = registered;
        if (!created && video.status === 'INGESTED') ctx.output.info(`already ingested as ${video.id}; nothing to do`);
        else if (!created && video.status === 'PENDING')
          ctx.output.info(`already being ingested as ${video.id}${opts.wait === false ? '' : '; waiting for it'}`);
        if (opts.wait !== false && !isFinalVideoStatus(video.status)) {
          const last = await follow(ctx, service.videos.watch(video.id, { signal: ctx.signal, intervalMs }), describeVideo, { label: `ingesting ${source}` });
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

/** The file name, taken as the key, already names another video: say where the key came from and how to choose one. */
function takenKey(key: string, source: string, error: WmarkError): WmarkError {
  return new WmarkError('KEY_EXISTS', `${error.message} (the key was taken from the file name)`, {
    hint: `Give this one its own key: wmark ingest ${source} --key ${key}-2 (or add --replace to forget the video "${key}" names now).`,
    cause: error,
  });
}

/** Each layout's trade in the figures docs/forensic.md measures: shortest leak named, encodes at ingest, bytes per view. */
function layoutTrades(): string {
  return FORENSIC_LAYOUTS.map((layout) => {
    const t = FORENSIC_LAYOUT_TRADES[layout];
    const name = layout === DEFAULT_FORENSIC_LAYOUT ? `'${layout}' (default)` : `'${layout}'`;
    return `${name}: leaks from ${t.shortestLeak}, ${t.encodesPerSegment} encodes per segment at ingest, ${t.bytesPerView} bytes per view`;
  }).join('; ');
}
