// The pictures of docs/settings.md are drawn by the real drawing plan and ffmpeg, and show what the page says: text
// lands beside its anchor on the side its alignment names, and the committed pictures are the ones the script draws.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, tempDir } from '../../harness/fixtures.js';
import { FFMPEG } from '../../harness/tools.js';
import { EXAMPLES, FRAME, type PictureExample, renderPicture } from '../../scripts/settings-pictures.js';

const out = tempDir('pictures');
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The picture (or a crop of it, one frame wide) as grey levels. */
function rgb(png: string, crop?: string): { width: number; height: number; at(x: number, y: number): number } {
  const data = execFileSync(FFMPEG, ['-v', 'error', '-i', png, ...(crop ? ['-vf', crop] : []), '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], {
    maxBuffer: 16 << 20,
  });
  const width = FRAME.width;
  return { width, height: data.length / width, at: (x, y) => data[y * width + x]! };
}

/** Bright (text) pixels in a box of the frame, as fractions of width and height. */
function brightIn(img: ReturnType<typeof rgb>, x0: number, y0: number, x1: number, y1: number): number {
  let n = 0;
  for (let y = Math.floor(y0 * img.height); y < Math.ceil(y1 * img.height); y++) {
    for (let x = Math.floor(x0 * img.width); x < Math.ceil(x1 * img.width); x++) if (img.at(x, y) > 170) n++;
  }
  return n;
}

function draw(name: string): ReturnType<typeof rgb> {
  const example = EXAMPLES.find((e) => e.name === name) as PictureExample;
  const file = path.join(out, name);
  renderPicture(example, file);
  return rgb(file);
}

describe('the settings pictures', () => {
  it('corners: LEFT TOP text hangs right of and below its anchor, RIGHT BOTTOM text sits left of and above it', () => {
    const img = draw('corners.png');
    expect(img.height).toBe(FRAME.height);
    // x 0.03, y 0.04 LEFT TOP: text in the top-left, below y 0.04 and right of x 0.03.
    expect(brightIn(img, 0.04, 0.05, 0.5, 0.12)).toBeGreaterThan(50);
    // x 0.97, y 0.95 RIGHT BOTTOM: text ends at x 0.97 and sits above y 0.95.
    expect(brightIn(img, 0.5, 0.86, 0.96, 0.94)).toBeGreaterThan(50);
    // Nothing beyond the anchors, nor in the middle of the frame (the grid lines are dim).
    expect(brightIn(img, 0.975, 0.0, 1, 1)).toBe(0);
    expect(brightIn(img, 0, 0.96, 1, 1)).toBe(0);
    expect(brightIn(img, 0.1, 0.3, 0.9, 0.7)).toBe(0);
  });

  it('align: LEFT starts at x 0.5, RIGHT ends there', () => {
    const img = draw('align.png');
    expect(brightIn(img, 0.51, 0.2, 0.9, 0.3)).toBeGreaterThan(50);
    expect(brightIn(img, 0, 0.2, 0.49, 0.3)).toBe(0);
    expect(brightIn(img, 0.1, 0.7, 0.49, 0.8)).toBeGreaterThan(50);
    expect(brightIn(img, 0.51, 0.7, 1, 0.8)).toBe(0);
  });

  it('animation: the text is at its start, half-way and end positions in the three frames', () => {
    draw('animation.png');
    // Three tiles of 480 + 4 px side by side, at 0 s (before the move), 4 s (half-way) and 8 s (after it).
    const tile = (i: number) => rgb(path.join(out, 'animation.png'), `crop=${FRAME.width}:${FRAME.height}:${i * (FRAME.width + 4)}:0`);
    const at = (img: ReturnType<typeof rgb>, x: number, y: number) => brightIn(img, x - 0.08, y - 0.06, x + 0.08, y + 0.06);
    const [start, middle, end] = [tile(0), tile(1), tile(2)];
    expect(at(start, 0.1, 0.2)).toBeGreaterThan(50);
    expect(at(start, 0.5, 0.5) + at(start, 0.9, 0.8)).toBe(0);
    expect(at(middle, 0.5, 0.5)).toBeGreaterThan(50);
    expect(at(middle, 0.1, 0.2) + at(middle, 0.9, 0.8)).toBe(0);
    expect(at(end, 0.9, 0.8)).toBeGreaterThan(50);
    expect(at(end, 0.1, 0.2) + at(end, 0.5, 0.5)).toBe(0);
  });

  it('image-logo: the logo (a card in a transparent margin) hangs right of and below its anchor, drawn 0.2 of the width', () => {
    const img = draw('image-logo.png');
    // 240x140 drawn 96 px wide: scale 0.4, so the 20 px margin is 8 px and the 200x100 card 80x40, from (14, 11).
    const [x0, y0] = [Math.round(0.03 * FRAME.width), Math.round(0.04 * FRAME.height)];
    const card = 0.299 * 0x1e + 0.587 * 0x88 + 0.114 * 0xe5;
    const background = 0.299 * 0x25 + 0.587 * 0x32 + 0.114 * 0x3f;
    for (const [x, y] of [
      [x0 + 11, y0 + 11],
      [x0 + 85, y0 + 45],
    ] as const)
      expect(Math.abs(img.at(x, y) - card), `card at ${x},${y}`).toBeLessThan(6);
    // The margin and beyond the logo show the frame through.
    for (const [x, y] of [
      [x0 + 4, y0 + 20],
      [x0 + 20, y0 + 52],
      [x0 + 100, y0 + 20],
    ] as const)
      expect(Math.abs(img.at(x, y) - background), `frame at ${x},${y}`).toBeLessThan(6);
  });

  it('the committed pictures are the ones the script draws now', () => {
    for (const example of EXAMPLES) {
      const fresh = path.join(out, `fresh-${example.name}`);
      renderPicture(example, fresh);
      const a = execFileSync(FFMPEG, ['-v', 'error', '-i', fresh, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 16 << 20 });
      const b = execFileSync(FFMPEG, ['-v', 'error', '-i', path.join(REPO, 'docs', 'img', example.name), '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
        maxBuffer: 16 << 20,
      });
      expect(b.equals(a), `${example.name} is out of date: run node --import tsx scripts/settings-pictures.ts`).toBe(true);
      expect(readFileSync(path.join(REPO, 'docs', 'img', example.name)).length).toBeLessThan(40_000);
    }
  });
});
