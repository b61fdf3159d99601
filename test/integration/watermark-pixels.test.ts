// Where and how the engine draws text, measured on decoded frames of its HLS output over a flat 336699 clip (units of
// docs/settings.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { decodeFrame, diffBox, type RgbFrame } from '../helpers/media.js';
import {
  type Box,
  blend,
  colourBox,
  diffBoxIn,
  ingestFixture,
  lineBoxes,
  maxChannelDiff,
  meanRgb,
  parsePlaylist,
  type Rgb,
  renderWith,
  SMALL,
  segmentIndexAt,
} from '../helpers/watermark-helpers.js';

const { width: W, height: H } = SMALL;
const KEY = 'flat-336699';
/** Encoder tolerance for a colour in a solid area (8-bit levels per channel, after yuv420p + x264 round trips). */
const COLOUR_TOLERANCE = 10;

let engine: TestEngine;
let video: VideoRecord;

beforeAll(async () => {
  engine = await testEngine();
  video = await ingestFixture(engine, await flat('336699', 12), KEY);
});
afterAll(async () => await engine?.dispose());

async function frameOf(settings: Record<string, unknown>[], seconds = 1): Promise<{ frame: RgbFrame; bg: Rgb; playlist: string }> {
  const r = await renderWith(engine, KEY, settings);
  expect(r.record.status).toBe('READY');
  const frame = await decodeFrame(r.playlist, seconds, SMALL);
  return { frame, bg: meanRgb(frame, { x0: 0, y0: 0, x1: 5, y1: 5 }), playlist: r.playlist };
}

function box(frame: RgbFrame, bg: Rgb): Box & { count: number } {
  const b = diffBox(frame, bg);
  if (!b) throw new Error('no text drawn');
  return b;
}

/** Opaque, shadowless text so the measured box is the glyphs' own. */
const SOLID = { fontColor: 'FFFFFF', fontOpacity: 1, shadowOpacity: 0 } as const;

describe('anchor and alignment', () => {
  const x = 0.4;
  const y = 0.6;
  const cases = (['LEFT', 'CENTER', 'RIGHT'] as const).flatMap((align) =>
    (['TOP', 'MIDDLE', 'BOTTOM'] as const).map((verticalAlign) => [align, verticalAlign] as const),
  );

  it.each(cases)('align %s / verticalAlign %s puts that edge of the text on (x*W, y*H)', async (align, verticalAlign) => {
    const { frame, bg } = await frameOf([{ content: 'HHHH', x, y, align, verticalAlign, fontSize: 0.1, ...SOLID }]);
    const b = box(frame, bg);
    // Box edges as pixel boundaries: the ink spans [x0, x1 + 1).
    const left = b.x0;
    const right = b.x1 + 1;
    const top = b.y0;
    const bottom = b.y1 + 1;
    // Horizontal edges may sit a glyph side bearing (~2 px at 18 px) inside the anchor; vertical edges are the ink itself.
    const horizontal = { LEFT: left, CENTER: (left + right) / 2, RIGHT: right }[align];
    const vertical = { TOP: top, MIDDLE: (top + bottom) / 2, BOTTOM: bottom }[verticalAlign];
    expect(Math.abs(horizontal - x * W), `horizontal edge ${horizontal} vs ${x * W}`).toBeLessThanOrEqual(3);
    expect(Math.abs(vertical - y * H), `vertical edge ${vertical} vs ${y * H}`).toBeLessThanOrEqual(1.5);
    // The ink is where it should be on the other side too: nowhere on the wrong side of the anchor.
    if (align === 'LEFT') expect(left).toBeGreaterThanOrEqual(x * W);
    if (align === 'RIGHT') expect(right).toBeLessThanOrEqual(x * W);
    if (verticalAlign === 'TOP') expect(top).toBeGreaterThanOrEqual(y * H - 0.5);
    if (verticalAlign === 'BOTTOM') expect(bottom).toBeLessThanOrEqual(y * H + 0.5);
  });
});

describe('font size', () => {
  it('is a fraction of the frame height: cap height ~0.73 of fontSize*H, and twice the size draws twice as large', async () => {
    const small = await frameOf([{ content: 'HHHH', fontSize: 0.1, ...SOLID }]);
    const large = await frameOf([{ content: 'HHHH', fontSize: 0.2, ...SOLID }]);
    const s = box(small.frame, small.bg);
    const l = box(large.frame, large.bg);
    const sh = s.y1 - s.y0 + 1;
    const lh = l.y1 - l.y0 + 1;
    const sw = s.x1 - s.x0 + 1;
    const lw = l.x1 - l.x0 + 1;
    // DejaVu Sans: capital H is 0.729 em high; fontSize*H is the em in pixels (18 px and 36 px here).
    expect(sh).toBeGreaterThanOrEqual(Math.floor(0.729 * 0.1 * H) - 1);
    expect(sh).toBeLessThanOrEqual(Math.ceil(0.729 * 0.1 * H) + 1);
    expect(lh).toBeGreaterThanOrEqual(Math.floor(0.729 * 0.2 * H) - 1);
    expect(lh).toBeLessThanOrEqual(Math.ceil(0.729 * 0.2 * H) + 1);
    // Twice the font size: twice the height and width, give or take the anti-aliased edge pixels.
    expect(Math.abs(lh - 2 * sh), `heights ${sh} and ${lh}`).toBeLessThanOrEqual(2);
    expect(Math.abs(lw - 2 * sw), `widths ${sw} and ${lw}`).toBeLessThanOrEqual(3);
  });
});

describe('colour and opacity', () => {
  it.each([
    ['FF0000', 1],
    ['FF0000', 0.5],
    ['FFFF00', 0.25],
    ['00FF00', 0.8],
  ] as const)('fontColor %s at opacity %s: a solid glyph area is bg*(1-a) + colour*a', async (fontColor, fontOpacity) => {
    const { frame, bg } = await frameOf([{ content: '█', fontSize: 0.4, fontColor, fontOpacity, shadowOpacity: 0 }]);
    const b = diffBoxIn(frame, bg, { x0: 0, y0: 0, x1: W - 1, y1: H - 1 }, 30);
    expect(b).toBeDefined();
    // The middle half of the block: away from anti-aliased and chroma-subsampled edges.
    const w = b!.x1 - b!.x0;
    const h = b!.y1 - b!.y0;
    const inner = { x0: b!.x0 + Math.round(w / 4), x1: b!.x1 - Math.round(w / 4), y0: b!.y0 + Math.round(h / 4), y1: b!.y1 - Math.round(h / 4) };
    const colour: Rgb = [parseInt(fontColor.slice(0, 2), 16), parseInt(fontColor.slice(2, 4), 16), parseInt(fontColor.slice(4, 6), 16)];
    const expected = blend(bg, colour, fontOpacity);
    const got = meanRgb(frame, inner);
    expect(maxChannelDiff(got, expected), `got ${got.map(Math.round)} expected ${expected.map(Math.round)} on bg ${bg.map(Math.round)}`).toBeLessThanOrEqual(
      COLOUR_TOLERANCE,
    );
    // Every pixel of that area, not only the mean.
    for (let yy = inner.y0; yy <= inner.y1; yy += 3) {
      for (let xx = inner.x0; xx <= inner.x1; xx += 3) expect(maxChannelDiff(frame.at(xx, yy), expected)).toBeLessThanOrEqual(COLOUR_TOLERANCE + 4);
    }
  });

  it('opacity 0 draws nothing', async () => {
    const { frame, bg } = await frameOf([{ content: 'HHHH', fontSize: 0.2, fontColor: 'FF0000', fontOpacity: 0, shadowOpacity: 0 }]);
    expect(diffBox(frame, bg, 30)).toBeUndefined();
  });
});

describe('shadow', () => {
  it.each([
    [0.1, 0.05],
    [-0.08, 0.12],
  ])(
    'shadowOffsetX %s / shadowOffsetY %s (fractions of the font size) shift the shadow by round(offset*fontPx) pixels',
    async (shadowOffsetX, shadowOffsetY) => {
      const fontSize = 0.4;
      const fontPx = Math.round(fontSize * H); // 72
      const { frame } = await frameOf([
        { content: 'H', x: 0.5, y: 0.5, fontSize, fontColor: 'FFFFFF', fontOpacity: 1, shadowColor: '000000', shadowOpacity: 1, shadowOffsetX, shadowOffsetY },
      ]);
      const text = colourBox(frame, [255, 255, 255], 40);
      const shadow = colourBox(frame, [0, 0, 0], 40);
      expect(text).toBeDefined();
      expect(shadow).toBeDefined();
      const dx = Math.round(shadowOffsetX * fontPx);
      const dy = Math.round(shadowOffsetY * fontPx);
      // The shadow is the text's shape moved by (dx, dy); the text covers it on the near side, so compare the far edges.
      const farX = dx >= 0 ? shadow!.x1 - text!.x1 : shadow!.x0 - text!.x0;
      const farY = dy >= 0 ? shadow!.y1 - text!.y1 : shadow!.y0 - text!.y0;
      expect(farX, 'shadow x offset in pixels').toBe(dx);
      expect(farY, 'shadow y offset in pixels').toBe(dy);
    },
  );

  it('shadow-only pixels are shadowColor blended at shadowOpacity', async () => {
    const fontSize = 0.4;
    const fontPx = Math.round(fontSize * H);
    const shadowOffsetX = 0.3; // a 22 px strip right of a solid block is shadow only
    const { frame, bg } = await frameOf([
      {
        content: '█',
        x: 0.4,
        y: 0.5,
        fontSize,
        fontColor: 'FFFFFF',
        fontOpacity: 1,
        shadowColor: 'FFFF00',
        shadowOpacity: 0.5,
        shadowOffsetX,
        shadowOffsetY: 0,
      },
    ]);
    const text = colourBox(frame, [255, 255, 255], 40)!;
    expect(text).toBeDefined();
    const dx = Math.round(shadowOffsetX * fontPx);
    const rows = { y0: text.y0 + 10, y1: text.y1 - 10 };
    const strip = { x0: text.x1 + 4, x1: text.x1 + dx - 3, ...rows };
    const got = meanRgb(frame, strip);
    const expected = blend(bg, [255, 255, 0], 0.5);
    expect(maxChannelDiff(got, expected), `got ${got.map(Math.round)} expected ${expected.map(Math.round)}`).toBeLessThanOrEqual(COLOUR_TOLERANCE);
    // The strip ends exactly dx pixels right of the text: shadow up to there, untouched background just beyond.
    const end = meanRgb(frame, { x0: text.x1 + dx - 2, x1: text.x1 + dx - 1, ...rows });
    expect(maxChannelDiff(end, expected), `last shadow columns ${end.map(Math.round)}`).toBeLessThanOrEqual(COLOUR_TOLERANCE);
    const beyond = meanRgb(frame, { x0: text.x1 + dx + 2, x1: text.x1 + dx + 6, ...rows });
    expect(maxChannelDiff(beyond, bg), `beyond the shadow ${beyond.map(Math.round)}`).toBeLessThanOrEqual(6);
  });
});

describe('MOVE animation over the video timeline', () => {
  const from = { x: 0.1, y: 0.2 };
  const to = { x: 0.7, y: 0.6 };
  const start = 2;
  const end = 9;
  let playlist: string;
  const boxes = new Map<number, Box>();

  const progress = (t: number) => Math.min(1, Math.max(0, (t - start) / (end - start)));
  async function leftTop(t: number): Promise<Box> {
    if (!boxes.has(t)) {
      const frame = await decodeFrame(playlist, t, SMALL);
      const b = diffBox(frame, meanRgb(frame, { x0: W - 6, y0: H - 6, x1: W - 1, y1: H - 1 }));
      if (!b) throw new Error(`no text at ${t}s`);
      boxes.set(t, b);
    }
    return boxes.get(t)!;
  }

  beforeAll(async () => {
    const r = await renderWith(engine, KEY, [
      {
        content: 'H',
        x: from.x,
        y: from.y,
        align: 'LEFT',
        verticalAlign: 'TOP',
        fontSize: 0.15,
        ...SOLID,
        animation: { type: 'MOVE', toX: to.x, toY: to.y, startTime: start, endTime: end },
      },
    ]);
    playlist = r.playlist;
  });

  it('holds the start position before startTime', async () => {
    const b0 = await leftTop(0);
    expect(Math.abs(b0.x0 - from.x * W)).toBeLessThanOrEqual(3);
    expect(Math.abs(b0.y0 - from.y * H)).toBeLessThanOrEqual(1);
    for (const t of [1, 1.9]) expect(await leftTop(t)).toEqual(b0);
  });

  it('holds the end position after endTime', async () => {
    const b0 = await leftTop(0);
    const bEnd = await leftTop(9.5);
    expect(Math.abs(bEnd.x0 - b0.x0 - (to.x - from.x) * W)).toBeLessThanOrEqual(1);
    expect(Math.abs(bEnd.y0 - b0.y0 - (to.y - from.y) * H)).toBeLessThanOrEqual(1);
    expect(await leftTop(11.5)).toEqual(bEnd);
  });

  it('is at the linear point in between, also in a later segment (5.5 s is in segment 4, the first 4-s GOP after the lead)', async () => {
    const segments = parsePlaylist(playlist).segments;
    const later = segmentIndexAt(video, 5.5);
    expect(later).toBe(4);
    const laterStart = segments.slice(0, later).reduce((a, s) => a + s.duration, 0);
    expect(5.5).toBeGreaterThan(laterStart);
    expect(5.5).toBeLessThan(laterStart + segments[later]!.duration);
    const b0 = await leftTop(0);
    for (const t of [2.5, 5.5, 7]) {
      const b = await leftTop(t);
      const dx = b.x0 - b0.x0;
      const dy = b.y0 - b0.y0;
      expect(Math.abs(dx - (to.x - from.x) * W * progress(t)), `x shift at ${t}s`).toBeLessThanOrEqual(1.5);
      expect(Math.abs(dy - (to.y - from.y) * H * progress(t)), `y shift at ${t}s`).toBeLessThanOrEqual(1.5);
    }
  });

  // Every boundary of the 12 s clip: after the lead segments (0.5 s, 0.5 s, 1 s, 2 s), then between 4-s GOPs.
  it.each([
    [0.4, 0.6],
    [0.9, 1.1],
    [1.9, 2.1],
    [3.9, 4.1],
    [7.9, 8.1],
  ])('moves smoothly across the segment boundary between %s s and %s s', async (before, after) => {
    expect(segmentIndexAt(video, after), 'the two moments are in consecutive segments').toBe(segmentIndexAt(video, before) + 1);
    const a = await leftTop(before);
    const b = await leftTop(after);
    const expectedX = (to.x - from.x) * W * (progress(after) - progress(before));
    const expectedY = (to.y - from.y) * H * (progress(after) - progress(before));
    expect(Math.abs(b.x0 - a.x0 - expectedX), `x jump ${b.x0 - a.x0} vs ${expectedX}`).toBeLessThanOrEqual(1.5);
    expect(Math.abs(b.y0 - a.y0 - expectedY), `y jump ${b.y0 - a.y0} vs ${expectedY}`).toBeLessThanOrEqual(1.5);
  });
});

describe('MOVE leftwards and off the frame (negative toX)', () => {
  it('moves from x 0.8 to toX -0.5 over 0-10 s: linear on the way, gone from the frame at the end', async () => {
    const r = await renderWith(engine, KEY, [
      { content: 'H', x: 0.8, y: 0.5, align: 'LEFT', verticalAlign: 'TOP', fontSize: 0.15, ...SOLID, animation: { toX: -0.5, startTime: 0, endTime: 10 } },
    ]);
    const leftEdge = async (t: number) => {
      const frame = await decodeFrame(r.playlist, t, SMALL);
      return diffBox(frame, meanRgb(frame, { x0: 0, y0: 0, x1: 5, y1: 5 }))?.x0;
    };
    const start = await leftEdge(0);
    expect(Math.abs(start! - 0.8 * W)).toBeLessThanOrEqual(3);
    for (const t of [2.5, 5]) expect(Math.abs((await leftEdge(t))! - start! + 1.3 * W * (t / 10)), `at ${t}s`).toBeLessThanOrEqual(1.5);
    // -0.5 of the width: nothing of the text is left in the frame.
    expect(await leftEdge(11)).toBeUndefined();
  });
});

describe('several settings', () => {
  it('draws every setting: two texts in opposite corners, each with its own colour and place', async () => {
    const { frame, bg } = await frameOf([
      { content: 'TL', x: 0.03, y: 0.05, align: 'LEFT', verticalAlign: 'TOP', fontSize: 0.12, fontColor: 'FF0000', fontOpacity: 1, shadowOpacity: 0 },
      { content: 'BR', x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontSize: 0.12, fontColor: '00FF00', fontOpacity: 1, shadowOpacity: 0 },
    ]);
    const topLeft = diffBoxIn(frame, bg, { x0: 0, y0: 0, x1: W / 2 - 1, y1: H / 2 - 1 });
    const bottomRight = diffBoxIn(frame, bg, { x0: W / 2, y0: H / 2, x1: W - 1, y1: H - 1 });
    expect(topLeft).toBeDefined();
    expect(bottomRight).toBeDefined();
    // Nothing anywhere else.
    expect(diffBoxIn(frame, bg, { x0: W / 2, y0: 0, x1: W - 1, y1: H / 2 - 1 })).toBeUndefined();
    expect(diffBoxIn(frame, bg, { x0: 0, y0: H / 2, x1: W / 2 - 1, y1: H - 1 })).toBeUndefined();
    expect(Math.abs(topLeft!.x0 - 0.03 * W)).toBeLessThanOrEqual(3);
    expect(Math.abs(topLeft!.y0 - 0.05 * H)).toBeLessThanOrEqual(1);
    expect(Math.abs(bottomRight!.x1 + 1 - 0.97 * W)).toBeLessThanOrEqual(3);
    expect(Math.abs(bottomRight!.y1 + 1 - 0.95 * H)).toBeLessThanOrEqual(1);
    // Each text in its own colour: the most saturated pixel of each box.
    expect(colourBox(frame, [255, 0, 0], 40, topLeft!)).toBeDefined();
    expect(colourBox(frame, [0, 255, 0], 40, topLeft!)).toBeUndefined();
    expect(colourBox(frame, [0, 255, 0], 40, bottomRight!)).toBeDefined();
    expect(colourBox(frame, [255, 0, 0], 40, bottomRight!)).toBeUndefined();
  });
});

describe('multi-line text', () => {
  /** DejaVu Sans (hhea): ascender 1901, descender 483 of 2048 units per em, no line gap. */
  const ASCENT = 1901 / 2048;
  const DESCENT = 483 / 2048;
  const FONT_PX = 18; // 0.1 x 180
  const PITCH = (ASCENT + DESCENT) * FONT_PX; // 20.95 px
  const LINES = ['HH', 'HHHHHH', 'HHHH'];
  /** Ink threshold (sum over RGB) half-way from the 336699 background to white: encoder ringing stays below it. */
  const INK = 230;

  it.each(['LEFT', 'CENTER', 'RIGHT'] as const)('align %s holds for every line, on baselines one line pitch apart, the block centred on y', async (align) => {
    const x = 0.5;
    const y = 0.55;
    const { frame, bg } = await frameOf([{ content: LINES.join('\n'), x, y, align, verticalAlign: 'MIDDLE', fontSize: 0.1, ...SOLID }]);
    const boxes = lineBoxes(frame, bg, INK);
    expect(boxes).toHaveLength(3);
    const widths = boxes.map((b) => b.x1 - b.x0 + 1);
    // The lines are 2, 6 and 4 capitals wide: each box is its own line, not the block.
    expect(widths[1]! / widths[0]!).toBeGreaterThan(2.5);
    expect(widths[2]! / widths[0]!).toBeGreaterThan(1.6);
    for (const b of boxes) {
      const edge = { LEFT: b.x0, CENTER: (b.x0 + b.x1 + 1) / 2, RIGHT: b.x1 + 1 }[align];
      expect(Math.abs(edge - x * W), `${align} edge ${edge} vs ${x * W}`).toBeLessThanOrEqual(3);
    }
    // Capitals sit on the baseline: a box's bottom edge is its line's baseline.
    const baselines = boxes.map((b) => b.y1 + 1);
    expect(Math.abs(baselines[1]! - baselines[0]! - PITCH)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(baselines[2]! - baselines[1]! - PITCH)).toBeLessThanOrEqual(1.5);
    const blockTop = baselines[0]! - ASCENT * FONT_PX;
    const blockBottom = baselines[2]! + DESCENT * FONT_PX;
    expect(Math.abs((blockTop + blockBottom) / 2 - y * H)).toBeLessThanOrEqual(1.5);
  });

  it("verticalAlign BOTTOM puts the last line's descent on y, TOP the first line's ascent", async () => {
    const bottom = await frameOf([{ content: 'HHH\nHHH', x: 0.5, y: 0.9, verticalAlign: 'BOTTOM', fontSize: 0.1, ...SOLID }]);
    const lastBaseline = lineBoxes(bottom.frame, bottom.bg, INK).at(-1)!.y1 + 1;
    expect(Math.abs(lastBaseline + DESCENT * FONT_PX - 0.9 * H)).toBeLessThanOrEqual(1.5);
    const top = await frameOf([{ content: 'HHH\nHHH', x: 0.5, y: 0.1, verticalAlign: 'TOP', fontSize: 0.1, ...SOLID }]);
    const firstBaseline = lineBoxes(top.frame, top.bg, INK)[0]!.y1 + 1;
    expect(Math.abs(firstBaseline - ASCENT * FONT_PX - 0.1 * H)).toBeLessThanOrEqual(1.5);
  });

  it('an empty line keeps its row', async () => {
    const { frame, bg } = await frameOf([{ content: 'HHH\n\nHH', align: 'RIGHT', x: 0.9, fontSize: 0.1, ...SOLID }]);
    const boxes = lineBoxes(frame, bg, INK);
    expect(boxes).toHaveLength(2);
    expect(Math.abs(boxes[1]!.y1 - boxes[0]!.y1 - 2 * PITCH)).toBeLessThanOrEqual(1.5);
  });
});

it('cuts the whole 12 s clip into the lead segments (0.5 s, 0.5 s, 1 s, 2 s), then 4-s GOPs: the boundaries the tests above cross', () => {
  expect(video.segments).toEqual([0.5, 0.5, 1, 2, 4, 4]);
});
