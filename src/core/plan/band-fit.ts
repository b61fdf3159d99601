// Where a title's bands lie, and whether a watermark renders in one of them: every TEXT and IMAGE setting, at every
// moment of the video (a MOVE from its start to wherever it has got by the end), must draw only inside one band's
// rows. A band spans the whole width, so only the vertical extent matters. Pure: the caller passes the picture, the
// font's line metrics and the bands.

import type { FontMetrics } from '../font-metrics.js';
import type { BandRows } from '../h264/splice-band.js';
import type { Setting, VisibleSetting } from '../setting-types.js';
import { isVisible } from '../setting-types.js';
import { V_FACTOR } from './filter-values.js';
import { imagePixels } from './image-drawing.js';
import { fontPixels } from './text-drawing.js';

/** Macroblock rows a band needs at least (and every region beside it): fewer leave the clamped search no range. */
const MIN_BAND_ROWS = 3;

/**
 * Pixels kept free inside a band's edges: 4:2:0 chroma covers two rows, and a glyph's anti-aliased edge reaches a
 * pixel past its box.
 */
export const BAND_MARGIN_PX = 2;

/** A text line's glyphs reach this much past the font's ascent + descent (accents, tall capitals), in em. */
const GLYPH_SLACK_EM = 0.25;

/**
 * The bands of a picture `height` pixels high, in macroblock rows (top included, bottom excluded): about a tenth of
 * the picture each (80 px at 720p, 128 px at 1080p: 120 of them visible, 3 rows at least), one at the bottom and, with `top`, one at the
 * top, each with 3+ rows between them. Empty when the picture is too small for even one band beside 3 rows.
 */
export function bandLayout(height: number, options: { top: boolean } = { top: true }): BandRows[] {
  const rows = Math.ceil(height / 16);
  const size = Math.max(MIN_BAND_ROWS, Math.ceil(height / 144));
  if (options.top && rows >= 2 * size + MIN_BAND_ROWS)
    return [
      { top: 0, bottom: size },
      { top: rows - size, bottom: rows },
    ];
  if (rows >= size + MIN_BAND_ROWS) return [{ top: rows - size, bottom: rows }];
  return [];
}

/** The pixel rows [top, bottom) of a band in a picture `height` high (a bottom band ends at the picture's edge). */
export function bandPixels(band: BandRows, height: number): { top: number; bottom: number } {
  return { top: 16 * band.top, bottom: Math.min(height, 16 * band.bottom) };
}

export interface MarkFrame {
  width: number;
  height: number;
  /** Seconds; null when unknown (a MOVE is then assumed to play to its end). */
  duration: number | null;
}

/** The pixel rows [top, bottom) a setting may draw on, over the whole video (rounded outwards). */
export function settingRows(s: VisibleSetting, frame: MarkFrame, metrics: FontMetrics): { top: number; bottom: number } {
  const ys = anchorYs(s, frame.duration);
  let above: number;
  let below: number;
  if (s.type === 'TEXT') {
    const size = fontPixels(s, frame.height);
    const lines = s.content.split('\n').length;
    const pitch = (metrics.ascent + metrics.descent + metrics.lineGap) * size;
    // drawtext's own box (one line) or the block of lines, anchored by verticalAlign; glyphs may reach past it.
    const block = (lines - 1) * pitch + (metrics.ascent + metrics.descent + 2 * GLYPH_SLACK_EM) * size;
    const shadow = s.shadowOpacity > 0 ? Math.round(s.shadowOffsetY * size) : 0;
    // One line's box is as tall as its glyphs, anywhere up to `block`: the anchor may sit anywhere inside it.
    above = block * V_FACTOR[s.verticalAlign] + Math.max(0, -shadow);
    below = block * (1 - V_FACTOR[s.verticalAlign]) + Math.max(0, shadow);
  } else {
    if (!s.image) return { top: 0, bottom: frame.height };
    const h = imagePixels(s, s.image, frame.width).height;
    above = h * V_FACTOR[s.verticalAlign];
    below = h - above;
  }
  const top = Math.min(...ys) * frame.height - above;
  const bottom = Math.max(...ys) * frame.height + below;
  return { top: Math.floor(top), bottom: Math.ceil(bottom) };
}

/** The anchor's y at the start and wherever its MOVE has got by the end of the video (a move is linear). */
function anchorYs(s: VisibleSetting, duration: number | null): number[] {
  const a = s.animation;
  if (!a || a.toY === s.y) return [s.y];
  const reach = duration === null ? 1 : Math.min(1, Math.max(0, (duration - a.startTime) / (a.endTime - a.startTime)));
  return [s.y, s.y + (a.toY - s.y) * reach];
}

export type BandChoice = { strategy: 'band'; band: BandRows; reason: string } | { strategy: 'full'; reason: string };

/**
 * The band every visible setting fits inside (BAND_MARGIN_PX from its edges, rows clipped to the picture), or why
 * there is none. A watermark that draws nothing has no band to render either.
 */
export function chooseBand(settings: readonly Setting[], bands: readonly BandRows[], frame: MarkFrame, metrics: FontMetrics): BandChoice {
  const visible = settings.filter(isVisible);
  if (visible.length === 0) return { strategy: 'full', reason: 'the watermark draws nothing visible' };
  if (bands.length === 0) return { strategy: 'full', reason: 'the title has no band' };
  const extents = visible.map((s) => settingRows(s, frame, metrics));
  // What is drawn off the picture is never seen: only the rows inside it must fit.
  const top = Math.max(0, Math.min(...extents.map((e) => e.top)));
  const bottom = Math.min(frame.height, Math.max(...extents.map((e) => e.bottom)));
  const where = `the mark reaches rows ${top}-${bottom}`;
  for (const band of bands) {
    const px = bandPixels(band, frame.height);
    const low = px.top === 0 ? 0 : px.top + BAND_MARGIN_PX;
    const high = px.bottom === frame.height ? frame.height : px.bottom - BAND_MARGIN_PX;
    if (top >= low && bottom <= high) return { strategy: 'band', band, reason: `${where}, inside the band at rows ${px.top}-${px.bottom}` };
  }
  const list = bands.map((b) => bandPixels(b, frame.height)).map((px) => `${px.top}-${px.bottom}`);
  return { strategy: 'full', reason: `${where}, outside the band${bands.length > 1 ? 's' : ''} (rows ${list.join(', ')})` };
}
