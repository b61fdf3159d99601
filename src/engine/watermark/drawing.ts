// What a watermark draws: a drawtext filter chain for every TEXT setting over the video's frames, laid out with the
// font's own line metrics (read once per font file and engine).
import { readFile } from 'node:fs/promises';
import { FALLBACK_FONT_METRICS, type FontMetrics, parseFontMetrics } from '../../core/font-metrics.js';
import { type TextFile, textDrawing } from '../../core/plan/text-drawing.js';
import type { Setting, TextSetting } from '../../core/setting-types.js';
import type { Engine } from '../engine.js';
import type { Drawing } from '../render/segment-renderer.js';
import type { VideoRecord, WatermarkRecord } from '../state/state-store.js';

export function textSettings(w: Pick<WatermarkRecord, 'settings'>): TextSetting[] {
  return (w.settings as Setting[]).filter((s): s is TextSetting => s.type === 'TEXT');
}

/** The filtergraph for a watermark (drawtext filters for every TEXT setting) and the text files it reads. */
export function watermarkFilterGraph(
  w: Pick<WatermarkRecord, 'settings'>,
  video: VideoRecord,
  fontFile: string,
  metrics: FontMetrics,
  textDir?: string,
): { graph: string; files: TextFile[] } {
  const drawings = textSettings(w).map((setting, index) =>
    textDrawing({ setting, index, fontFile, metrics, frameHeight: video.height!, timeOrigin: video.timeOrigin, ...(textDir ? { textDir } : {}) }),
  );
  const filters = drawings.flatMap((d) => d.filters);
  return { graph: filters.length ? filters.join(',') : 'null', files: drawings.flatMap((d) => d.files) };
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
  return (fontFile, textDir) => watermarkFilterGraph(w, video, fontFile, metrics, textDir);
}
