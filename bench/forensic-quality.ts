// The forensic bench's F3: what the mark costs in picture and bytes. On sampled pairs of neighbouring segments: the
// mark's PSNR before any encode, variants A and B against the clean working segment encoded the same way, and the
// segment edge between the two (does the viewer's copy step there more than a clean copy does?).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { codeword, patternGrid } from '../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField, patternFrameYuv420 } from '../src/core/forensic/pattern-image.js';
import { variantFileFor } from '../src/core/forensic/title-layout.js';
import { variantArgs } from '../src/core/forensic/variant-plan.js';
import { segmentFileName } from '../src/core/plan/segment-timing.js';
import type { EdgeRow, SegmentRow } from './forensic-figures.js';
import { ENGINE_ENCODE, FPS } from './forensic-options.js';
import type { ForensicRun, Title, Viewer } from './forensic-setup.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { ffmpeg, grayFrames, parsePsnrY } from './lib/forensic-media.js';
import { cellMeans, meanAbsDiff } from './lib/frame-steps.js';

export interface QualityMeasures {
  rows: SegmentRow[];
  edges: EdgeRow[];
  /** The variant pipeline with an all-grey pattern gives the clean re-encode bit for bit (null: not checked). */
  baselineIdentical: boolean | null;
  /** The codeword of the viewer whose copy the edges are read from: which variant (A or B) each segment is. */
  code0: Int8Array;
}

/** What F3's steps share: the run, the title, its sizes and where the clean re-encodes go. */
interface Q {
  run: ForensicRun;
  title: Title;
  width: number;
  height: number;
  gop: number;
  f3Dir: string;
  cleanSeg: (k: number) => string;
}

/** Frames are paired by order: each file's video is re-timed to start at 0 (a variant carries audio that starts earlier than its video, the clean re-encode has none). */
async function psnrOf(ff: string, x: string, y: string): Promise<number> {
  const r = await ffmpeg(ff, [
    '-hide_banner',
    '-nostdin',
    '-i',
    x,
    '-i',
    y,
    '-lavfi',
    '[0:v]setpts=PTS-STARTPTS[x];[1:v]setpts=PTS-STARTPTS[y];[x][y]psnr',
    '-f',
    'null',
    '-',
  ]);
  return parsePsnrY(r.stderr);
}

/** Video-only bytes: the audio is copied identically into every variant, so it is left out of the overhead. */
async function videoStream(ff: string, file: string): Promise<Buffer> {
  return (await ffmpeg(ff, ['-v', 'error', '-i', file, '-map', '0:v:0', '-c', 'copy', '-f', 'h264', 'pipe:1'])).stdout;
}

/** The mark alone: PSNR of working+pattern (grainmerge, as variant A is made) against working, before any encode; and as computed from the pattern frame and from the pattern field (no dither). */
async function markPsnr(q: Q, k: number, working: string): Promise<Pick<SegmentRow, 'markPsnrY' | 'markPsnrCalc' | 'markPsnrNoDither'>> {
  const { width, height, title } = q;
  const pattern = path.join(q.f3Dir, `pattern_${k}.yuv`);
  const frame = patternFrameYuv420(patternGrid(title.key, title.video.id, k), width, height);
  await writeFile(pattern, frame);
  const markRun = await ffmpeg(q.run.ff, [
    ...['-hide_banner', '-nostdin', '-threads', '1', '-i', working],
    ...['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-i', pattern],
    ...['-filter_complex', '[0:v]split[v0][v1];[v0][1:v]blend=c0_mode=grainmerge:c1_mode=normal:c2_mode=normal[a];[a][v1]psnr', '-f', 'null', '-'],
  ]);
  await rm(pattern, { force: true });
  let sq = 0;
  for (let p = 0; p < width * height; p++) sq += (frame[p]! - 128) ** 2;
  let sqIdeal = 0;
  for (const f of patternField(patternGrid(title.key, title.video.id, k), width, height)) sqIdeal += (MARK_AMPLITUDE * f) ** 2;
  return {
    markPsnrY: parsePsnrY(markRun.stderr),
    markPsnrCalc: 10 * Math.log10((255 * 255) / (sq / (width * height))),
    markPsnrNoDither: 10 * Math.log10((255 * 255) / (sqIdeal / (width * height))),
  };
}

/** The clean working segment encoded exactly as the variants are (same settings; encoder threads as for A). */
async function cleanEncode(q: Q, k: number, working: string): Promise<void> {
  const gop = String(q.gop);
  await ffmpeg(q.run.ff, [
    ...FFMPEG_QUIET,
    ...['-copyts', '-threads', '1', '-i', working, '-threads', '1', '-map', '0:v:0'],
    ...['-c:v', 'libx264', '-preset', ENGINE_ENCODE.preset, '-crf', String(ENGINE_ENCODE.crf), '-g', gop, '-keyint_min', gop],
    ...['-sc_threshold', '0', '-x264-params', 'open-gop=0', '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts', q.cleanSeg(k)],
  ]);
}

/** Segment k: the mark's PSNR, variants A and B against the clean re-encode in bytes and PSNR. */
async function measureSegment(q: Q, k: number): Promise<SegmentRow> {
  const { title, run } = q;
  const { layout, forensicDir } = title;
  const working = path.join(title.videoDir, segmentFileName(k));
  const mark = await markPsnr(q, k, working);
  await cleanEncode(q, k, working);
  const a = path.join(forensicDir, variantFileFor(layout, [1, 1], k).replace(/^[ab]+/, layout.slotsPerSegment[k] === 2 ? 'aa' : 'a'));
  const b = path.join(forensicDir, variantFileFor(layout, [-1, -1], k).replace(/^[ab]+/, layout.slotsPerSegment[k] === 2 ? 'bb' : 'b'));
  const clean = q.cleanSeg(k);
  return {
    k,
    ...mark,
    aBytes: (await videoStream(run.ff, a)).length,
    bBytes: (await videoStream(run.ff, b)).length,
    cleanBytes: (await videoStream(run.ff, clean)).length,
    aVsClean: await psnrOf(run.ff, a, clean),
    aVsWorking: await psnrOf(run.ff, a, working),
    cleanVsWorking: await psnrOf(run.ff, clean, working),
  };
}

/** Baseline check: the variant pipeline itself (src variantArgs) with an all-grey pattern must give exactly the clean re-encode. */
async function greyIsClean(q: Q, k: number): Promise<boolean> {
  const { width, height, title, f3Dir } = q;
  const grey = path.join(f3Dir, 'grey.yuv');
  await writeFile(grey, Buffer.alloc((width * height * 3) / 2, 128));
  const outA = path.join(f3Dir, `grey_a_${k}.ts`);
  const outB = path.join(f3Dir, `grey_b_${k}.ts`);
  const input = path.join(title.videoDir, segmentFileName(k));
  await ffmpeg(q.run.ff, [
    ...['-hide_banner', '-nostdin', '-loglevel', 'error'],
    ...variantArgs({ input, pattern: grey, width, height, outA, outB, gop: q.gop, encode: ENGINE_ENCODE, hasAudio: title.video.hasAudio }),
  ]);
  const [g, cl] = await Promise.all([videoStream(q.run.ff, outA), videoStream(q.run.ff, q.cleanSeg(k))]);
  await rm(grey, { force: true });
  return g.equals(cl);
}

/** Edge k -> k+1: the viewer's copy (viewer 0's variants) against the clean re-encode with the same settings. */
async function measureEdge(q: Q, k: number, viewer: Viewer, code0: Int8Array): Promise<EdgeRow> {
  const { width, height, title, run } = q;
  const viewerSeg = (i: number) => path.join(path.dirname(viewer.mp4), segmentFileName(i));
  const frames = Math.round(title.video.segments[k]! * FPS);
  const [vPrev, vLast] = await grayFrames(run.ff, viewerSeg(k), [frames - 2, frames - 1], width, height);
  const [vFirst] = await grayFrames(run.ff, viewerSeg(k + 1), [0], width, height);
  const [cLast] = await grayFrames(run.ff, q.cleanSeg(k), [frames - 1], width, height);
  const [cFirst] = await grayFrames(run.ff, q.cleanSeg(k + 1), [0], width, height);
  // The mark's change at this edge by design: s_k+1 * a * P_k+1 - s_k * a * P_k.
  const pk = patternField(patternGrid(title.key, title.video.id, k), width, height);
  const pk1 = patternField(patternGrid(title.key, title.video.id, k + 1), width, height);
  return {
    k,
    viewerEdge: meanAbsDiff(vLast!, vFirst!),
    cleanEdge: meanAbsDiff(cLast!, cFirst!),
    viewerInside: meanAbsDiff(vPrev!, vLast!),
    step: cellMeans((i) => vFirst![i]! - vLast![i]! - (cFirst![i]! - cLast![i]!), width, height),
    designStep: cellMeans((i) => MARK_AMPLITUDE * (code0[k + 1]! * pk1[i]! - code0[k]! * pk[i]!), width, height),
  };
}

/** The first segment of each sampled pair: pairs of neighbouring segments (k, k+1), spread over the title. */
export function pairStarts(samples: number, segments: number): number[] {
  const pairs = Math.max(1, Math.min(Math.floor(samples / 2), Math.floor(segments / 2)));
  return Array.from({ length: pairs }, (_, i) => Math.min(segments - 2, Math.floor(((i + 0.5) * (segments - 1)) / pairs)));
}

/** F3 on `--f3-segments` sampled segments, in neighbouring pairs, so each pair also gives one segment edge to inspect. */
export async function measureQuality(run: ForensicRun, title: Title, viewer: Viewer): Promise<QualityMeasures> {
  const starts = pairStarts(run.o.f3Samples, title.segments);
  if (run.want('f3')) run.log(`[${run.elapsed()}] F3: mark quality and bitrate on ${starts.length * 2} sampled segments (${starts.length} edges) ...`);
  const f3Dir = path.join(run.runDir, 'f3');
  await mkdir(f3Dir, { recursive: true });
  const q: Q = { run, title, width: run.o.width, height: run.o.height, gop: Math.round(4 * FPS), f3Dir, cleanSeg: (k) => path.join(f3Dir, `clean_${k}.ts`) };
  const code0 = codeword(title.key, title.video.id, viewer.payload, title.layout.slots);
  const measures: QualityMeasures = { rows: [], edges: [], baselineIdentical: null, code0 };
  for (const k of run.want('f3') ? starts : []) {
    measures.rows.push(await measureSegment(q, k));
    if (measures.baselineIdentical === null) measures.baselineIdentical = await greyIsClean(q, k);
    measures.rows.push(await measureSegment(q, k + 1));
    measures.edges.push(await measureEdge(q, k, viewer, code0));
  }
  return measures;
}
