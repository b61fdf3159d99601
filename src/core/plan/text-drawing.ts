// The drawtext filters that draw a TEXT setting: filter value escaping, font size, anchoring, animation, shadows and multi-line layout.
import type { FontMetrics } from '../font-metrics.js';
import type { TextSetting } from '../setting-types.js';
import { anchorExpr, H_FACTOR, num, V_FACTOR } from './filter-values.js';

/** Escapes a value for an ffmpeg filter option inside a filtergraph (option level, then graph level). */
export function escapeFilterValue(value: string): string {
  const optionLevel = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return optionLevel.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

export interface DrawtextInput {
  setting: TextSetting;
  /** Path of a file holding the exact text (drawn with expansion off, so nothing in it is interpreted). */
  textFile: string;
  fontFile: string;
  frameHeight: number;
  /** Presentation time of the video's first frame: drawtext's t minus this is the position on the video timeline. */
  timeOrigin: number;
}

export function fontPixels(setting: TextSetting, frameHeight: number): number {
  return Math.max(1, Math.round(setting.fontSize * frameHeight));
}

export function drawtextFilter(input: DrawtextInput): string {
  const { setting: s } = input;
  const size = fontPixels(s, input.frameHeight);
  const x = `W*${anchorExpr(s.x, s.animation?.toX, s.animation, input.timeOrigin)}-tw*${H_FACTOR[s.align]}`;
  const y = `H*${anchorExpr(s.y, s.animation?.toY, s.animation, input.timeOrigin)}-th*${V_FACTOR[s.verticalAlign]}`;
  const shadow = shadowOf(s, size);
  return drawtext({ fontFile: input.fontFile, textFile: input.textFile, size, color: colour(s.fontColor, s.fontOpacity), x, y, shadow });
}

interface Drawtext {
  fontFile: string;
  textFile: string;
  size: number;
  color: string;
  x: string;
  y: string;
  shadow?: { color: string; dx: number; dy: number } | undefined;
}

function drawtext(d: Drawtext): string {
  const opts = [
    `fontfile=${escapeFilterValue(d.fontFile)}`,
    `textfile=${escapeFilterValue(d.textFile)}`,
    'expansion=none',
    `fontsize=${d.size}`,
    `fontcolor=${d.color}`,
    `x=${escapeFilterValue(d.x)}`,
    `y=${escapeFilterValue(d.y)}`,
  ];
  if (d.shadow) opts.push(`shadowcolor=${d.shadow.color}`, `shadowx=${d.shadow.dx}`, `shadowy=${d.shadow.dy}`);
  return `drawtext=${opts.join(':')}`;
}

const colour = (rgb: string, opacity: number) => `0x${rgb}@${num(opacity)}`;

function shadowOf(s: TextSetting, size: number): Drawtext['shadow'] {
  const dx = Math.round(s.shadowOffsetX * size);
  const dy = Math.round(s.shadowOffsetY * size);
  return s.shadowOpacity > 0 && (dx !== 0 || dy !== 0) ? { color: colour(s.shadowColor, s.shadowOpacity), dx, dy } : undefined;
}

export interface TextFile {
  /** File name, relative to ffmpeg's working folder. */
  name: string;
  content: string;
}

export interface TextDrawing {
  /** The files the filters read their text from; the caller writes them (UTF-8) before running ffmpeg. */
  files: TextFile[];
  filters: string[];
}

export interface TextDrawingInput extends Omit<DrawtextInput, 'textFile'> {
  /** The setting's position in the watermark: names its text files (text_<i>.txt, or text_<i>_<line>.txt). */
  index: number;
  metrics: FontMetrics;
  /** Folder the filters read the text files from (absolute, for a graph run elsewhere); default: ffmpeg's working folder. */
  textDir?: string;
}

/**
 * The drawtext filters for one TEXT setting. One line is one drawtext, its glyphs' box placed at the anchor. drawtext
 * lays several lines out left-aligned only, so multi-line text gets one drawtext per line, each line aligned on its own
 * (LEFT, CENTER, RIGHT) at the anchor, on baselines one font line pitch (ascent + descent + line gap) apart; the block
 * (first line's ascent to last line's descent) sits at the anchor by verticalAlign. All shadows are drawn before any
 * text, as drawtext does for one string. Empty lines draw nothing but keep their row.
 */
export function textDrawing(input: TextDrawingInput): TextDrawing {
  const { setting: s, index, metrics } = input;
  const lines = s.content.split('\n');
  if (lines.length === 1) {
    const name = `text_${index}.txt`;
    return { files: [{ name, content: s.content }], filters: [drawtextFilter({ ...input, textFile: inDir(input.textDir, name) })] };
  }
  const size = fontPixels(s, input.frameHeight);
  const pitch = (metrics.ascent + metrics.descent + metrics.lineGap) * size;
  const blockHeight = (lines.length - 1) * pitch + (metrics.ascent + metrics.descent) * size;
  const anchorX = `W*${anchorExpr(s.x, s.animation?.toX, s.animation, input.timeOrigin)}`;
  const top = `H*${anchorExpr(s.y, s.animation?.toY, s.animation, input.timeOrigin)}-${num(blockHeight * V_FACTOR[s.verticalAlign])}`;
  const placed = lines.flatMap((line, j) => {
    if (line === '') return [];
    // drawtext puts its first baseline `ascent` (the line's own tallest glyph) below y.
    const baseline = num(j * pitch + metrics.ascent * size);
    return [{ name: `text_${index}_${j}.txt`, content: line, x: `${anchorX}-tw*${H_FACTOR[s.align]}`, y: `${top}+${baseline}-ascent` }];
  });
  const shadow = shadowOf(s, size);
  const base = { fontFile: input.fontFile, size };
  const shadows = shadow
    ? placed.map((p) => drawtext({ ...base, textFile: inDir(input.textDir, p.name), color: shadow.color, x: `${p.x}+${shadow.dx}`, y: `${p.y}+${shadow.dy}` }))
    : [];
  const texts = placed.map((p) => drawtext({ ...base, textFile: inDir(input.textDir, p.name), color: colour(s.fontColor, s.fontOpacity), x: p.x, y: p.y }));
  return { files: placed.map(({ name, content }) => ({ name, content })), filters: [...shadows, ...texts] };
}

const inDir = (dir: string | undefined, name: string) => (dir ? `${dir.replace(/\/+$/, '')}/${name}` : name);
