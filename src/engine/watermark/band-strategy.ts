// Which render a watermark gets: `band` when its title has a band encode, this process renders bands, and every
// visible setting fits one band (core/plan/band-fit.ts); `full` otherwise, with the reason shown by `watermark view`.
import { WmarkError } from '../../core/errors.js';
import { chooseBand } from '../../core/plan/band-fit.js';
import type { Setting } from '../../core/setting-types.js';
import { type BandMeta, bandEncodeOptions, bandKeys, readBandMeta } from '../band/band-media.js';
import { mediaKeys } from '../data-folder/layout.js';
import { withEveryStore } from '../data-folder/shared-media.js';
import type { Engine } from '../engine.js';
import type { BandRender } from '../render/segment-renderer.js';
import type { VideoRecord, WatermarkRecord } from '../state/state-store.js';
import { fontMetrics } from './drawing.js';

/** The marker of a watermark asked to render in full, beside its segments. */
const FULL_RENDER_NAME = 'full-render.txt';

/** Files the engine keeps in a watermark's folder for itself: not outputs, so never handed out with them. */
export const ENGINE_NOTES: readonly string[] = [FULL_RENDER_NAME];

export interface RenderStrategy {
  strategy: 'band' | 'full';
  reason: string;
  /** With `band`: segment `index`'s band render. */
  segment?: (index: number, gop: number) => BandRender;
}

/** Marks a watermark to render whole pictures whatever it draws (`wmark watermark --full-render`): kept in its folder. */
export async function forceFullRender(engine: Engine, w: WatermarkRecord): Promise<void> {
  await engine.media.put(mediaKeys.watermarkFile(w.videoId, w.id, FULL_RENDER_NAME), 'asked for a full render (--full-render)\n');
}

/**
 * `readMeta`: where the title's band record is read (default: the engine's store, remembered per title). The renders
 * read their band media from that store, so only a report may look further.
 */
export async function renderStrategy(
  engine: Engine,
  w: WatermarkRecord,
  video: VideoRecord,
  readMeta?: (videoId: string) => Promise<BandMeta | undefined>,
): Promise<RenderStrategy> {
  if (engine.band.off) return { strategy: 'full', reason: engine.band.off };
  if (await engine.media.exists(mediaKeys.watermarkFile(w.videoId, w.id, FULL_RENDER_NAME)))
    return { strategy: 'full', reason: 'asked for a full render (--full-render)' };
  if (w.forensicPayload !== null)
    return { strategy: 'full', reason: "a forensic viewer's segments are drawn on the forensic variants, which have no band encode" };
  const meta = await (readMeta ? readMeta(video.id) : engine.caches.remember('band-meta', video.id, 256, () => readBandMeta(engine.media, video.id)));
  if (!meta) return { strategy: 'full', reason: 'the title has no band encode (it was ingested without the patched x264)' };
  const metrics = await fontMetrics(engine, engine.tools.font.path);
  const choice = chooseBand(w.settings as Setting[], meta.bands, { width: meta.width, height: meta.height, duration: video.durationSeconds }, metrics);
  if (choice.strategy === 'full') return choice;
  const b = meta.bands.indexOf(meta.bands.find((x) => x.top === choice.band.top)!);
  return {
    strategy: 'band',
    reason: choice.reason,
    segment: (index, gop) => ({
      cut: { rows: choice.band, width: meta.width, height: meta.height },
      shared: bandKeys.shared(video.id, index),
      rows: bandKeys.rows(video.id, b, index, meta.rows),
      qpfile: bandKeys.qpfile(video.id, index),
      options: bandEncodeOptions(meta, gop),
    }),
  };
}

/**
 * A watermark's strategy and its reason, as `watermark view` shows them. The title's band record is looked for in every
 * store of the data folder: a render farm's workers make it in the shared store, which a CLI run on the folder does not
 * use as its own.
 */
export async function watermarkStrategy(engine: Engine, w: WatermarkRecord): Promise<{ strategy: 'band' | 'full'; reason: string }> {
  const video = await engine.store.getVideo(w.videoId);
  if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `the video of watermark ${w.id} is gone`);
  const everywhere = async (videoId: string) => (await withEveryStore(engine, (store) => readBandMeta(store, videoId))).find(Boolean);
  const { strategy, reason } = await renderStrategy(engine, w, video, everywhere);
  return { strategy, reason };
}
