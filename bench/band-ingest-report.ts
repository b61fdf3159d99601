// The band-ingest suite's results, per clip and round, and the tables it prints of them (pure: bench/band-ingest.ts
// measures them).
import { WORKING_ENCODE } from '../src/core/plan/working-form.js';
import { type Spread, showSpread, spread } from './lib/band-figures.js';
import { fmt, table } from './lib/suite.js';

/** The delivery encode (the render's settings, load-config's default), which the shared encode uses. */
export const DELIVERY = { preset: 'veryfast', crf: 23 };

export type Kind = 'natural' | 'motion' | 'talking';

export interface Options {
  clips: Kind[];
  seconds: number;
  height: number;
}

export interface Steps {
  decode: number;
  rows: number;
  shared: number;
  mux: number;
  /** Wall seconds of segment 0's band media (what a lazy first viewer waits for), and of all segments. */
  firstWallS: number;
  allWallS: number;
  bytes: number;
}

export interface Round {
  today: number;
  steps: Steps;
  optionA: number;
  optionB: number;
}

export interface ClipResult {
  kind: Kind;
  seconds: number;
  segments: number;
  rounds: Round[];
  bandRatio: Spread;
  aRatio: Spread;
  bRatio: Spread;
  quality: {
    crf15: { psnr: number; ssim: number; bytes: number; renderCpuS: number };
    shared: { psnr: number; ssim: number; bytes: number; renderCpuS: number };
  };
}

export function report(results: ClipResult[], options: Options): string {
  const med = (xs: number[]) => spread(xs).median;
  const lines = [
    `band ingest: ${options.height}p25, ${options.seconds} s per clip, working form libx264 ${WORKING_ENCODE.preset} CRF ${WORKING_ENCODE.crf}, shared encode x264 ${DELIVERY.preset} CRF ${DELIVERY.crf} (a top and a bottom band), CPU s of all child processes; ratios round by round, median (min-max)`,
  ];
  lines.push(
    table(
      ['clip', 'segments', 'today (CPU s)', 'decode', 'rows', 'shared encode', 'muxes', 'band today / today', 'A / today', 'B / today'],
      results.map((r) => [
        r.kind,
        String(r.segments),
        showSpread(spread(r.rounds.map((x) => x.today)), 2),
        fmt(med(r.rounds.map((x) => x.steps.decode)), 2),
        fmt(med(r.rounds.map((x) => x.steps.rows)), 2),
        fmt(med(r.rounds.map((x) => x.steps.shared)), 2),
        fmt(med(r.rounds.map((x) => x.steps.mux)), 2),
        showSpread(r.bandRatio, 3),
        showSpread(r.aRatio, 3),
        showSpread(r.bRatio, 3),
      ]),
    ),
  );
  lines.push('Option B: full render (centred mark, render plan arguments) from each mezzanine, against the marked source:');
  lines.push(
    table(
      ['clip', 'mezzanine', 'bytes', 'render PSNR (dB)', 'render SSIM', 'render CPU s'],
      results.flatMap((r) =>
        (
          [
            [`working form CRF ${WORKING_ENCODE.crf}`, r.quality.crf15],
            [`shared encode CRF ${DELIVERY.crf}`, r.quality.shared],
          ] as const
        ).map(([mezzanine, q]) => [r.kind, mezzanine, String(q.bytes), fmt(q.psnr, 3), fmt(q.ssim, 5), fmt(q.renderCpuS, 2)]),
      ),
    ),
  );
  lines.push('Option C: the ingest is today (1.0x); a lazy first band viewer waits for segment 0 band media (wall s), the title all of it:');
  lines.push(
    table(
      ['clip', 'segment 0 (wall s)', 'all segments (wall s)', 'video (s)'],
      results.map((r) => [
        r.kind,
        showSpread(spread(r.rounds.map((x) => x.steps.firstWallS)), 2),
        showSpread(spread(r.rounds.map((x) => x.steps.allWallS)), 2),
        String(r.seconds),
      ]),
    ),
  );
  return lines.join('\n');
}
