// The band suite's figures at one height from each viewer's CPU seconds, and the table it prints of them.
import { describe, expect, it } from 'vitest';
import { type HeightResult, report, viewerFigures } from '../band-report.js';

// Two viewers over 2 s of video: bands of 0.1 + 0.2 + 0.02 s and 0.1 + 0.3 + 0.02 s, full renders of 1 s and 1.4 s.
const bands = [
  { mark: 0.1, encode: 0.2, splice: 0.02 },
  { mark: 0.1, encode: 0.3, splice: 0.02 },
];
const figures = viewerFigures(bands, [1, 1.4], 0.04, 2);

describe('the band figures', () => {
  it("give each viewer's CPU per second of video, band against full pair by pair", () => {
    expect(figures.perViewer.band.min).toBeCloseTo(0.16);
    expect(figures.perViewer.band.max).toBeCloseTo(0.21);
    expect(figures.perViewer.full.median).toBeCloseTo(0.6);
    // 0.32 / 1 and 0.42 / 1.4: the pairs, not the medians' ratio.
    expect(figures.perViewer.ratio.min).toBeCloseTo(0.3);
    expect(figures.perViewer.ratio.max).toBeCloseTo(0.32);
    expect(figures.perViewer.encodeS.median).toBeCloseTo(0.125);
    expect(figures.perViewer.prepareS).toBeCloseTo(0.02);
  });

  it("count the segments' preparation once in the batch, against every full render", () => {
    expect(figures.batch.viewers).toBe(2);
    expect(figures.batch.bandCpuS).toBeCloseTo(0.78);
    expect(figures.batch.fullCpuS).toBeCloseTo(2.4);
    expect(figures.batch.ratio).toBeCloseTo(0.78 / 2.4);
  });

  it('print a column per height and a line per gate finding', () => {
    const result: HeightResult = {
      height: 720,
      width: 1280,
      band: { top: 40, bottom: 45 },
      ...figures,
      shared: { bytes: 1000, psnr: 43.2, unclampedBytesAtPsnr: 980, ratio: 1000 / 980, sweep: [] },
      psnr: { bandRegion: 36.9, fullRegion: 36.4, bandWhole: 40.9, fullWhole: 40 },
      gate: { segments: 4, failures: 1, findings: ['segment 2: differs outside the band'] },
      ingest: { todayCpuS: 2, sharedCpuS: 1, ratio: 1.5 },
    };
    const text = report([result], { seconds: 2, bandPx: 80, viewers: 2, threads: 2 }, { preset: 'veryfast', crf: 23 });
    expect(text).toContain('band rendering: 2 s per height, 25 fps, band = bottom 80 px, 2 viewers, x264 veryfast CRF 23, 2 threads');
    expect(text).toMatch(/^band rows \(macroblocks\) +40-45$/m);
    expect(text).toMatch(/^viewer: band \/ full \(pair by pair; target <= 0\.15 at 720p\) +0\.310 \(0\.300-0\.320\)$/m);
    expect(text).toMatch(/^gate failures \(spliced segments checked; must be 0\) +1 \(4\)$/m);
    expect(text).toContain('  720p gate: segment 2: differs outside the band');
  });
});
