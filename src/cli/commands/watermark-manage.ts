// `wmark watermark list|view|rm`: the watermarks the local engine holds. The service API (1.0/2.0) has no listing or
// deletion, so these are local; a watermark on a remote service is followed with `wmark poll <href>`.
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import type { ImageSetting, TextSetting } from '../../core/setting-types.js';
import { sourceFileName } from '../../core/video-key.js';
import type { apiStatus } from '../../engine/app/api-bodies.js';
import type { LocalService } from '../../engine/app/local-service.js';
import { action, mergedOptions } from '../action.js';
import { afterLinks } from '../link-check.js';
import { humanDate, renderTable, renderWatermark } from '../render.js';

export function registerWatermarkManagement(watermark: Command): void {
  watermark
    .command('list')
    .description("the local engine's watermarks, newest last")
    .option('--key <key>', 'only those of the video with this key (or id)')
    .action(
      action(async (ctx, _opts: unknown, cmd: Command) => {
        const opts = mergedOptions<{ key?: string }>(cmd);
        const local = await ctx.localService();
        let videoId: string | undefined;
        if (opts.key !== undefined) {
          const video = await local.videos.find(opts.key);
          if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id or key "${opts.key}"`);
          videoId = video.id;
        }
        const keys = new Map<string, string>();
        const keyOf = async (id: string) => keys.get(id) ?? keys.set(id, (await local.videos.find(id))?.key ?? id).get(id)!;
        const list: ReturnType<typeof summary>[] = [];
        const { apiStatus } = await import('../../engine/app/api-bodies.js');
        for (const w of await local.watermarks.list(videoId)) list.push(summary(w, await keyOf(w.videoId), apiStatus(w)));
        ctx.output.result(list, (c) =>
          list.length === 0
            ? c.dim('no watermarks yet: make one with `wmark watermark --key KEY --text "for alice"`')
            : renderTable(
                ['ID', 'STATUS', 'VIDEO', 'CREATED', 'TEXT'],
                list.map((w) => [w.id, w.status, w.videoKey, humanDate(w.createdOn), drawnText(w)]),
                c,
                ctx.output.mode === 'human',
              ),
        );
      }),
    );

  watermark
    .command('view')
    .description('one watermark: fresh links and its files')
    .argument('<id>', 'the watermark id (see `wmark watermark list`)')
    .option('--open', 'open the player link in the browser')
    .option('--public-url <url>', 'base URL of the links (default: the running `wmark serve`, then config publicUrl)')
    .action(
      action(async (ctx, id: string, _opts: unknown, cmd: Command) => {
        const opts = mergedOptions<{ open?: boolean; publicUrl?: string }>(cmd);
        const local = await ctx.localService({ publicUrl: opts.publicUrl });
        const record = await local.watermarks.record(id);
        const resource = {
          ...local.watermarks.body(record),
          videoKey: (await local.videos.find(record.videoId))?.key,
          files: await local.watermarks.files(record.id),
          render: await local.operations.renderStrategy(record),
          settings: record.settings,
          createdOn: record.createdOn,
        };
        ctx.output.result(resource, (c) => renderWatermark(resource, c));
        await afterLinks(ctx, resource, opts.open);
      }),
    );

  watermark
    .command('rm')
    .alias('delete')
    .description('remove watermarks, their files and links')
    .argument('<id...>', 'watermark ids (see `wmark watermark list`)')
    .action(
      action(async (ctx, ids: string[]) => {
        const local = await ctx.localService();
        // All found first: a typo in the third id removes nothing.
        const records = await Promise.all(ids.map((id) => local.watermarks.record(id)));
        for (const r of records) await local.watermarks.delete(r.id);
        ctx.output.result({ deleted: records.map((r) => r.id) }, () => records.map((r) => `deleted ${r.id}`).join('\n'));
      }),
    );
}

/** What `watermark list` shows of each: enough to choose one, the settings being in `view`. */
function summary(w: Awaited<ReturnType<LocalService['watermarks']['list']>>[number], videoKey: string, status: ReturnType<typeof apiStatus>) {
  const settings = w.settings as { type: string }[];
  const texts = settings.filter((s): s is TextSetting => s.type === 'TEXT').map((s) => s.content.replace(/\s+/g, ' '));
  const images = settings.filter((s): s is ImageSetting => s.type === 'IMAGE').map((s) => s.content);
  return {
    id: w.id,
    status,
    videoId: w.videoId,
    videoKey,
    createdOn: w.createdOn,
    text: texts.length ? texts.join(' | ') : null,
    /** The logos' sources, as requested (URLs or files). */
    images,
    forensic: w.forensicPayload,
    containers: w.containers,
    expiration: w.expiration,
  };
}

/** The table's TEXT column: the text, then each logo by its file name, or else the forensic payload. */
function drawnText(w: ReturnType<typeof summary>): string {
  const logos = w.images.map((source) => `(image ${sourceFileName(source) || source})`);
  const drawn = [...(w.text === null ? [] : [w.text]), ...logos].join(' ');
  return drawn || (w.forensic !== null ? `(forensic ${w.forensic})` : '');
}
