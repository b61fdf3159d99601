// Suite `forensic-bframe`: can the forensic code ride on x264's non-reference B-frames alone? If variants A and B differ
// only in frames nothing references, a viewer's stream could switch between them at any B-frame, at the price of two
// encodes. This suite measures what that scheme would cost and keep, on the engine's generated footage, before any of
// it is built into a layout:
//   - whether x264, set to be deterministic (2 B-frames, no adaptive B, no pyramid, no mbtree, no scene cuts, one
//     thread), really codes A's and B's I/P frames byte for byte alike when the mark is drawn only on B-frames;
//   - what the deterministic settings cost in bytes at the PSNR of today's encode (a CRF sweep, log-bytes interpolated);
//   - how much of the mark the encode keeps on the marked frames, and what it costs in bytes, for the B-frames-only mark
//     against the same mark drawn on every frame (as today's layouts draw it);
//   - what that leaves a 1-minute leak: the mark's signal-to-noise in a 1-s code slot against a 2-s slot of the
//     every-frame mark, and the z a 1-minute leak would reach, projected from the 2-minute figure of today's layouts.
// The mark is the engine's own pattern. Every B-frame-only row draws it at the amplitude whose mean square over all
// frames equals the every-frame mark's, so each row costs the picture the same.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GRID_COLUMNS, GRID_ROWS } from '../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField, patternFrameYuv420 } from '../src/core/forensic/pattern-image.js';
import { x264Gop } from '../src/core/plan/x264.js';
import { fmt, type Suite, type SuiteContext, table } from './lib/suite.js';
import { psnr, type Region, sourceClip } from './lib/video.js';

const execFileP = promisify(execFile);

const FPS = 30;
/** One working segment's GOP: 4 s. */
const GOP = 4 * FPS;
/** What today's forensic variants are encoded with (the engine's default encode). */
const PRESET = 'veryfast';

/** x264 made deterministic for the scheme: fixed frame types, no rate decisions that look across frames. */
const DETERMINISTIC_PARAMS = 'open-gop=0:b-pyramid=none:mbtree=0:b-adapt=0:bframes=2';

/** The B-frame-only settings tried: x264 under DETERMINISTIC_PARAMS alone, then settings that keep more of a faint mark. */
const TRIALS: { name: string; extra: string }[] = [
  { name: 'deterministic', extra: '' },
  { name: '+ pbratio=1.0', extra: ':pbratio=1.0' },
  { name: '+ pbratio=1.0, deadzone-inter=6, no-fast-pskip', extra: ':pbratio=1.0:deadzone-inter=6:no-fast-pskip=1' },
];

interface Options {
  heights: number[];
  kinds: ('natural' | 'scene')[];
  seconds: number;
  crf: number;
}

function parseOptions(ctx: SuiteContext): Options {
  const list = (v: string | true | undefined, fallback: string) => (typeof v === 'string' ? v : fallback).split(',').filter(Boolean);
  const heights = list(ctx.args.options.heights, '180,720').map(Number);
  if (!heights.every((h) => Number.isInteger(h) && h >= 90 && h % 2 === 0)) throw new Error('--heights: even frame heights, e.g. 180,720');
  const kinds = list(ctx.args.options.kinds, 'natural,scene');
  if (!kinds.every((k) => k === 'natural' || k === 'scene')) throw new Error('--kinds: natural and/or scene');
  const seconds = Number(ctx.args.options.seconds ?? 12);
  if (!Number.isInteger(seconds) || seconds < 4 || seconds % 4) throw new Error('--seconds: a multiple of 4 (whole GOPs)');
  const crf = Number(ctx.args.options.crf ?? 23);
  if (!Number.isFinite(crf) || crf < 0 || crf > 51) throw new Error('--crf: 0..51');
  return { heights, kinds: kinds as Options['kinds'], seconds, crf };
}

async function ffmpeg(ctx: SuiteContext, args: string[], maxBuffer = 64 * 1024 * 1024): Promise<{ stdout: Buffer; stderr: string }> {
  const { stdout, stderr } = await execFileP(ctx.tools.ffmpeg.path, ['-hide_banner', '-nostdin', ...args], { encoding: 'buffer', maxBuffer });
  return { stdout, stderr: stderr.toString('utf8') };
}

const x264 = (crf: number, extra: string[]) => ['-threads', '1', '-c:v', 'libx264', '-preset', PRESET, '-crf', String(crf), ...extra, '-f', 'mpegts'];

/** The fixed closed GOP of every plan, with the deterministic set (and a trial's extras) as x264's parameters. */
function deterministic(extra = ''): string[] {
  return [
    '-g',
    String(GOP),
    '-keyint_min',
    String(GOP),
    '-sc_threshold',
    '0',
    '-bf',
    '2',
    '-b_strategy',
    '0',
    '-x264-params',
    `${DETERMINISTIC_PARAMS}${extra}`,
  ];
}

/** Frame types in display order, as the decoder reports them. */
async function frameTypes(ctx: SuiteContext, file: string): Promise<string> {
  const { stderr } = await ffmpeg(ctx, ['-i', file, '-vf', 'showinfo', '-f', 'null', '-']);
  return [...stderr.matchAll(/ type:([IPB]) /g)].map((m) => m[1]).join('');
}

/** Per frame in display order, the MD5 of its packet's bytes (packets come in decode order, placed by their pts). */
async function packetHashes(ctx: SuiteContext, file: string): Promise<string[]> {
  const { stdout } = await ffmpeg(ctx, ['-v', 'error', '-i', file, '-map', '0:v', '-c', 'copy', '-f', 'framemd5', '-']);
  const packets = stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(',').map((c) => c.trim()))
    .map((c) => ({ pts: Number(c[2]), duration: Number(c[3]), hash: c[5]! }));
  const first = Math.min(...packets.map((p) => p.pts));
  const byFrame: string[] = [];
  for (const p of packets) byFrame[Math.round((p.pts - first) / p.duration)] = p.hash;
  return byFrame;
}

const grey = async (ctx: SuiteContext, file: string) => (await ffmpeg(ctx, ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], 4e9)).stdout;
const bytesOf = async (file: string) => (await stat(file)).size;

/** Log-bytes interpolated on the (PSNR, bytes) curve at `target` PSNR; extrapolated from the nearest pair outside it. */
export function bytesAtPsnr(curve: { psnr: number; bytes: number }[], target: number): number {
  const pts = [...curve].sort((a, b) => a.psnr - b.psnr);
  let i = pts.findIndex((p) => p.psnr >= target);
  if (i <= 0) i = i === 0 ? 1 : pts.length - 1;
  const [lo, hi] = [pts[i - 1]!, pts[i]!];
  const f = (target - lo.psnr) / (hi.psnr - lo.psnr);
  return Math.exp(Math.log(lo.bytes) + f * (Math.log(hi.bytes) - Math.log(lo.bytes)));
}

interface MarkRow {
  setting: string;
  drawnOn: 'B-frames' | 'every frame';
  amplitude: number;
  markPsnr: number;
  ipIdentical: string;
  bDiffering: string;
  bytesVsUnmarked: number;
  bytesVsPlainEqualPsnr: number;
  kept: number;
  /** Amplitude signal-to-noise of one 1-s slot (B-frames) or 2-s slot (every frame), against the every-frame 2-s slot. */
  slotSnr: number;
  /** The z of a 1-minute leak (60 slots of 1 s), or of a 2-minute one for the every-frame row (the reference). */
  projectedZ: number;
}

/**
 * What today's layouts reach on a 2-minute leak: z 6.5 over 59 two-second slots (docs/forensic.md). With each slot's
 * reading s = c * mu + noise, the true viewer's z is sqrt(slots) * mu / sqrt(mu^2 + sigma^2); this is the mu / sigma
 * of one such slot that gives it.
 */
const REFERENCE = { z: 6.5, slots: 59 };
const referenceSnr = (() => {
  const f = REFERENCE.z / Math.sqrt(REFERENCE.slots);
  return f / Math.sqrt(1 - f * f);
})();
/** The true viewer's z over `slots` slots of amplitude signal-to-noise `snr` each. */
export const zOver = (slots: number, snr: number) => (Math.sqrt(slots) * snr) / Math.sqrt(1 + snr * snr);

const isB = (f: number) => f % 3 !== 0 && f % GOP !== GOP - 1;

/**
 * Today's encode, the deterministic settings' rate curve around its CRF (and the bytes they need at today's PSNR), and
 * where the unmarked deterministic encode put its B-frames.
 */
async function rateAndFrames(ctx: SuiteContext, o: Options, clip: { path: string }, at: (name: string) => string, full: Region) {
  const plain = at('plain.ts');
  await ffmpeg(ctx, ['-y', '-i', clip.path, ...x264(o.crf, x264Gop(GOP)), plain]);
  const plainPoint = { psnr: (await psnr(ctx.tools.ffmpeg.path, plain, clip.path, full)).y, bytes: await bytesOf(plain) };
  const curve: { crf: number; psnr: number; bytes: number }[] = [];
  for (const crf of [o.crf - 2, o.crf - 1, o.crf, o.crf + 1, o.crf + 2]) {
    const file = at(`det-${crf}.ts`);
    await ffmpeg(ctx, ['-y', '-i', clip.path, ...x264(crf, deterministic()), file]);
    curve.push({ crf, psnr: (await psnr(ctx.tools.ffmpeg.path, file, clip.path, full)).y, bytes: await bytesOf(file) });
  }
  const unmarked = at(`det-${o.crf}.ts`);
  const types = await frameTypes(ctx, unmarked);
  const expected = Array.from({ length: types.length }, (_, f) => (isB(f) ? 'B' : '.'));
  return {
    plainPoint,
    curve,
    detAtPlain: bytesAtPsnr(curve, plainPoint.psnr),
    frames: types.length,
    typesMatch: expected.every((t, f) => (t === 'B') === (types[f] === 'B')),
    bCount: expected.filter((t) => t === 'B').length,
    unmarkedBytes: await bytesOf(unmarked),
  };
}

/** What every A/B trial of one clip shares: the clip, its size, the pattern and the unmarked encode's figures. */
interface ProbeClip {
  ctx: SuiteContext;
  o: Options;
  kind: Options['kinds'][number];
  clip: { path: string };
  width: number;
  height: number;
  at: (name: string) => string;
  grid: Int8Array;
  field: Float32Array;
  /** The pattern field's energy, sum of its squares. */
  ff: number;
  rate: Awaited<ReturnType<typeof rateAndFrames>>;
}

/** The engine's pattern at `amplitude` as a raw frame file, and its mean-square value. */
async function patternOf(p: ProbeClip, amplitude: number): Promise<{ file: string; mse: number }> {
  const n = p.width * p.height;
  const frame = patternFrameYuv420(p.grid, p.width, p.height, amplitude);
  const file = p.at(`pattern-${amplitude.toFixed(3)}.yuv`);
  await writeFile(file, frame);
  let se = 0;
  for (let i = 0; i < n; i++) se += (frame[i]! - 128) ** 2;
  return { file, mse: se / n };
}

/** Kept amplitude on the marked frames: (A - B) / 2 regressed on the pattern, averaged over those frames. */
async function keptShare(p: ProbeClip, a: string, b: string, every: boolean, amplitude: number): Promise<number> {
  const n = p.width * p.height;
  const [da, db] = [await grey(p.ctx, a), await grey(p.ctx, b)];
  let keptSum = 0;
  let marked = 0;
  for (let f = 0; f < da.length / n; f++) {
    if (!every && !isB(f)) continue;
    let s = 0;
    for (let i = 0, off = f * n; i < n; i++) s += ((da[off + i]! - db[off + i]!) / 2) * p.field[i]!;
    keptSum += s / p.ff / amplitude;
    marked++;
  }
  return keptSum / marked;
}

/**
 * One A/B trial: the mark added (A) and taken away (B) on every frame or on the B-frames alone, both encoded with the
 * trial's settings. Returns its row (slot SNR still absolute: the caller divides by the every-frame one).
 */
async function markTrial(p: ProbeClip, t: { name: string; extra: string; every: boolean }): Promise<MarkRow> {
  const { ctx, o, width, height, rate } = p;
  const { frames, bCount } = rate;
  // Same mean-square mark over all frames as the every-frame mark: the B-frames carry the rest.
  const amplitude = t.every ? MARK_AMPLITUDE : MARK_AMPLITUDE * Math.sqrt(frames / bCount);
  ctx.log(`${p.kind} ${width}x${height}: A/B with the mark on ${t.every ? 'every frame' : 'B-frames'}, ${t.name} ...`);
  const pattern = await patternOf(p, amplitude);
  const enable = t.every ? '' : `:enable='not(eq(mod(n,3),0))*not(eq(mod(n,${GOP}),${GOP - 1}))'`;
  const blend = (mode: string) => `blend=c0_mode=${mode}:c1_mode=normal:c2_mode=normal${enable}`;
  const [a, b] = [p.at('A.ts'), p.at('B.ts')];
  const raw = ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-i', pattern.file];
  await ffmpeg(ctx, [
    '-y',
    '-threads',
    '1',
    '-i',
    p.clip.path,
    ...raw,
    ...raw,
    '-filter_complex',
    `[0:v]split[va][vb];[va][1:v]${blend('grainmerge')}[a];[vb][2:v]${blend('grainextract')}[b]`,
    '-map',
    '[a]',
    ...x264(o.crf, deterministic(t.extra)),
    a,
    '-map',
    '[b]',
    ...x264(o.crf, deterministic(t.extra)),
    b,
  ]);
  const [ha, hb] = await Promise.all([packetHashes(ctx, a), packetHashes(ctx, b)]);
  const identicalRefs = ha.filter((h, f) => !isB(f) && h === hb[f]).length;
  const differingB = ha.filter((h, f) => isB(f) && h !== hb[f]).length;
  const kept = await keptShare(p, a, b, t.every, amplitude);
  const markedShare = t.every ? 1 : bCount / frames;
  // Noise in a slot's reading falls with the square root of the frames it averages: 2 s of every frame, or the
  // B-frames of 1 s.
  const signal = kept * amplitude * Math.sqrt(t.every ? 2 * FPS : (FPS * bCount) / frames);
  const bytes = ((await bytesOf(a)) + (await bytesOf(b))) / 2;
  return {
    setting: t.name,
    drawnOn: t.every ? 'every frame' : 'B-frames',
    amplitude,
    markPsnr: 10 * Math.log10((255 * 255) / (pattern.mse * markedShare)),
    ipIdentical: t.every ? '-' : `${identicalRefs} of ${frames - bCount}`,
    bDiffering: t.every ? '-' : `${differingB} of ${bCount}`,
    bytesVsUnmarked: bytes / rate.unmarkedBytes - 1,
    bytesVsPlainEqualPsnr: (bytes / rate.unmarkedBytes) * (rate.detAtPlain / rate.plainPoint.bytes) - 1,
    kept,
    slotSnr: signal,
    projectedZ: 0,
  };
}

async function probe(ctx: SuiteContext, o: Options, kind: Options['kinds'][number], height: number, work: string) {
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const clip = await sourceClip(ctx.tools, { width, height, seconds: o.seconds, fps: FPS, audio: false, kind }, ctx.log);
  const at = (name: string) => path.join(work, `${kind}-${height}-${name}`);
  ctx.log(`${kind} ${width}x${height}: plain and deterministic encodes ...`);
  const rate = await rateAndFrames(ctx, o, clip, at, { x: 0, y: 0, w: width, h: height });

  // The engine's pattern, keyed by a fixed grid (any grid serves: only its energy and smoothness matter here).
  const grid = Int8Array.from({ length: GRID_COLUMNS * GRID_ROWS }, (_, i) => ((i * 7919) % 13 < 6 ? 1 : -1));
  const field = patternField(grid, width, height);
  let ff = 0;
  for (let i = 0; i < width * height; i++) ff += field[i]! ** 2;
  const p: ProbeClip = { ctx, o, kind, clip, width, height, at, grid, field, ff, rate };

  const rows: MarkRow[] = [];
  const trials = [{ name: 'deterministic', extra: '', every: true }, ...TRIALS.map((t) => ({ ...t, every: false }))];
  for (const t of trials) rows.push(await markTrial(p, t));
  const everyFrameSignal = rows[0]!.slotSnr;
  for (const r of rows) {
    r.slotSnr /= everyFrameSignal;
    r.projectedZ = r.drawnOn === 'B-frames' ? zOver(60, referenceSnr * r.slotSnr) : REFERENCE.z;
  }
  return {
    kind,
    width,
    height,
    plain: rate.plainPoint,
    curve: rate.curve,
    deterministicBytesAtPlainPsnr: rate.detAtPlain / rate.plainPoint.bytes - 1,
    frameTypes: { bFrames: rate.bCount, frames: rate.frames, asPlanned: rate.typesMatch },
    rows,
  };
}

export const suite: Suite = {
  name: 'forensic-bframe',
  description: 'whether a forensic code can ride on non-reference B-frames alone: packet identity, bytes at equal PSNR, mark kept',
  async run(ctx: SuiteContext) {
    const o = parseOptions(ctx);
    const work = await mkdtemp(path.join(os.tmpdir(), 'bench-bframe-'));
    const results: Awaited<ReturnType<typeof probe>>[] = [];
    try {
      for (const height of o.heights) for (const kind of o.kinds) results.push(await probe(ctx, o, kind, height, work));
    } finally {
      if (!ctx.args.keep) await rm(work, { recursive: true, force: true });
    }
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${fmt(100 * x, 1)} %`;
    const out: string[] = [`B-frame forensic probe: ${o.seconds} s clips, ${GOP}-frame GOPs, x264 ${PRESET} CRF ${o.crf}, one thread per encode`, ''];
    for (const r of results) {
      out.push(
        `${r.kind} ${r.width}x${r.height}: ${r.frameTypes.bFrames} of ${r.frameTypes.frames} frames are B-frames` +
          `${r.frameTypes.asPlanned ? ', where the plan put them' : ', NOT where the plan put them'}; ` +
          `plain encode ${(r.plain.bytes / 1e3).toFixed(0)} kB at ${fmt(r.plain.psnr)} dB PSNR-Y; ` +
          `deterministic settings at that PSNR: ${pct(r.deterministicBytesAtPlainPsnr)} bytes`,
        table(
          [
            'mark drawn on',
            'settings',
            'amplitude',
            'mark PSNR dB',
            'I/P packets identical',
            'B packets differing',
            'bytes vs unmarked',
            'vs plain, equal PSNR',
            'mark kept',
            'slot SNR vs every frame',
            'z of a 1-min leak',
          ],
          r.rows.map((m) => [
            m.drawnOn,
            m.setting,
            m.amplitude,
            m.markPsnr,
            m.ipIdentical,
            m.bDiffering,
            pct(m.bytesVsUnmarked),
            pct(m.bytesVsPlainEqualPsnr),
            `${fmt(100 * m.kept, 1)} %`,
            m.slotSnr,
            m.projectedZ,
          ]),
        ),
        '',
      );
    }
    out.push(
      'mark kept: (A - B) / 2 on the marked frames, regressed on the pattern, as a share of the amplitude drawn.',
      'slot SNR: kept amplitude x sqrt(marked frames) of a 1-s slot (B-frames) against a 2-s slot of the every-frame mark.',
      `z of a 1-min leak: 60 such slots, projected from today's layouts reaching z ${REFERENCE.z} on a 2-minute leak (${REFERENCE.slots} slots;`,
      'the every-frame rows show that reference); a viewer is named at z 6.5. A projection, not a detection: no leak is made here.',
    );
    process.stdout.write(`${out.join('\n')}\n`);
    return { options: o, results };
  },
};
