// Suite `band`: what a viewer costs when band rendering encodes the picture once (the shared encode) and, per viewer,
// only the rows its visible mark covers (the band encode), spliced into the shared segments. One run on one machine, at
// each height (default 720p and 1080p, 16:9, 25 fps, a textured box racing over testsrc2), each figure a ratio against
// today's full render of the same mark (ffmpeg: decode the mezzanine, drawtext, libx264 of the whole picture, with
// the render plan's own arguments, src/core/plan/render-args.ts):
//   - per-viewer CPU seconds per second of video: the mark drawn on the band's kept source rows (ffmpeg), the band
//     encode (patched x264) and the splice of every segment (in process), against one full render;
//   - a batch of N viewers (default 8, each with its own text) against N full jobs, rounds alternating band and full;
//   - the shared encode's bytes against an unclamped encode of the same settings at equal PSNR (a CRF sweep of the
//     unclamped encode, log-bytes interpolated): what the slices and the clamp cost;
//   - the band's PSNR (the spliced stream, band rows) against the full render's, both against the source with the
//     mark drawn on it;
//   - gate failures: every spliced segment decoded, framemd5 outside the band against the shared segment, inside
//     against the band stream (must be 0);
//   - the ingest with the shared encode (bands at the top and the bottom, one encode) beside today's mezzanine encode,
//     against today's alone.
// The encodes and the splice are driven through their edges directly (src/core/plan/band-plan.ts's arguments, the
// patched x264, src/core/h264/splice-segment.ts), not through `wmark`: the part `figures`.
// The part `capacity` (bench/band-capacity.ts) goes through `wmark serve`: how many new real-time viewers (each its own
// mark in the bottom band, fetching one segment ahead of playback) one serve carries without a stall, with band
// rendering and with WMARK_BAND=off, rounds alternating; the time to the first segment at that count; band fallbacks
// from serve's /metrics (must be 0).
// Options: --only LIST (figures,capacity; default both)
//   figures:  --heights LIST (default 720,1080)  --seconds S (default 8, whole 2-s segments)  --viewers N (default 8)
//             --band-px P (default 80)  --threads N (x264/ffmpeg threads, default 2)
//   capacity: --capacity-heights LIST (default 720)  --capacity-seconds S (title length, default 48)
//             --capacity-ladder LIST (viewer counts, default 2,4,6,8,12,15,18,24,30)  --capacity-spacing S (arrivals,
//             default 0.75)  --capacity-startup S (playback starts S after the first segment; default: its duration)
//             --capacity-rounds N (default 2)  --quiet-wait S (default 10)  --idle-max S (default 300)
//             --capacity-renders LIST (band,full: which ladders run; default both)
//             --capacity-split (where serve's CPU goes in each trial, every count of the ladder run, stall or not:
//             serve's own CPU, each kind of ffmpeg/x264 run through a wrapper, the queue and the cores each second)
//             --capacity-cpu-prof DIR (a V8 profile of each serve in DIR, its main thread split by part)
// Needs the patched x264 (scripts/build-x264.sh; WMARK_X264 or WMARK_X264_CACHE).
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { groupAccessUnits, joinNalUnits, splitNalUnits } from '../src/core/h264/annexb.js';
import { frameTypesOf } from '../src/core/h264/frame-types.js';
import { type BandRows, startsPicture } from '../src/core/h264/splice-band.js';
import { prepareSharedSegment, spliceViewer } from '../src/core/h264/splice-segment.js';
import { videoPesPayloads } from '../src/core/mpegts/pes-rewrite.js';
import { bandEncodeArgs, bandRowsAt, bandSourceArgs, qpfileFor, sharedEncodeArgs } from '../src/core/plan/band-plan.js';
import { segmentRenderArgs } from '../src/core/plan/render-args.js';
import { WORKING_ENCODE } from '../src/core/plan/working-form.js';
import { x264Gop } from '../src/core/plan/x264.js';
import { capacityOptions, capacityReport, type HeightCapacity, measureCapacity } from './band-capacity.js';
import { type HeightResult, report, viewerFigures } from './band-report.js';
import { bytesAtPsnr } from './forensic-bframe.js';
import { cutPictures, gateFindings, x264GlobalPsnr } from './lib/band-figures.js';
import { bandX264, inWorkFolder } from './lib/band-run.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { fail, type Measured, runMeasured } from './lib/measure.js';
import type { Suite, SuiteContext } from './lib/suite.js';
import { psnr } from './lib/video.js';

const FPS = 25;
const GOP = 2 * FPS;
const ENCODE = { preset: 'veryfast', crf: 23 };
/** The unclamped encode's CRF sweep around the shared encode's CRF, for bytes at equal PSNR. */
const SWEEP = [21, 22, 23, 24, 25];

const PARTS = ['figures', 'capacity'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  only: Set<Part>;
  heights: number[];
  seconds: number;
  viewers: number;
  bandPx: number;
  threads: number;
}

function parseOptions(ctx: SuiteContext): Options {
  const only = typeof ctx.args.options.only === 'string' ? ctx.args.options.only.split(',').map((p) => p.trim()) : [...PARTS];
  const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length) throw new Error(`--only: unknown part(s) ${unknown.join(', ')}; parts: ${PARTS.join(', ')}`);
  const heights = String(ctx.args.options.heights ?? '720,1080')
    .split(',')
    .map(Number);
  if (!heights.every((h) => Number.isInteger(h) && h >= 144 && h % 2 === 0)) throw new Error('--heights: even frame heights of 144 or more, e.g. 720,1080');
  const seconds = Number(ctx.args.options.seconds ?? 8);
  if (!Number.isInteger(seconds) || seconds < 2 || seconds % 2) throw new Error('--seconds: a multiple of 2 (whole 2-s segments)');
  const viewers = Number(ctx.args.options.viewers ?? 8);
  if (!Number.isInteger(viewers) || viewers < 1) throw new Error('--viewers: a whole number of 1 or more');
  const bandPx = Number(ctx.args.options['band-px'] ?? 80);
  if (!Number.isInteger(bandPx) || bandPx < 16) throw new Error('--band-px: 16 or more pixels');
  const threads = Number(ctx.args.options.threads ?? 2);
  if (!Number.isInteger(threads) || threads < 1) throw new Error('--threads: 1 or more');
  return { only: new Set(only as Part[]), heights, seconds, viewers, bandPx, threads };
}

/** The viewer's mark: text in a box moving across the band by frame number (the full render keeps its timestamps, so `t` would not start at 0 there); `top` is where the band starts in the drawn picture. */
function mark(font: string, viewer: number, top: number): string {
  return `drawtext=fontfile=${font}:text='viewer ${viewer} alice${viewer}@example.com':fontsize=40:fontcolor=white:box=1:boxcolor=black@0.5:x='20+3.2*n':y=${top + 20}`;
}

async function run(ctx: SuiteContext, what: string, cmd: string, args: readonly string[]): Promise<Measured> {
  const m = await runMeasured(cmd, args, { env: ctx.env });
  if (m.exitCode !== 0) fail(what, m);
  return m;
}

async function framemd5(ffmpeg: string, file: string, crop: string, raw = false): Promise<string[]> {
  const m = await runMeasured(ffmpeg, [...FFMPEG_QUIET, ...(raw ? ['-f', 'h264'] : []), '-i', file, '-an', '-vf', crop, '-f', 'framemd5', '-']);
  if (m.exitCode !== 0) return [];
  return m.stdout
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.trim().split(/\s+/).at(-1)!);
}

/** One height's picture and band, its working folder, and the settings every encode of it shares. */
interface Height {
  ctx: SuiteContext;
  x264: string;
  options: Options;
  ff: string;
  font: string;
  height: number;
  width: number;
  /** The band the viewers' marks go in (at the bottom), and the one at the top the ingest figure adds. */
  band: BandRows;
  top: BandRows;
  /** The band's height in pixels (its last macroblock row may pass the picture's bottom). */
  bandPx: number;
  dir: string;
  at: (name: string) => string;
  bandOptions: typeof ENCODE & { gop: number; refs: number; threads: number };
}

function heightOf(ctx: SuiteContext, x264: string, options: Options, height: number, dir: string): Height {
  const band = bandRowsAt('bottom', height, options.bandPx);
  return {
    ctx,
    x264,
    options,
    ff: ctx.tools.ffmpeg.path,
    font: ctx.tools.font.path,
    height,
    width: Math.round((height * 16) / 9 / 2) * 2,
    band,
    top: bandRowsAt('top', height, options.bandPx),
    bandPx: Math.min(16 * (band.bottom - band.top), height - 16 * band.top),
    dir,
    at: (name: string) => path.join(dir, name),
    bandOptions: { ...ENCODE, gop: GOP, refs: 3, threads: options.threads },
  };
}

/** The source, today's ingest beside the shared encode of two bands, and the one-band shared encode against the unclamped sweep. */
async function encodeTitle(h: Height): Promise<{ today: Measured; bothBands: Measured; shared: HeightResult['shared'] }> {
  const { ctx, ff, x264, width, height, band, at, bandOptions } = h;
  ctx.log(`band ${height}p: source, ingest and shared encode`);
  const d = h.options.seconds;
  const box = `testsrc=s=${Math.round(width / 4)}x${Math.round(height / 4)}:r=${FPS}:d=${d}`;
  const graph = `testsrc2=s=${width}x${height}:r=${FPS}:d=${d}[bg];${box}[box];[bg][box]overlay=x='${width / 2.7}+${width / 3.2}*sin(2*t)':y='${height / 2.7}+${height / 2.4}*sin(3*t)'`;
  await run(ctx, 'source', ff, [...FFMPEG_QUIET, '-filter_complex', graph, '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe', at('src.y4m')]);

  // Today's ingest: the working form's encode (its preset and CRF, fastdecode, the fixed GOP: src/core/plan/ingest-args.ts).
  const working = ['-c:v', 'libx264', '-preset', WORKING_ENCODE.preset, '-tune', 'fastdecode', '-crf', String(WORKING_ENCODE.crf)];
  const mezzArgs = [...FFMPEG_QUIET, '-i', at('src.y4m'), ...working];
  const today = await run(ctx, 'mezzanine', ff, [...mezzArgs, ...x264Gop(GOP), '-f', 'mpegts', at('mezz.ts')]);
  // The shared encode of the title: a band at the top and one at the bottom, in one encode.
  const bothBands = await run(ctx, 'shared encode (two bands)', x264, sharedEncodeArgs(at('src.y4m'), at('both.264'), [h.top, band], bandOptions));
  // The one-band shared encode the viewers below splice into, with its PSNR; and the unclamped sweep.
  const shared = await run(ctx, 'shared encode', x264, ['--psnr', ...sharedEncodeArgs(at('src.y4m'), at('shared.264'), band, bandOptions)]);
  const sharedBytes = (await stat(at('shared.264'))).size;
  const sweep: HeightResult['shared']['sweep'] = [];
  for (const crf of SWEEP) {
    const args = sharedEncodeArgs(at('src.y4m'), at('plain.264'), band, { ...bandOptions, crf });
    const cut = args.indexOf('--band-rows');
    args.splice(cut, 2);
    const m = await run(ctx, `unclamped encode crf ${crf}`, x264, ['--psnr', ...args]);
    sweep.push({ crf, bytes: (await stat(at('plain.264'))).size, psnr: x264GlobalPsnr(m.stderr) });
  }
  const sharedPsnr = x264GlobalPsnr(shared.stderr);
  const unclampedBytesAtPsnr = bytesAtPsnr(sweep, sharedPsnr);
  return { today, bothBands, shared: { bytes: sharedBytes, psnr: sharedPsnr, unclampedBytesAtPsnr, ratio: sharedBytes / unclampedBytesAtPsnr, sweep } };
}

/** The shared segments every viewer splices into, each prepared once, with its pictures' count. */
interface Segments {
  segments: Uint8Array[];
  prepared: ReturnType<typeof prepareSharedSegment>[];
  /** CPU seconds the preparation took. */
  prepareS: number;
  counts: number[];
}

/** The shared encode as HLS segments (one picture per PES), prepared once each for every viewer; the band's source rows and the qpfile. */
async function prepareSegments(h: Height): Promise<Segments> {
  const { ctx, ff, at, width, band } = h;
  await mkdir(at('seg'), { recursive: true });
  const segmentArgs = ['-r', String(FPS), '-i', at('shared.264'), '-c', 'copy', '-f', 'segment', '-segment_time', '2', '-segment_format', 'mpegts'];
  await run(ctx, 'segmenting', ff, [...FFMPEG_QUIET, ...segmentArgs, at('seg/shared_%03d.ts')]);
  const segmentFiles = (await readdir(at('seg'))).filter((f) => f.startsWith('shared_')).sort();
  const segments = await Promise.all(segmentFiles.map(async (f) => new Uint8Array(await readFile(at(`seg/${f}`)))));
  const t0 = process.cpuUsage();
  const prepared = segments.map((bytes) => prepareSharedSegment(bytes));
  const prepareS = cpuSince(t0);
  const counts = segments.map((bytes) => videoPesPayloads(bytes).length);

  // The band's source rows, as the ingest keeps them (not counted: the ingest's decode makes them).
  const crop = `crop=${width}:${h.bandPx}:0:${16 * band.top}`;
  await run(ctx, 'band rows', ff, [...FFMPEG_QUIET, '-i', at('src.y4m'), '-vf', crop, '-f', 'yuv4mpegpipe', at('rows.y4m')]);
  await writeFile(at('qp.txt'), qpfileFor(frameTypesOf(await readFile(at('shared.264')))));
  return { segments, prepared, prepareS, counts };
}

/** One viewer's CPU seconds: its band (the mark, the band encode, the splice) and the full render of the same mark. */
interface ViewerCost {
  band: { mark: number; encode: number; splice: number };
  fullS: number;
  failures: number;
  findings: string[];
}

/**
 * One viewer: the mark on the kept rows, the band encode and the splice of every segment (the first viewer's spliced
 * segments checked by the gate and kept for their PSNR), then today's full render of the same mark over the mezzanine,
 * with the render plan's arguments (the first viewer's kept for its PSNR).
 */
async function oneViewer(h: Height, s: Segments, viewer: number): Promise<ViewerCost> {
  const { ctx, ff, x264, at, band, width, height } = h;
  ctx.log(`band ${height}p: viewer ${viewer}/${h.options.viewers} (band, then full render)`);
  const findings: string[] = [];
  let failures = 0;
  const rowsArgs = bandSourceArgs(
    at('rows.y4m'),
    at('marked.y4m'),
    { top: 0, bottom: band.bottom - band.top },
    { width, height: height - 16 * band.top },
    mark(h.font, viewer, 0),
  );
  const marked = await run(ctx, 'mark on the band rows', ff, [...FFMPEG_QUIET, ...rowsArgs]);
  const encoded = await run(ctx, 'band encode', x264, bandEncodeArgs(at('marked.y4m'), at('band.264'), at('qp.txt'), h.bandOptions));
  if (/band clamp missed/.test(encoded.stderr)) findings.push(`viewer ${viewer}: x264 broke the clamp`);
  const bandStream = new Uint8Array(await readFile(at('band.264')));
  const pieces = cutPictures(groupAccessUnits(splitNalUnits(bandStream), startsPicture), s.counts).map((units) => joinNalUnits(units.flat()));
  const t1 = process.cpuUsage();
  const spliced = s.prepared.map((segment, i) => spliceViewer(segment, pieces[i]!, band));
  const splice = cpuSince(t1);
  if (viewer === 1) {
    const gate = await checkGate(ff, h.dir, s.segments, pieces, spliced, band, width, height);
    failures += gate.failures;
    findings.push(...gate.findings);
    await writeFile(at('spliced.ts'), Buffer.concat(spliced));
  }
  await writeFile(at('mark.txt'), mark(h.font, viewer, 16 * band.top));
  const renderPlan = { filterScript: at('mark.txt'), gop: GOP, threads: h.options.threads, encode: ENCODE, hasAudio: false };
  const full = await run(ctx, 'full render', ff, [
    ...FFMPEG_QUIET,
    ...segmentRenderArgs({ ...renderPlan, input: at('mezz.ts'), output: at(viewer === 1 ? 'full1.ts' : 'full.ts') }),
  ]);
  return { band: { mark: marked.cpuS, encode: encoded.cpuS, splice }, fullS: full.cpuS, failures, findings };
}

/** Quality: the spliced stream and the first full render, both against the source with the same mark drawn on it. */
async function quality(h: Height): Promise<HeightResult['psnr']> {
  const { ctx, ff, at, band, width, height } = h;
  await writeFile(at('mark.txt'), mark(h.font, 1, 16 * band.top));
  await run(ctx, 'reference', ff, [...FFMPEG_QUIET, '-i', at('src.y4m'), '-filter_script:v', at('mark.txt'), '-f', 'yuv4mpegpipe', at('ref.y4m')]);
  const region = { x: 0, y: 16 * band.top, w: width, h: h.bandPx };
  const whole = { x: 0, y: 0, w: width, h: height };
  return {
    bandRegion: (await psnr(ff, at('spliced.ts'), at('ref.y4m'), region)).average,
    fullRegion: (await psnr(ff, at('full1.ts'), at('ref.y4m'), region)).average,
    bandWhole: (await psnr(ff, at('spliced.ts'), at('ref.y4m'), whole)).average,
    fullWhole: (await psnr(ff, at('full1.ts'), at('ref.y4m'), whole)).average,
  };
}

async function measureHeight(ctx: SuiteContext, x264: string, options: Options, height: number, dir: string): Promise<HeightResult> {
  const h = heightOf(ctx, x264, options, height, dir);
  const title = await encodeTitle(h);
  const s = await prepareSegments(h);
  const viewers: ViewerCost[] = [];
  for (let viewer = 1; viewer <= options.viewers; viewer++) viewers.push(await oneViewer(h, s, viewer));
  return {
    height,
    width: h.width,
    band: h.band,
    ...viewerFigures(
      viewers.map((v) => v.band),
      viewers.map((v) => v.fullS),
      s.prepareS,
      options.seconds,
    ),
    shared: title.shared,
    psnr: await quality(h),
    gate: { segments: s.segments.length, failures: viewers.reduce((n, v) => n + v.failures, 0), findings: viewers.flatMap((v) => v.findings) },
    ingest: { todayCpuS: title.today.cpuS, sharedCpuS: title.bothBands.cpuS, ratio: (title.today.cpuS + title.bothBands.cpuS) / title.today.cpuS },
  };
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1e6;
}

/** The gate on every spliced segment: decoded, it equals the shared segment outside the band, the band stream inside. */
async function checkGate(
  ff: string,
  dir: string,
  segments: Uint8Array[],
  pieces: Uint8Array[],
  spliced: Uint8Array[],
  band: BandRows,
  width: number,
  height: number,
): Promise<{ failures: number; findings: string[] }> {
  const bandRows = Math.min(16 * (band.bottom - band.top), height - 16 * band.top);
  const crop = (y: number, h: number) => `crop=${width}:${h}:0:${y}`;
  let failures = 0;
  const findings: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const files = ['gate-shared.ts', 'gate-band.264', 'gate-spliced.ts'].map((f) => path.join(dir, f));
    await writeFile(files[0]!, segments[i]!);
    await writeFile(files[1]!, pieces[i]!);
    await writeFile(files[2]!, spliced[i]!);
    const above = crop(0, 16 * band.top);
    const inside = crop(16 * band.top, bandRows);
    const found = gateFindings(
      { outside: [await framemd5(ff, files[2]!, above)], inside: await framemd5(ff, files[2]!, inside) },
      { outside: [await framemd5(ff, files[0]!, above)], inside: await framemd5(ff, files[1]!, crop(0, bandRows), true) },
    );
    if (found.length > 0) {
      failures++;
      findings.push(`segment ${i}: ${found.join('; ')}`);
    }
  }
  return { failures, findings };
}

export const suite: Suite = {
  name: 'band',
  description: 'band rendering: per-viewer cost, batch, shared-encode bytes, PSNR, gate failures, ingest, capacity through serve, against full renders',
  async run(ctx) {
    const options = parseOptions(ctx);
    const capacity = options.only.has('capacity') ? capacityOptions(ctx) : undefined;
    const x264 = bandX264(ctx, 'band');
    const results: HeightResult[] = [];
    if (options.only.has('figures')) {
      await inWorkFolder(ctx, 'band-run', async (work) => {
        for (const height of options.heights) {
          const dir = path.join(work, `${height}p`);
          await mkdir(dir, { recursive: true });
          results.push(await measureHeight(ctx, x264, options, height, dir));
        }
      });
      process.stdout.write(`${report(results, options, ENCODE)}\n`);
    }
    let carried: HeightCapacity[] = [];
    if (capacity) {
      carried = await measureCapacity(ctx, capacity);
      process.stdout.write(`${capacityReport(carried, capacity).join('\n')}\n`);
    }
    return { options: { ...options, only: [...options.only] }, results, capacity: capacity && { options: capacity, results: carried } };
  },
};
