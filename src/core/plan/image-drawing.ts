// How an IMAGE setting is drawn: its size in pixels on a frame, the ffmpeg run that makes its rendition at that size
// (once, when a watermark is requested: a segment render then decodes a small PNG, never the original), and the
// overlay that puts the rendition at its anchor, moving over the video timeline as drawtext does.
import { IMAGE_LIMITS, type ImageRef, type ImageSetting } from '../setting-types.js';
import { anchorExpr, H_FACTOR, num, V_FACTOR } from './filter-values.js';
import { escapeFilterValue } from './text-drawing.js';

export interface PixelSize {
  width: number;
  height: number;
}

/** The drawn size: `width` of the frame's width, the height keeping the image's aspect; at least 1 px each way. */
export function imagePixels(setting: Pick<ImageSetting, 'width'>, image: Pick<ImageRef, 'width' | 'height'>, frameWidth: number): PixelSize {
  const width = Math.max(1, Math.round(setting.width * frameWidth));
  return { width, height: Math.max(1, Math.round((width * image.height) / image.width)) };
}

/** Why a drawn size cannot be made (a rendition larger than any image wmark accepts), or undefined. */
export function renditionProblem(size: PixelSize): string | undefined {
  const max = IMAGE_LIMITS.maxSide;
  if (size.width <= max && size.height <= max) return undefined;
  return `would be drawn ${size.width}x${size.height} pixels on this video, larger than ${max}x${max}; give a smaller width`;
}

/** The media key name of an image's rendition at a size: beside the original, named by its hash and the size. */
export const renditionName = (sha256: string, size: PixelSize): string => `${sha256}-${size.width}x${size.height}.png`;

/**
 * The ffmpeg arguments that make a rendition: the image decoded (one frame), scaled to its drawn size and written as an
 * RGBA PNG, whatever it was (a JPEG gains an opaque alpha channel, a palette PNG's transparency is kept).
 */
export function imageRenditionArgs(input: string, output: string, size: PixelSize): string[] {
  return [
    '-v',
    'error',
    '-y',
    '-i',
    input,
    '-frames:v',
    '1',
    '-vf',
    `scale=w=${size.width}:h=${size.height}:flags=lanczos,format=rgba`,
    '-f',
    'image2',
    '-c:v',
    'png',
    '-pix_fmt',
    'rgba',
    output,
  ];
}

export interface ImageOverlayInput {
  setting: ImageSetting;
  /** The rendition's file, as the graph names it (relative to ffmpeg's working folder, or absolute). */
  file: string;
  /** Presentation time of the video's first frame: overlay's t minus this is the position on the video timeline. */
  timeOrigin: number;
}

/**
 * An IMAGE as two pieces of a filtergraph: the source (the rendition, read once per ffmpeg run, faded by opacity) and the
 * overlay that puts it on the frame with the edge its alignments name at the anchor. overlay repeats the source's one
 * frame over every frame of the video (its eof_action), and clips what falls outside the frame.
 */
export function imageOverlay(input: ImageOverlayInput): { source: string; overlay: string } {
  const s = input.setting;
  const source = [`movie=filename=${escapeFilterValue(input.file)}`, 'format=rgba', ...(s.opacity < 1 ? [`colorchannelmixer=aa=${num(s.opacity)}`] : [])];
  const x = `W*${anchorExpr(s.x, s.animation?.toX, s.animation, input.timeOrigin)}-w*${H_FACTOR[s.align]}`;
  const y = `H*${anchorExpr(s.y, s.animation?.toY, s.animation, input.timeOrigin)}-h*${V_FACTOR[s.verticalAlign]}`;
  // A still image's place is worked out once; a moving one's every frame.
  const moving = s.animation !== undefined && (s.animation.toX !== s.x || s.animation.toY !== s.y);
  return { source: source.join(','), overlay: `overlay=x=${escapeFilterValue(x)}:y=${escapeFilterValue(y)}:eval=${moving ? 'frame' : 'init'}` };
}
