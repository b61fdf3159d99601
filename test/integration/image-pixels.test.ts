// Where and how the engine draws an IMAGE setting, measured on decoded frames of its HLS output over a flat 336699 clip:
// the logo's edges for every align/verticalAlign, its width, its alpha and opacity, a move over the video timeline, a
// logo partly outside the frame, the order of text and images, and the refusal of one that is never in the frame.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { isWmarkError } from '../../src/core/errors.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { fixtureIn, gradedAlphaPng, solidImage } from '../helpers/images.js';
import { decodeFrame, type RgbFrame } from '../helpers/media.js';
import {
  type Box,
  blend,
  colourBox,
  ingestFixture,
  maxChannelDiff,
  meanRgb,
  type Rgb,
  renderWith,
  SMALL,
  segmentIndexAt,
  settingsOf,
} from '../helpers/watermark-helpers.js';

const { width: W, height: H } = SMALL;
const KEY = 'flat-336699';
const RED: Rgb = [255, 0, 0];
/** Encoder tolerance for a colour in a solid area (8-bit levels per channel, after yuv420p + x264 round trips). */
const COLOUR_TOLERANCE = 10;

let engine: TestEngine;
let video: VideoRecord;
const dir = tempDir('image-pixels');
/** 64x32 opaque red: drawn 0.2 of the 320-px frame wide, it keeps its own size (no scaling blur at its edges). */
let red: string;

beforeAll(async () => {
  engine = await testEngine();
  video = await ingestFixture(engine, await flat('336699', 12), KEY);
  red = solidImage(fixtureIn(dir, 'red.png'), 'FF0000', 64, 32);
});
afterAll(async () => await engine?.dispose());

async function frameOf(settings: Record<string, unknown>[], seconds = 1): Promise<{ frame: RgbFrame; bg: Rgb; playlist: string }> {
  const r = await renderWith(engine, KEY, settings);
  expect(r.record.status).toBe('READY');
  const frame = await decodeFrame(r.playlist, seconds, SMALL);
  return { frame, bg: [0x33, 0x66, 0x99], playlist: r.playlist };
}

/** The red logo's box (inclusive pixel bounds), or a failure naming what was found instead. */
function redBox(frame: RgbFrame): Box & { count: number } {
  const b = colourBox(frame, RED, 60);
  if (!b) throw new Error('no red logo in the frame');
  return b;
}

const image = (content: string, fields: Record<string, unknown> = {}) => ({ type: 'IMAGE', content, ...fields });

describe('anchor and alignment', () => {
  const x = 0.4;
  const y = 0.6;
  const cases = (['LEFT', 'CENTER', 'RIGHT'] as const).flatMap((align) =>
    (['TOP', 'MIDDLE', 'BOTTOM'] as const).map((verticalAlign) => [align, verticalAlign] as const),
  );

  it.each(cases)('align %s / verticalAlign %s puts that edge of the logo on (x*W, y*H)', async (align, verticalAlign) => {
    const { frame } = await frameOf([image(red, { x, y, align, verticalAlign })]);
    const b = redBox(frame);
    // The logo spans [x0, x1 + 1) and [y0, y1 + 1): 64x32 pixels, every one of them red.
    expect(b.x1 - b.x0 + 1).toBe(64);
    expect(b.y1 - b.y0 + 1).toBe(32);
    expect(b.count).toBe(64 * 32);
    const left = { LEFT: x * W, CENTER: x * W - 32, RIGHT: x * W - 64 }[align];
    const top = { TOP: y * H, MIDDLE: y * H - 16, BOTTOM: y * H - 32 }[verticalAlign];
    expect(b.x0).toBe(left);
    expect(b.y0).toBe(top);
  });
});

describe('width', () => {
  it.each([
    [0.1, 32, 16],
    [0.5, 160, 80],
  ])('width %s of the 320-px frame draws the logo %s px wide, %s px tall (its aspect kept)', async (width, w, h) => {
    const { frame } = await frameOf([image(red, { width, x: 0.5, y: 0.5 })]);
    const b = redBox(frame);
    expect(b.x1 - b.x0 + 1).toBe(w);
    expect(b.y1 - b.y0 + 1).toBe(h);
    expect(Math.abs((b.x0 + b.x1 + 1) / 2 - W / 2)).toBeLessThanOrEqual(1);
    expect(Math.abs((b.y0 + b.y1 + 1) / 2 - H / 2)).toBeLessThanOrEqual(1);
  });
});

describe('alpha and opacity', () => {
  /** The middle of each quarter of a 64x32 logo drawn with its top-left corner at (96, 64). */
  const quarter = (i: number): Box => ({ x0: 96 + 16 * i + 4, x1: 96 + 16 * i + 11, y0: 64 + 8, y1: 64 + 23 });
  const at = { x: 0.3, y: 64 / H, align: 'LEFT', verticalAlign: 'TOP' };
  const bg: Rgb = [0x33, 0x66, 0x99];

  it("blends a PNG's transparency onto the frame: opaque, half, a quarter and fully transparent quarters", async () => {
    const graded = gradedAlphaPng(fixtureIn(dir, 'graded.png'));
    const { frame } = await frameOf([image(graded, at)]);
    [1, 128 / 255, 64 / 255, 0].forEach((alpha, i) => {
      const got = meanRgb(frame, quarter(i));
      const expected = blend(bg, RED, alpha);
      expect(maxChannelDiff(got, expected), `quarter ${i}: got ${got.map(Math.round)} expected ${expected.map(Math.round)}`).toBeLessThanOrEqual(
        COLOUR_TOLERANCE,
      );
    });
  });

  it('fades the whole logo by opacity, on top of its own transparency', async () => {
    const graded = gradedAlphaPng(fixtureIn(dir, 'graded-2.png'));
    const { frame } = await frameOf([image(graded, { ...at, opacity: 0.5 })]);
    [0.5, (0.5 * 128) / 255, 0].forEach((alpha, i) => {
      const got = meanRgb(frame, quarter(i === 2 ? 3 : i));
      expect(maxChannelDiff(got, blend(bg, RED, alpha)), `quarter ${i} at alpha ${alpha}`).toBeLessThanOrEqual(COLOUR_TOLERANCE);
    });
  });

  it('draws nothing at opacity 0', async () => {
    const { frame } = await frameOf([image(red, { opacity: 0 })]);
    expect(colourBox(frame, RED, 120)).toBeUndefined();
  });
});

describe('formats', () => {
  it.each([
    ['JPEG', 'green.jpg', '00FF00', [0, 255, 0]],
    ['WebP', 'blue.webp', '0000FF', [0, 0, 255]],
  ] as const)('draws a %s as it draws a PNG', async (_format, name, colour, rgb) => {
    const file = solidImage(fixtureIn(dir, name), colour, 64, 32);
    const { frame } = await frameOf([image(file, { x: 0.25, y: 0.25, align: 'LEFT', verticalAlign: 'TOP' })]);
    const b = colourBox(frame, [...rgb], 60);
    expect(b).toMatchObject({ x0: 80, y0: 45 - 1, x1: 80 + 63 });
    expect(maxChannelDiff(meanRgb(frame, { x0: 90, x1: 130, y0: 52, y1: 68 }), [...rgb])).toBeLessThanOrEqual(COLOUR_TOLERANCE + 4);
  });
});

describe('MOVE animation over the video timeline', () => {
  const from = { x: 0.1, y: 0.2 };
  const to = { x: 0.7, y: 0.6 };
  const [start, end] = [2, 9];
  const progress = (t: number) => Math.min(1, Math.max(0, (t - start) / (end - start)));
  let playlist: string;
  const boxes = new Map<number, Box>();
  const leftTop = async (t: number) => {
    if (!boxes.has(t)) boxes.set(t, redBox(await decodeFrame(playlist, t, SMALL)));
    return boxes.get(t)!;
  };

  beforeAll(async () => {
    const r = await renderWith(engine, KEY, [
      image(red, { ...from, align: 'LEFT', verticalAlign: 'TOP', animation: { type: 'MOVE', toX: to.x, toY: to.y, startTime: start, endTime: end } }),
    ]);
    playlist = r.playlist;
  });

  it('holds the start position before startTime and the end position after endTime', async () => {
    expect(await leftTop(0)).toMatchObject({ x0: from.x * W, y0: from.y * H });
    expect(await leftTop(1.9)).toMatchObject({ x0: from.x * W, y0: from.y * H });
    expect(await leftTop(9.5)).toMatchObject({ x0: to.x * W, y0: to.y * H });
    expect(await leftTop(11.5)).toMatchObject({ x0: to.x * W, y0: to.y * H });
  });

  it('is at the linear point in between, also in later segments, and crosses segment boundaries without a jump', async () => {
    // overlay places a picture on even pixels in a 4:2:0 frame: within 2 px of the exact point.
    for (const t of [2.5, 3.9, 4.1, 5.5, 7.9, 8.1]) {
      const b = await leftTop(t);
      expect(Math.abs(b.x0 - (from.x + (to.x - from.x) * progress(t)) * W), `x at ${t}s`).toBeLessThanOrEqual(2);
      expect(Math.abs(b.y0 - (from.y + (to.y - from.y) * progress(t)) * H), `y at ${t}s`).toBeLessThanOrEqual(2);
    }
    expect(segmentIndexAt(video, 4.1)).toBe(segmentIndexAt(video, 3.9) + 1);
    expect(segmentIndexAt(video, 8.1)).toBe(segmentIndexAt(video, 7.9) + 1);
  });
});

describe('a logo partly outside the frame', () => {
  it('shows the part inside: the right half of a logo hanging over the left edge, a quarter in the bottom-right corner', async () => {
    const { frame } = await frameOf([
      image(red, { x: -0.1, y: 0.25, align: 'LEFT', verticalAlign: 'TOP' }),
      image(red, { x: 1, y: 1, align: 'CENTER', verticalAlign: 'MIDDLE' }),
    ]);
    const left = colourBox(frame, RED, 60, { x0: 0, y0: 0, x1: W / 2, y1: H / 2 });
    expect(left).toMatchObject({ x0: 0, x1: 31, y0: 45 - 1 });
    const corner = colourBox(frame, RED, 60, { x0: W / 2, y0: H / 2, x1: W - 1, y1: H - 1 });
    expect(corner).toMatchObject({ x0: W - 32, x1: W - 1, y0: H - 16, y1: H - 1 });
  });

  it('refuses a logo that never enters the frame, naming the field, as it refuses such text', async () => {
    const error = await requestWatermark(engine, {
      video: { key: KEY },
      settings: settingsOf([{ content: 'shown' }, image(red, { x: 1.05, align: 'LEFT' })]),
      containers: ['m3u8'],
    }).catch((e: unknown) => e);
    expect(isWmarkError(error) && error.code).toBe('VALIDATION_FAILED');
    expect((error as Error).message).toMatch(/^settings\[1\]\.x: the image at x 1\.05, y 0\.5 lies wholly outside the frame, so nothing would be drawn/);
    expect((error as { httpStatus: number }).httpStatus).toBe(400);
    expect((error as { exitCode: number }).exitCode).toBe(2);
  });
});

describe('text and images in one watermark', () => {
  const block = { content: '█', x: 0.5, y: 0.5, fontSize: 0.4, fontColor: 'FFFFFF', fontOpacity: 1, shadowOpacity: 0 };
  const centre = { x0: W / 2 - 4, x1: W / 2 + 3, y0: H / 2 - 4, y1: H / 2 + 3 };

  it('draws them in order, the later on top', async () => {
    const textOnTop = await frameOf([image(red), block]);
    expect(maxChannelDiff(meanRgb(textOnTop.frame, centre), [255, 255, 255])).toBeLessThanOrEqual(COLOUR_TOLERANCE);
    const imageOnTop = await frameOf([block, image(red)]);
    expect(maxChannelDiff(meanRgb(imageOnTop.frame, centre), RED)).toBeLessThanOrEqual(COLOUR_TOLERANCE);
  });
});
