// Unit tests for reading a font's line metrics (ascent, descent, line gap) from its hhea table.
import { describe, expect, it } from 'vitest';
import { FONT } from '../../../harness/tools.js';
import { FALLBACK_FONT_METRICS, parseFontMetrics } from '../../../src/core/font-metrics.js';

describe('parseFontMetrics', () => {
  it("reads the bundled DejaVu Sans' hhea ascender, descender and line gap in em", async () => {
    const { readFile } = await import('node:fs/promises');
    expect(parseFontMetrics(await readFile(FONT))).toEqual(FALLBACK_FONT_METRICS);
  });

  it('gives up (undefined) on anything but a single sfnt font with head and hhea', async () => {
    const { readFile } = await import('node:fs/promises');
    const font = await readFile(FONT);
    expect(parseFontMetrics(Buffer.alloc(0))).toBeUndefined();
    expect(parseFontMetrics(Buffer.from([0x74, 0x74, 0x63, 0x66, 0, 1, 0, 0, 0, 0, 0, 1]))).toBeUndefined();
    expect(parseFontMetrics(Buffer.from('<html>not a font</html>'))).toBeUndefined();
    expect(parseFontMetrics(font.subarray(0, 40))).toBeUndefined();
  });
});
