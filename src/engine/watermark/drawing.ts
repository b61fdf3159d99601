// What a watermark draws: its TEXT and IMAGE settings in order over the video's frames (core/plan/watermark-graph.ts),
// text laid out with the font's own line metrics (read once per font file and engine), images overlaid from the
// renditions kept in the media store.
import { readFile } from 'node:fs/promises';
import { FALLBACK_FONT_METRICS, type FontMetrics, parseFontMetrics } from '../../core/font-metrics.js';
import { watermarkGraph } from '../../core/plan/watermark-graph.js';
import { isVisible, type Setting, type VisibleSetting } from '../../core/setting-types.js';
import { mediaKeys } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import type { Drawing, DrawingPlace, DrawnGraph } from '../render/segment-renderer.js';
import type { VideoRecord, WatermarkRecord } from '../state/state-store.js';

/** The settings a watermark draws (TEXT and IMAGE), in drawing order. */
export function visibleSettings(w: Pick<WatermarkRecord, 'settings'>): VisibleSetting[] {
  return (w.settings as Setting[]).filter(isVisible);
}

/** The filtergraph for a watermark, the text files it reads and the image renditions (media keys) it overlays. */
export function watermarkFilterGraph(
  w: Pick<WatermarkRecord, 'settings'>,
  video: Pick<VideoRecord, 'width' | 'height' | 'timeOrigin'>,
  fontFile: string,
  metrics: FontMetrics,
  place: DrawingPlace = {},
): DrawnGraph {
  const drawn = watermarkGraph({
    settings: w.settings as Setting[],
    fontFile,
    metrics,
    frame: { width: video.width ?? 0, height: video.height! },
    timeOrigin: video.timeOrigin,
    ...place,
  });
  return { graph: drawn.graph, files: drawn.files, images: drawn.images.map((i) => ({ name: i.name, key: mediaKeys.imageRendition(i.image.sha256, i.size) })) };
}

/** The font's line metrics for multi-line text; a font that cannot be parsed gets DejaVu Sans' figures. */
export function fontMetrics(engine: Engine, fontFile: string): Promise<FontMetrics> {
  return engine.caches.remember('font-metrics', fontFile, 16, () =>
    readFile(fontFile).then(
      (bytes) => parseFontMetrics(bytes) ?? FALLBACK_FONT_METRICS,
      () => FALLBACK_FONT_METRICS,
    ),
  );
}

/**
 * A watermark's drawing, for whichever font the renderer draws with. Line metrics come from this engine's font: a
 * farm's workers draw with the same font (a worker with another one refuses the task).
 */
export async function watermarkDrawing(engine: Engine, w: Pick<WatermarkRecord, 'settings'>, video: VideoRecord): Promise<Drawing> {
  const metrics = await fontMetrics(engine, engine.tools.font.path);
  return (fontFile, place) => watermarkFilterGraph(w, video, fontFile, metrics, place);
}
