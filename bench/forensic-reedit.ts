// F10 (re-edited copies) through the real CLI: a 5-minute 320x180 'natural' title ingested with --forensic, one viewer's mp4,
// and from it the leaks bench/forensic-hard-leaks.ts makes for F10 (played at 1.04x and 0.96x; six 40-s excerpts in the
// order [3,0,5,1,4,2]; all 0.5x, CRF 28), plus two leaks nobody may be named in: the same re-edit of the unmarked
// source, and the title as ingested before any mark (its working segments, CRF 30 + 0.5x, as the pipeline test's
// clean title: it should read every slot). Each is read by `wmark detect --json`; z, rank and accused are printed per
// leak. Not part of `npm run bench` or the tests.
//
//   node --import tsx bench/forensic-reedit.ts [--seeds 1,2,3] [--fresh] [--wmark path/to/bin/wmark.js]
//
// The title, viewer and leaks are cached under bench/out/f10-reedit/ (only detection reruns), so the same files can be
// read before and after a change to the detector; --fresh starts over. --wmark detects with another checkout's CLI
// (e.g. an export of main, for the figures before a change); ingest and watermark always use this one.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { rng } from '../harness/rng.js';
import type { DetectResult } from '../src/engine/forensic/detect.js';
import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { benchTools, fmt, OUT_DIR, table, WMARK_BIN } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

const execFileP = promisify(execFile);
const W = 320,
  H = 180,
  SECONDS = 300,
  FPS = 30;
const KEY = 'bench-f10';
const PAYLOAD = 40961;
const ORDER = [3, 0, 5, 1, 4, 2];

const log = (m: string) => process.stderr.write(`${m}\n`);
const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : (argv[i + 1] ?? '');
};
const seeds = (opt('seeds') ?? '1,2,3').split(',').map(Number);
const fresh = argv.includes('--fresh');
const detector = path.resolve(opt('wmark') ?? WMARK_BIN);

const tools = benchTools(process.env);
const ff = tools.ffmpeg.path;
const dir = path.join(OUT_DIR, 'f10-reedit');
const dataDir = path.join(dir, 'data');
if (fresh) await rm(dir, { recursive: true, force: true });
await mkdir(dir, { recursive: true });
const cwd = await mkdtemp(path.join(os.tmpdir(), 'bench-f10-cwd-'));
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env.WMARK_HOME;

async function wmark(...a: string[]): Promise<{ code: number; json: unknown }> {
  try {
    const { stdout } = await execFileP(process.execPath, [a[0] === 'detect' ? detector : WMARK_BIN, '--data-dir', dataDir, '--json', ...a], {
      env,
      cwd,
      maxBuffer: 64 << 20,
    });
    return { code: 0, json: JSON.parse(stdout) };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    // `wmark detect` exits 8 when nobody reaches the threshold: still a verdict.
    if (e.code === 8 && e.stdout) return { code: 8, json: JSON.parse(e.stdout) };
    throw new Error(`wmark ${a.join(' ')} failed (${e.code}): ${e.stderr ?? ''}`);
  }
}

async function ffmpeg(args: string[]): Promise<void> {
  await execFileP(ff, [...FFMPEG_QUIET, '-threads', '2', ...args], { maxBuffer: 64 << 20 });
}

const x264 = (crf: number) => ['-an', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(crf), '-pix_fmt', 'yuv420p', '-threads', '2'];
const half = `scale=${W / 2}:${H / 2}`;

/** bench/forensic-hard-leaks.ts's re-edit: six 40-s windows spread over the title (jittered by up to 5 s), shuffled. */
function reeditGraph(seed: number): { graph: string; starts: number[] } {
  const R = rng(seed);
  const starts = Array.from({ length: 6 }, (_, i) => i * ((SECONDS - 40) / 6) + R.next() * 5);
  const graph =
    `[0:v]split=6${ORDER.map((_, i) => `[s${i}]`).join('')};` +
    ORDER.map((k, i) => `[s${i}]trim=start=${starts[k]!.toFixed(2)}:duration=40,setpts=PTS-STARTPTS[t${i}]`).join(';') +
    `;${ORDER.map((_, i) => `[t${i}]`).join('')}concat=n=6:v=1:a=0,${half}[v]`;
  return { graph, starts };
}

const clip = await sourceClip(tools, { width: W, height: H, seconds: SECONDS, fps: FPS, audio: true }, log);
const stateFile = path.join(dir, 'state.json');
let state: { mp4: string };
if (existsSync(stateFile)) state = JSON.parse(await readFile(stateFile, 'utf8')) as typeof state;
else {
  log('ingesting with --forensic ...');
  await wmark('ingest', clip.path, '--key', KEY, '--forensic');
  log(`watermarking viewer ${PAYLOAD} ...`);
  const v = (await wmark('watermark', '--key', KEY, '--forensic', String(PAYLOAD), '--containers', 'mp4')).json as { files: { mp4?: string } };
  if (!v.files.mp4) throw new Error('no viewer mp4');
  state = { mp4: v.files.mp4 };
  await writeFile(stateFile, JSON.stringify(state));
}

interface Leak {
  name: string;
  file: string;
  truth: number | null;
  make: () => Promise<void>;
}
const leaks: Leak[] = [];
for (const speed of [1.04, 0.96]) {
  const file = path.join(dir, `speed-${speed}.mp4`);
  leaks.push({
    name: `played at ${speed}x`,
    file,
    truth: PAYLOAD,
    make: () => ffmpeg(['-i', state.mp4, '-vf', `setpts=PTS/${speed},fps=30,${half}`, ...x264(28), file]),
  });
}
for (const seed of seeds) {
  const { graph, starts } = reeditGraph(seed);
  const label = ORDER.map((k) => starts[k]!.toFixed(0)).join(', ');
  const file = path.join(dir, `reedit-${seed}.mp4`);
  leaks.push({
    name: `6 x 40 s shuffled, seed ${seed} (${label} s)`,
    file,
    truth: PAYLOAD,
    make: () => ffmpeg(['-i', state.mp4, '-filter_complex', graph, '-map', '[v]', ...x264(28), file]),
  });
}
{
  const { graph } = reeditGraph(seeds[0]!);
  const file = path.join(dir, 'reedit-unmarked.mp4');
  leaks.push({
    name: 'the re-edit of the unmarked source',
    file,
    truth: null,
    make: () => ffmpeg(['-i', clip.path, '-filter_complex', graph, '-map', '[v]', ...x264(28), file]),
  });
}

{
  const file = path.join(dir, 'clean-title.mp4');
  const make = async () => {
    const videos = path.join(dataDir, 'media', 'videos');
    const [video] = await readdir(videos);
    const segments = (await readdir(path.join(videos, video!))).filter((f) => /^seg_\d+\.ts$/.test(f)).sort();
    const joined = path.join(dir, 'clean-title.ts');
    await writeFile(joined, Buffer.concat(await Promise.all(segments.map((f) => readFile(path.join(videos, video!, f))))));
    await ffmpeg(['-i', joined, '-map', '0:v:0', '-vf', half, ...x264(30), file]);
    await rm(joined, { force: true });
  };
  leaks.push({ name: 'the clean title (ingested, no mark), CRF 30', file, truth: null, make });
}

const rows: (string | number)[][] = [];
for (const leak of leaks) {
  if (!existsSync(leak.file)) {
    log(`making ${path.basename(leak.file)} ...`);
    await leak.make();
  }
  const t0 = performance.now();
  const r = (await wmark('detect', leak.file, '--key', KEY)).json as DetectResult;
  const s = (performance.now() - t0) / 1000;
  const at = leak.truth === null ? -1 : r.candidates.findIndex((c) => c.payload === leak.truth);
  const z = at >= 0 ? fmt(r.candidates[at]!.z) : '-';
  const rank = leak.truth === null ? '-' : at >= 0 ? String(at + 1) : '>5';
  const accused = r.accused.map((a) => a.payload).join(', ') || 'nobody';
  const verdict =
    leak.truth === null
      ? r.accused.length
        ? 'FALSE ACCUSATION'
        : 'clean'
      : r.accused.some((a) => a.payload !== leak.truth)
        ? 'WRONG'
        : r.accused.length
          ? 'named'
          : 'missed';
  const pieces = r.pieces
    .map(
      (p) =>
        `${p.leakStart.toFixed(0)}-${p.leakEnd.toFixed(0)}>${(p.scale * p.leakStart + p.offset).toFixed(0)}${Math.abs(p.scale - 1) > 0.003 ? `@${p.scale.toFixed(3)}` : ''}`,
    )
    .join(' ');
  log(`  ${leak.name}: z ${z} rank ${rank}, accused ${accused}; ${r.segmentsRead} slots; pieces ${pieces}`);
  rows.push([leak.name, z, rank, accused, verdict, String(r.segmentsRead), String(r.pieces.length), fmt(s, 1)]);
}
process.stdout.write(
  `F10 via \`wmark detect --json\` (${path.relative(process.cwd(), detector)}): ${W}x${H} ${SECONDS} s natural title, viewer ${PAYLOAD}, leaks 0.5x CRF 28\n`,
);
process.stdout.write(`${table(['leak', 'z (true)', 'rank', 'accused', 'verdict', 'slots read', 'pieces', 'detect s'], rows)}\n`);
await rm(cwd, { recursive: true, force: true });
