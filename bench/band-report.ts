// The band suite's figures at each height and the table it prints of them (pure: bench/band.ts measures).
import type { BandRows } from '../src/core/h264/splice-band.js';
import { type Spread, showSpread, spread } from './lib/band-figures.js';
import { fmt, table } from './lib/suite.js';

export interface HeightResult {
  height: number;
  width: number;
  band: BandRows;
  perViewer: { band: Spread; full: Spread; ratio: Spread; markS: Spread; encodeS: Spread; spliceS: Spread; prepareS: number };
  batch: { viewers: number; bandCpuS: number; fullCpuS: number; ratio: number };
  shared: { bytes: number; psnr: number; unclampedBytesAtPsnr: number; ratio: number; sweep: { crf: number; bytes: number; psnr: number }[] };
  psnr: { bandRegion: number; fullRegion: number; bandWhole: number; fullWhole: number };
  gate: { segments: number; failures: number; findings: string[] };
  ingest: { todayCpuS: number; sharedCpuS: number; ratio: number };
}

/**
 * The per-viewer figures (CPU seconds per second of video, band against full pair by pair, the band's parts) and the
 * batch's (every viewer's band and the segments' preparation once, against every viewer's full render), from each
 * viewer's CPU seconds over `seconds` of video.
 */
export function viewerFigures(
  bandCosts: readonly { mark: number; encode: number; splice: number }[],
  fullCosts: readonly number[],
  prepareS: number,
  seconds: number,
): Pick<HeightResult, 'perViewer' | 'batch'> {
  const d = seconds;
  const perViewerBand = bandCosts.map((c) => (c.mark + c.encode + c.splice) / d);
  const perViewerFull = fullCosts.map((c) => c / d);
  const bandTotal = bandCosts.reduce((a, c) => a + c.mark + c.encode + c.splice, prepareS);
  const fullTotal = fullCosts.reduce((a, b) => a + b, 0);
  return {
    perViewer: {
      band: spread(perViewerBand),
      full: spread(perViewerFull),
      ratio: spread(perViewerBand.map((b, i) => b / perViewerFull[i]!)),
      markS: spread(bandCosts.map((c) => c.mark / d)),
      encodeS: spread(bandCosts.map((c) => c.encode / d)),
      spliceS: spread(bandCosts.map((c) => c.splice / d)),
      prepareS: prepareS / d,
    },
    batch: { viewers: bandCosts.length, bandCpuS: bandTotal, fullCpuS: fullTotal, ratio: bandTotal / fullTotal },
  };
}

/** What the table's heading states of the run. */
export interface ReportOptions {
  seconds: number;
  bandPx: number;
  viewers: number;
  threads: number;
}

export function report(results: HeightResult[], options: ReportOptions, encode: { preset: string; crf: number }): string {
  const lines: string[] = [];
  lines.push(
    `band rendering: ${options.seconds} s per height, 25 fps, band = bottom ${options.bandPx} px, ${options.viewers} viewers, x264 ${encode.preset} CRF ${encode.crf}, ${options.threads} threads`,
  );
  lines.push(
    table(
      ['figure', ...results.map((r) => `${r.height}p`)],
      [
        ['band rows (macroblocks)', ...results.map((r) => `${r.band.top}-${r.band.bottom}`)],
        ['viewer CPU s per s, band: median (min-max)', ...results.map((r) => showSpread(r.perViewer.band, 3))],
        [
          '  of which mark / band encode / splice (median)',
          ...results.map((r) => `${fmt(r.perViewer.markS.median, 3)} / ${fmt(r.perViewer.encodeS.median, 3)} / ${fmt(r.perViewer.spliceS.median, 4)}`),
        ],
        ['  segment preparation, once (CPU s per s)', ...results.map((r) => fmt(r.perViewer.prepareS, 4))],
        ['viewer CPU s per s, full render', ...results.map((r) => showSpread(r.perViewer.full, 3))],
        ['viewer: band / full (pair by pair; target <= 0.15 at 720p)', ...results.map((r) => showSpread(r.perViewer.ratio, 3))],
        [
          'batch of N: band / N full jobs (target <= 0.25)',
          ...results.map((r) => `${fmt(r.batch.ratio, 3)} (${fmt(r.batch.bandCpuS, 1)} / ${fmt(r.batch.fullCpuS, 1)} s)`),
        ],
        [
          'shared encode bytes / unclamped at equal PSNR (<= 1.03)',
          ...results.map((r) => `${fmt(r.shared.ratio, 4)} (${r.shared.bytes} B at ${fmt(r.shared.psnr, 3)} dB)`),
        ],
        ['PSNR in the band: spliced / full render (dB)', ...results.map((r) => `${fmt(r.psnr.bandRegion, 2)} / ${fmt(r.psnr.fullRegion, 2)}`)],
        ['PSNR whole picture: spliced / full render (dB)', ...results.map((r) => `${fmt(r.psnr.bandWhole, 2)} / ${fmt(r.psnr.fullWhole, 2)}`)],
        ['gate failures (spliced segments checked; must be 0)', ...results.map((r) => `${r.gate.failures} (${r.gate.segments})`)],
        [
          'ingest with the shared encode / today (<= 1.3)',
          ...results.map((r) => `${fmt(r.ingest.ratio, 3)} (${fmt(r.ingest.todayCpuS, 2)} + ${fmt(r.ingest.sharedCpuS, 2)} s)`),
        ],
      ],
    ),
  );
  for (const r of results) for (const f of r.gate.findings) lines.push(`  ${r.height}p gate: ${f}`);
  lines.push('The ingest figure counts the shared encode reading decoded frames (y4m); the ingest would feed it from its own decode.');
  return lines.join('\n');
}
