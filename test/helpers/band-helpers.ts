// What band render tests check on decoded pictures: a red mark that fits the bottom band of a 320x180 title, the
// framemd5 of a horizontal strip (the rows outside or inside a band), and where a frame's red pixels are.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FFMPEG } from '../../harness/tools.js';
import type { RgbFrame } from './media.js';

const run = promisify(execFile);

/** Red, opaque, no shadow, at the bottom centre: inside the bottom band of a 320x180 title (rows 144-180). */
export const FITS_BOTTOM_BAND = {
  content: 'band 42',
  x: 0.5,
  y: 0.96,
  align: 'CENTER',
  verticalAlign: 'BOTTOM',
  fontSize: 0.08,
  fontColor: 'FF0000',
  fontOpacity: 1,
  shadowOpacity: 0,
};

/** One framemd5 per decoded frame of the rows `crop.y` to `crop.y + crop.h` of a picture `width` wide. */
export async function stripMd5s(file: string, crop: { y: number; h: number }, width: number): Promise<string[]> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-an', '-vf', `crop=${width}:${crop.h}:0:${crop.y}`, '-f', 'framemd5', '-'], {
    maxBuffer: 64 << 20,
  });
  return stdout
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.trim().split(/\s+/).at(-1)!);
}

/** The strongly red pixels of a frame (a red mark on a natural picture). */
export function redPixels(frame: RgbFrame): { x: number; y: number }[] {
  const red: { x: number; y: number }[] = [];
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < frame.width; x++) {
      const i = 3 * (y * frame.width + x);
      if (frame.data[i]! - Math.max(frame.data[i + 1]!, frame.data[i + 2]!) > 120) red.push({ x, y });
    }
  return red;
}

/** The bands of a 320x180 title in macroblock rows: the top three and the bottom three (its last 36 of 48 rows shown). */
export const SMALL_TITLE_BANDS = [
  { top: 0, bottom: 3 },
  { top: 9, bottom: 12 },
];
