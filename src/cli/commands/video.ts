// `wmark video list|show`: the videos known to the local engine.
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { toVideoResource } from '../../engine/resources.js';
import { action } from '../program.js';
import { renderVideo } from './ingest.js';

export function registerVideo(program: Command): void {
  const video = program.command('video').description('list and show ingested videos');
  video
    .command('list')
    .description('list videos')
    .option('--key <key>', 'only the video with this key')
    .action(
      action(async (ctx, opts: { key?: string }) => {
        const engine = await ctx.openEngine();
        const videos = engine.store.listVideos({ key: opts.key }).map(toVideoResource);
        ctx.output.result(videos, (c) =>
          videos.length === 0
            ? c.dim('no videos yet: add one with `wmark ingest <file>`')
            : videos.map((v) => `${v.id}  ${v.status.padEnd(16)} ${(v.duration ?? 0).toFixed(1).padStart(7)} s  ${v.key}`).join('\n'),
        );
      }),
    );
  video
    .command('show')
    .description('show one video by id or key')
    .argument('<id-or-key>')
    .action(
      action(async (ctx, ref: string) => {
        const engine = await ctx.openEngine();
        const found = engine.store.getVideo(ref) ?? engine.store.getVideoByKey(ref);
        if (!found) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id or key "${ref}"`, { hint: 'See `wmark video list`.' });
        const resource = toVideoResource(found);
        ctx.output.result(resource, (c) => renderVideo(resource, c));
      }),
    );
}
