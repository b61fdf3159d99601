// Suite `text`: `wmark watermark` with one TEXT setting vs a plain one-shot ffmpeg (decode -> drawtext -> libx264 -> HLS)
// on a generated 60 s 720p30 clip with audio, motion and texture. Alternates the two for N rounds and reports medians:
// wall and CPU time, the wmark/ffmpeg ratio for the complete job, wmark's time until its playlist is playable, and
// PSNR against the source outside the text area. The job itself is bench/text-job.ts, which pay and cluster run too;
// pay prints its rounds' table, below, too.
import path from 'node:path';
import { fmt, formatMachine, type MachineInfo, type Suite, type SuiteContext, table, verdict } from './lib/suite.js';
import {
  CRF,
  type JobResult,
  measureTextJob,
  PLACEMENT,
  PLAYLIST,
  POLL_MS,
  PRESET,
  TARGET_PLAYABLE_S,
  TARGET_RATIO,
  type TextJobResult,
  textJobOptions,
} from './text-job.js';

/** The per-round table of the two jobs (wall, CPU, playable, other load), with its medians and legend. */
export function textJobTable(r: TextJobResult, cores: number): string[] {
  const row = (label: string, j: Omit<JobResult, 'outputDir'>): (string | number)[] => [
    label,
    j.wallS,
    j.cpuS,
    j.userS,
    j.sysS,
    j.cpuS / j.wallS,
    j.playableS ?? NaN,
    j.otherCores,
  ];
  const rows: (string | number)[][] = [];
  for (const round of r.rounds) {
    rows.push(row(`${round.round}  ffmpeg one-shot`, round.baseline));
    rows.push(row(`${round.round}  wmark watermark`, round.wmark));
  }
  rows.push(row('median  ffmpeg one-shot', r.median.baseline));
  rows.push(row('median  wmark watermark', r.median.wmark));
  const maxOther = Math.max(...r.rounds.flatMap((x) => [x.baseline.otherCores, x.wmark.otherCores]));
  return [
    table(['round  job', 'wall s', 'cpu s', 'user s', 'sys s', 'cpu/wall', 'playable s', 'other load'], rows),
    '',
    `(cpu = user+sys of the whole process tree via ${r.ingest.cpuSource}; cpu/wall max ${cores}; playable = spawn until ${PLAYLIST} lists a segment, polled every ${POLL_MS} ms;`,
    ` other load = cores used by other processes during the job${maxOther > 0.2 ? ` -- up to ${fmt(maxOther)} here: the machine was shared, times are noisy` : ''})`,
  ];
}

/** PSNR outside the text area, both jobs, as two report lines. */
export function textJobPsnr(r: TextJobResult): string[] {
  const { region, wmark, baseline, wmarkFrom } = r.psnr;
  return [
    `PSNR vs source outside the text area (rows 0-${region.h - 1} of ${r.source.height}, full width), last round:`,
    `  wmark watermark  Y ${fmt(wmark.y)} dB  avg ${fmt(wmark.average)} dB  (min ${fmt(wmark.min)}, ${wmark.frames} frames, from ${wmarkFrom})`,
    `  ffmpeg one-shot  Y ${fmt(baseline.y)} dB  avg ${fmt(baseline.average)} dB  (min ${fmt(baseline.min)}, ${baseline.frames} frames, from ${PLAYLIST})`,
  ];
}

function textReport(r: TextJobResult, machine: MachineInfo): string[] {
  const { source: clip, ingest, median: m, ratio, fixedCosts, outputs } = r;
  const lastText = r.rounds[r.rounds.length - 1]!.text;
  return [
    '',
    `== bench text: wmark watermark vs plain ffmpeg one-shot, ${clip.seconds} s ${clip.width}x${clip.height} ${clip.fps} fps natural clip with audio ==`,
    formatMachine(machine),
    `source:  ${path.relative(process.cwd(), clip.path)} (${(clip.bytes / 1e6).toFixed(1)} MB, ${((clip.bytes * 8) / clip.seconds / 1e6).toFixed(1)} Mbit/s)${clip.generatedSeconds ? `, generated in ${clip.generatedSeconds.toFixed(1)} s (one-time)` : ', cached'}`,
    `encode:  libx264 -preset ${PRESET} -crf ${CRF}; text "${lastText.replace(/r\d+ viewer-\w+/, 'rN viewer-XXXXXXXX')}" at x ${PLACEMENT.x} y ${PLACEMENT.y} ${PLACEMENT.align}/${PLACEMENT.verticalAlign}, ${r.fontPx} px, opacity ${PLACEMENT.fontOpacity}; wmark containers: ${r.containers === 'default' ? 'default (m3u8,mp4)' : r.containers}`,
    `ingest:  wall ${fmt(ingest.wallS)} s, cpu ${fmt(ingest.cpuS)} s (${ingest.segments} segments; one-time per video, not part of the ratio)`,
    '',
    ...textJobTable(r, machine.availableParallelism),
    '',
    `ratio wmark/ffmpeg, complete job, wall:  ${fmt(ratio.wall)}  (target <= ${fmt(TARGET_RATIO)})  ${verdict(ratio.met)}`,
    `ratio wmark/ffmpeg, cpu time:            ${fmt(ratio.cpu)}`,
    `  per round (wall): ${r.rounds.map((x) => `r${x.round} ${fmt(x.wmark.wallS / x.baseline.wallS)} (other load ${fmt(x.baseline.otherCores)}/${fmt(x.wmark.otherCores)})`).join(', ')}`,
    `wmark time until playlist playable:      ${fmt(m.wmark.playableS)} s  (target <= ${TARGET_PLAYABLE_S} s)  ${verdict(r.playable.met)}   [ffmpeg one-shot first playlist: ${fmt(m.baseline.playableS)} s${Math.abs(m.baseline.playableS - m.baseline.wallS) < 0.5 ? ', i.e. only at the end (-hls_playlist_type vod)' : ''}]`,
    `wmark fixed costs: process start (--version) ${fmt(fixedCosts.startupS)} s, repeated request (nothing encoded) ${fmt(fixedCosts.repeatRequestS)} s`,
    '',
    ...textJobPsnr(r),
    `outputs: wmark ${outputs.wmark.segments} segments / ${fmt(outputs.wmark.seconds)} s${outputs.wmark.ended ? ' ENDLIST' : ''}; ffmpeg ${outputs.baseline.segments} segments / ${fmt(outputs.baseline.seconds)} s${outputs.baseline.ended ? ' ENDLIST' : ''}`,
    `x264 settings that differ (wmark vs ffmpeg, first segment): ${r.x264Diff.length ? r.x264Diff.join('; ') : 'none'}`,
    '',
  ];
}

export const suite: Suite = {
  name: 'text',
  description: 'wmark watermark (one TEXT setting) vs a plain one-shot ffmpeg drawtext -> libx264 -> HLS, 60 s 720p30',
  async run(ctx: SuiteContext) {
    const result = await measureTextJob(ctx, textJobOptions(ctx, { runName: 'text-run', quietWaitS: 120 }));
    process.stdout.write(`${textReport(result, ctx.machine).join('\n')}\n`);
    return result;
  },
};
