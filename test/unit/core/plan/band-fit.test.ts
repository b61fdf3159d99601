// Unit tests for the band fit check: which watermarks render in a band (text extent from font size and lines, image
// size, MOVE endpoints, margins at the band's edges, a band too small) and where a title's bands lie.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FALLBACK_FONT_METRICS } from '../../../../src/core/font-metrics.js';
import { BAND_MARGIN_PX, bandLayout, bandPixels, chooseBand, settingRows } from '../../../../src/core/plan/band-fit.js';
import type { Setting, TextSetting } from '../../../../src/core/setting-types.js';
import { parsedSettings } from '../../../helpers/parsed-settings.js';

const FRAME = { width: 1280, height: 720, duration: 60 };
const M = FALLBACK_FONT_METRICS;
const BANDS = bandLayout(720);

const settings = parsedSettings;

const text = (raw: Record<string, unknown>) => settings(raw)[0] as TextSetting;

describe('bandLayout', () => {
  it('puts an 80 px band at the top and the bottom of 720p, 128 px at 1080p, whole macroblock rows', () => {
    expect(bandLayout(720)).toEqual([
      { top: 0, bottom: 5 },
      { top: 40, bottom: 45 },
    ]);
    expect(bandLayout(1080)).toEqual([
      { top: 0, bottom: 8 },
      { top: 60, bottom: 68 },
    ]);
    expect(bandPixels({ top: 60, bottom: 68 }, 1080)).toEqual({ top: 960, bottom: 1080 });
  });

  it('keeps 3 rows per band and 3 between them; a picture too small for two bands gets one, then none', () => {
    expect(bandLayout(176)).toEqual([
      { top: 0, bottom: 3 },
      { top: 8, bottom: 11 },
    ]);
    expect(bandLayout(128)).toEqual([{ top: 5, bottom: 8 }]);
    expect(bandLayout(80)).toEqual([]);
    expect(bandLayout(720, { top: false })).toEqual([{ top: 40, bottom: 45 }]);
  });
});

describe('settingRows', () => {
  it('grows with the font size and the number of lines, not with the text length', () => {
    const small = settingRows(text({ y: 0.5, fontSize: 0.03 }), FRAME, M);
    const big = settingRows(text({ y: 0.5, fontSize: 0.06 }), FRAME, M);
    const long = settingRows(text({ y: 0.5, fontSize: 0.03, content: 'x'.repeat(200) }), FRAME, M);
    const lines = settingRows(text({ y: 0.5, fontSize: 0.03, content: 'a\nb\nc' }), FRAME, M);
    expect(big.bottom - big.top).toBeGreaterThan(1.8 * (small.bottom - small.top));
    expect(long).toEqual(small);
    expect(lines.bottom - lines.top).toBeGreaterThan(2.2 * (small.bottom - small.top));
  });

  it('anchors the box by verticalAlign and reaches as far as the shadow', () => {
    const top = settingRows(text({ y: 0.5, verticalAlign: 'TOP', shadowOpacity: 0 }), FRAME, M);
    const bottom = settingRows(text({ y: 0.5, verticalAlign: 'BOTTOM', shadowOpacity: 0 }), FRAME, M);
    expect(top.top).toBe(360);
    expect(bottom.bottom).toBe(360);
    const shadowed = settingRows(text({ y: 0.5, verticalAlign: 'TOP', shadowOpacity: 1, shadowOffsetY: 0.5 }), FRAME, M);
    expect(shadowed.bottom).toBeGreaterThan(top.bottom + 5);
  });

  it("spans a MOVE from its start to where it has got when the video ends, an image's drawn height", () => {
    const move = { type: 'MOVE', toX: 0.5, toY: 0.9, startTime: 0, endTime: 120 };
    const rows = settingRows(text({ y: 0.1, verticalAlign: 'TOP', animation: move }), FRAME, M);
    expect(rows.top).toBe(72);
    // Half-way by the end of the 60 s video: y 0.5.
    expect(rows.bottom).toBeGreaterThan(360);
    expect(rows.bottom).toBeLessThan(430);
    const image = settings({ type: 'IMAGE', content: '/logo.png', y: 0.9, verticalAlign: 'TOP', width: 0.1 })[0]!;
    const withRef = { ...image, image: { sha256: 'a', format: 'png', width: 200, height: 100 } } as Setting;
    expect(settingRows(withRef as never, FRAME, M)).toEqual({ top: 648, bottom: 648 + 64 });
  });
});

describe('chooseBand', () => {
  it('gives small text at the bottom or the top the band it sits in', () => {
    const bottom = chooseBand(settings({ y: 0.95, verticalAlign: 'BOTTOM', fontSize: 0.03 }), BANDS, FRAME, M);
    expect(bottom).toMatchObject({ strategy: 'band', band: { top: 40, bottom: 45 } });
    expect(bottom.reason).toMatch(/^the mark reaches rows \d+-\d+, inside the band at rows 640-720$/);
    expect(chooseBand(settings({ y: 0.02, verticalAlign: 'TOP', fontSize: 0.03 }), BANDS, FRAME, M)).toMatchObject({ band: { top: 0, bottom: 5 } });
  });

  it('refuses the centre, a MOVE across the frame, text too big for the band, and settings in two bands', () => {
    const centre = chooseBand(settings({}), BANDS, FRAME, M);
    expect(centre).toEqual({ strategy: 'full', reason: expect.stringMatching(/^the mark reaches rows \d+-\d+, outside the bands \(rows 0-80, 640-720\)$/) });
    const move = { type: 'MOVE', toX: 0.9, toY: 0.95, startTime: 0, endTime: 30 };
    expect(chooseBand(settings({ y: 0.02, verticalAlign: 'TOP', fontSize: 0.03, animation: move }), BANDS, FRAME, M).strategy).toBe('full');
    expect(chooseBand(settings({ y: 0.95, verticalAlign: 'BOTTOM', fontSize: 0.12 }), BANDS, FRAME, M).strategy).toBe('full');
    const two = settings({ y: 0.02, verticalAlign: 'TOP', fontSize: 0.03 }, { y: 0.95, verticalAlign: 'BOTTOM', fontSize: 0.03 });
    expect(chooseBand(two, BANDS, FRAME, M).strategy).toBe('full');
  });

  it('keeps the margin at an inner edge, none at the picture edge, and ignores what is drawn off the picture', () => {
    // A TOP-aligned shadowless line whose box starts exactly at the bottom band's top row (640): inside the margin.
    const at = (px: number) => settings({ y: px / 720, verticalAlign: 'TOP', fontSize: 0.02, shadowOpacity: 0 });
    expect(chooseBand(at(640), BANDS, FRAME, M).strategy).toBe('full');
    expect(chooseBand(at(640 + BAND_MARGIN_PX), BANDS, FRAME, M).strategy).toBe('band');
    // Hanging off the bottom edge of the picture: only its visible rows count.
    expect(chooseBand(settings({ y: 1.01, verticalAlign: 'BOTTOM', fontSize: 0.03 }), BANDS, FRAME, M).strategy).toBe('band');
  });

  it('has nothing to offer a title without bands (too small) or a watermark that draws nothing', () => {
    expect(chooseBand(settings({ y: 0.95 }), bandLayout(80), { ...FRAME, height: 80 }, M)).toEqual({ strategy: 'full', reason: 'the title has no band' });
    expect(chooseBand([{ type: 'FORENSIC', payload: 1 }], BANDS, FRAME, M).strategy).toBe('full');
  });

  it('fits the shipped templates at 720p and 1080p', () => {
    for (const name of ['viewer-corner', 'session-stamp', 'diagonal-drift']) {
      const template = JSON.parse(readFileSync(`templates/${name}.json`, 'utf8')) as { settings: Record<string, unknown>[] };
      for (const height of [720, 1080]) {
        const frame = { width: (height * 16) / 9, height, duration: 3600 };
        const choice = chooseBand(
          settings(...template.settings.map((s) => ({ ...s, content: 'Alice Example <alice@example.com>' }))),
          bandLayout(height),
          frame,
          M,
        );
        expect(choice.strategy, `${name} at ${height}p: ${choice.reason}`).toBe('band');
      }
    }
  });
});
