// `wmark video list|show`: the videos a service knows (the local engine, or a remote one with --remote).
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import type { VideoResource } from '../../service/watermark-service.js';
import { action } from '../action.js';
import { addRemoteOptions, type RemoteFlags } from '../remote-flags.js';
import { renderTable, renderVideo } from '../render.js';

export function registerVideo(program: Command): void {
  const video = program.command('video').description('list and show ingested videos');
  const list = video
    .command('list')
    .description('list videos')
    .option('--key <key>', 'only the video with this key')
    .action(
      action(async (ctx, opts: RemoteFlags & { key?: string }) => {
        const service = await ctx.service(opts);
        const videos = await service.videos.list(opts.key !== undefined ? { key: opts.key } : {});
        ctx.output.result(videos, (c) =>
          videos.length === 0
            ? c.dim('no videos yet: add one with `wmark ingest <file>`')
            : renderTable(
                ['ID', 'STATUS', 'DURATION', 'KEY'],
                videos.map((v) => [v.id, String(v.status), `${(typeof v.duration === 'number' ? v.duration : 0).toFixed(1).padStart(7)} s`, v.key ?? '']),
                c,
                ctx.output.mode === 'human',
              ),
        );
      }),
    );
  const show = video
    .command('show')
    .description('show one video by id (or, locally, by key)')
    .argument('<id-or-key>')
    .action(
      action(async (ctx, ref: string, opts: RemoteFlags) => {
        const service = await ctx.service(opts);
        let found: VideoResource;
        if (service.kind === 'local') {
          const record = await service.videos.find(ref);
          if (!record) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id or key "${ref}"`, { hint: 'See `wmark video list`.' });
          found = (await import('../../engine/app/api-bodies.js')).videoBody(record);
        } else found = await service.videos.get(ref);
        ctx.output.result(found, (c) => renderVideo(found, c));
      }),
    );
  addRemoteOptions(list);
  addRemoteOptions(show);
}
