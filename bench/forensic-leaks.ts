// The forensic bench's other leaks, each detected in-process: short excerpts of one viewer's copy (F2), two viewers'
// copies averaged (F7), and copies that carry no mark of this title (F6: the unmarked source, other titles, the plain
// ingest's working copy).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { segmentFileName } from '../src/core/plan/segment-timing.js';
import { multiOutputArgs } from './forensic-attacks.js';
import { detectKeepingFrames, type LeakOutcome } from './forensic-detect.js';
import { SECONDS } from './forensic-options.js';
import type { ForensicRun, Title, Viewer } from './forensic-setup.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { even, ffmpeg, x264 } from './lib/forensic-media.js';
import { fmt } from './lib/suite.js';

export type ShortLeak = LeakOutcome & { minutes: number; startS: number };

/** F2: leaks of 3.5, 3 and 2.5 min from viewer 0 (CRF 30 + 0.5x), each at its own random start. */
export async function shortLeaks(run: ForensicRun, title: Title, viewers: Viewer[]): Promise<ShortLeak[]> {
  const f2: ShortLeak[] = [];
  if (!run.want('f2')) return f2;
  const { R, o } = run;
  const f2Payload = viewers[0]!.payload;
  const f2Lengths = [3.5, 3.0, 2.5];
  const window = { start: Number((R.next() * (SECONDS - f2Lengths[0]! * 60 - 1)).toFixed(3)), duration: f2Lengths[0]! * 60 };
  const f2Branches = f2Lengths.map((min) => {
    // Each shorter leak starts at its own random point inside the decoded 3.5-min window.
    const offset = Number((R.next() * (f2Lengths[0]! - min) * 60).toFixed(3));
    return { min, offset, out: path.join(run.leakDir, `f2-p${f2Payload}-${min}min.mp4`) };
  });
  run.log(`[${run.elapsed()}] F2: leaks of ${f2Lengths.join(', ')} min from viewer ${f2Payload}, window from ${window.start.toFixed(1)} s ...`);
  const branches = f2Branches.map((b) => ({
    filter: `trim=start=${b.offset}:duration=${b.min * 60},setpts=PTS-STARTPTS,scale=${even(o.width / 2)}:${even(o.height / 2)}`,
    out: b.out,
    crf: 30,
  }));
  await ffmpeg(run.ff, multiOutputArgs(viewers[0]!.mp4, branches, o.threads, window));
  for (const b of f2Branches) {
    const x = await detectKeepingFrames(title, `f2-${b.min}min`, b.out, [f2Payload]);
    f2.push({ ...x, minutes: b.min, startS: window.start + b.offset });
    run.log(`  ${b.min} min from ${(window.start + b.offset).toFixed(1)} s: ${x.verdict}, z ${fmt(x.trueZ[0]!)}, ${x.segmentsRead} segments`);
  }
  return f2;
}

/** F7: the copies of viewers 0 and 1 averaged (blend=all_mode=average), re-encoded at --collusion-scale, CRF 23. */
export async function averagedPair(run: ForensicRun, title: Title, viewers: Viewer[]): Promise<LeakOutcome | undefined> {
  if (!run.want('f7')) return undefined;
  const { o } = run;
  const [u1, u2] = [viewers[0]!.payload, viewers[1]!.payload];
  const f7File = path.join(run.leakDir, `f7-average-${u1}-${u2}.mp4`);
  run.log(`[${run.elapsed()}] F7: averaging viewers ${u1} and ${u2} (re-encoded at ${o.collusionScale}x, CRF 23) ...`);
  const scaleF7 = o.collusionScale === 1 ? '' : `,scale=${even(o.width * o.collusionScale)}:${even(o.height * o.collusionScale)}`;
  const threads = String(o.threads);
  await ffmpeg(run.ff, [
    ...FFMPEG_QUIET,
    '-threads',
    threads,
    '-i',
    viewers[0]!.mp4,
    '-threads',
    threads,
    '-i',
    viewers[1]!.mp4,
    '-filter_complex',
    `[0:v][1:v]blend=all_mode=average${scaleF7}[v]`,
    '-map',
    '[v]',
    ...x264(23, o.threads),
    f7File,
  ]);
  const f7 = await detectKeepingFrames(title, 'f7-average', f7File, [u1, u2]);
  run.log(`  F7: accused ${f7.accused.join(', ') || 'nobody'}, collusion ${f7.collusion}, z ${f7.trueZ.map((z) => fmt(z)).join(' / ')}`);
  if (!run.keep) await rm(f7File, { force: true });
  return f7;
}

interface NullBranch {
  name: string;
  filter: string;
  crf: number;
  out: string;
}

/** F6's copies made from the source in one ffmpeg, and one re-edited from the first of them (halves swapped). */
async function unmarkedCopies(run: ForensicRun, nullDir: string, half: string): Promise<NullBranch[]> {
  const { width, height, threads } = run.o;
  const nullBranches = [
    { name: 'unmarked source, CRF 30 + 0.5x', filter: half, crf: 30 },
    { name: 'other title: hflip, 0.5x', filter: `hflip,${half}`, crf: 23 },
    { name: 'other title: vflip, 0.5x', filter: `vflip,${half}`, crf: 23 },
    { name: 'other title: rotated 180, 0.5x', filter: `hflip,vflip,${half}`, crf: 23 },
    { name: 'other title: 2x zoom (top-left quarter)', filter: `crop=${even(width / 2)}:${even(height / 2)}:0:0`, crf: 23 },
    { name: 'unmarked, re-edited (halves swapped), 0.5x', filter: '', crf: 23 },
  ].map((b, i) => ({ ...b, out: path.join(nullDir, `null-${i}.mp4`) }));
  // Re-edited: the second half of the clip played first (made from the first output below, not in the split graph).
  await ffmpeg(run.ff, multiOutputArgs(run.clip.path, nullBranches.slice(0, 5), threads));
  const halfS = SECONDS / 2;
  await ffmpeg(run.ff, [
    ...FFMPEG_QUIET,
    '-threads',
    String(threads),
    '-i',
    nullBranches[0]!.out,
    '-filter_complex',
    `[0:v]split[a][b];[a]trim=start=${halfS},setpts=PTS-STARTPTS[x];[b]trim=end=${halfS},setpts=PTS-STARTPTS[y];[x][y]concat=n=2:v=1:a=0[v]`,
    '-map',
    '[v]',
    ...x264(23, threads),
    nullBranches[5]!.out,
  ]);
  return nullBranches;
}

/** The plain ingest's working form re-joined at half size: another unmarked copy, one that went through wmark. */
async function plainWorkingCopy(run: ForensicRun, title: Title, nullDir: string, half: string): Promise<NullBranch> {
  const plainVideo = title.plainVideo!;
  const plainDir = path.join(run.dataDir, 'media', 'videos', plainVideo.id);
  const list = path.join(nullDir, 'plain-concat.txt');
  const files = plainVideo.segments.map((_, i) => path.join(plainDir, segmentFileName(i)));
  const out = path.join(nullDir, 'plain-working-half.mp4');
  await writeFile(list, files.map((f) => `file '${f}'`).join('\n'));
  const threads = run.o.threads;
  await ffmpeg(run.ff, [
    ...FFMPEG_QUIET,
    '-threads',
    String(threads),
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    list,
    '-map',
    '0:v:0',
    '-vf',
    half,
    ...x264(23, threads),
    out,
  ]);
  return { name: 'unmarked: plain ingest working copy, 0.5x', filter: half, crf: 23, out };
}

/** F6, real detects: copies that carry no mark of this title must accuse nobody. */
export async function nullCopies(run: ForensicRun, title: Title): Promise<LeakOutcome[]> {
  const nullReal: LeakOutcome[] = [];
  if (!run.want('f6')) return nullReal;
  run.log(`[${run.elapsed()}] F6: unmarked copies and other titles ...`);
  const half = `scale=${even(run.o.width / 2)}:${even(run.o.height / 2)}`;
  const nullDir = path.join(run.leakDir, 'null');
  await mkdir(nullDir, { recursive: true });
  const nullBranches = await unmarkedCopies(run, nullDir, half);
  if (run.o.rawNull) {
    const x = await detectKeepingFrames(title, 'unmarked source (as generated)', run.clip.path, []);
    nullReal.push(x);
    run.log(`  unmarked source: ${x.verdict}, best z ${fmt(x.bestZ)}`);
  }
  nullBranches.push(await plainWorkingCopy(run, title, nullDir, half));
  for (const b of nullBranches) {
    const x = await detectKeepingFrames(title, b.name, b.out, []);
    nullReal.push(x);
    run.log(`  ${b.name}: ${x.verdict}, best z ${fmt(x.bestZ)}, ${x.segmentsRead} segments, alignment ${fmt(x.alignment.score, 3)}`);
  }
  return nullReal;
}
