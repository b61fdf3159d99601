// Forensic preparation at ingest: the variants of every working segment (pattern added / subtracted in luma), the
// layout that says which variant file carries which code bits, and the detection sidecar measured from the encodes.
//
// Code slots (sidecar v2): a segment of 3 s or more carries two slots, one per half. Each half is encoded twice (+P and
// -P of its own pattern), as two closed GOPs, and the four combinations are joined by stream copy into segment files
// aa/ab/ba/bb: two code bits per 4-s segment for the same encoding work as one (A/B), the same playlist, the same mark
// amplitude. Shorter segments keep one slot and the v1 files a/b. Videos ingested before slots have no layout file:
// one slot per segment, files a/b (layout v1).
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { frameSignature, SIGNATURE_CELLS, type Sidecar } from '../core/forensic/detect-math.js';
import { forensicKey, patternGrid } from '../core/forensic/keyed-bits.js';
import { patternFrameYuv420 } from '../core/forensic/pattern-image.js';
import { encodeSidecar } from '../core/forensic/sidecar-format.js';
import { segmentFileName, type EncodeOptions } from '../core/ffmpeg-plan.js';
import type { ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import { forEachBounded } from './for-each-bounded.js';

export const FORENSIC_DIR = 'forensic';
export const SIDECAR_NAME = 'sidecar.bin.gz';
export const LAYOUT_NAME = 'layout.json';
/** Sidecar resolution: 8x8 pixels per pattern cell, enough to register crops and read the mark after downscaling. */
export const SIDECAR_WIDTH = 128;
export const SIDECAR_HEIGHT = 72;
/** The measured mark (A-B)/2 is smooth (a 16x9 grid): kept at half the sidecar's size. */
export const SIDECAR_DIFF_WIDTH = 64;
export const SIDECAR_DIFF_HEIGHT = 36;
/** A segment this long or longer carries two code slots (each half at least 1.5 s: enough to read after trimming margins). */
export const SPLIT_MIN_SECONDS = 3;

/** A variant file: `variant` is the segment's code bits as letters ('a', 'b' for one slot; 'aa'..'bb' for two). */
export const variantFileName = (variant: string, index: number) => `${variant}_${String(index).padStart(5, '0')}.ts`;

export interface ForensicLayout {
  version: 1 | 2;
  /** Code slots per segment (1 or 2). */
  slotsPerSegment: number[];
  /** Index of each segment's first slot (derived). */
  firstSlot: number[];
  /** Total code bits of the title. */
  slots: number;
}

export function makeLayout(version: 1 | 2, slotsPerSegment: number[]): ForensicLayout {
  const firstSlot: number[] = [];
  let at = 0;
  for (const s of slotsPerSegment) {
    firstSlot.push(at);
    at += s;
  }
  return { version, slotsPerSegment, firstSlot, slots: at };
}

/** The layout of a prepared video; a folder without a layout file is a v1 video (one slot per segment). */
export async function readForensicLayout(forensicDir: string, segments: number): Promise<ForensicLayout> {
  const file = path.join(forensicDir, LAYOUT_NAME);
  if (!existsSync(file)) return makeLayout(1, new Array<number>(segments).fill(1));
  const json = JSON.parse(await readFile(file, 'utf8')) as { version: 2; slotsPerSegment: number[] };
  return makeLayout(json.version, json.slotsPerSegment);
}

/** The variant file a viewer with codeword `code` (±1 per slot) receives for segment `index`. */
export function variantFileFor(layout: ForensicLayout, code: ArrayLike<number>, index: number): string {
  const first = layout.firstSlot[index]!;
  let letters = '';
  for (let s = 0; s < layout.slotsPerSegment[index]!; s++) letters += code[first + s]! > 0 ? 'a' : 'b';
  return variantFileName(letters, index);
}

/** Frames of a segment in its first slot (the rest are in the second); the whole segment when it is not split. */
export function splitFrame(durationSeconds: number, fps: number): number {
  const frames = Math.round(durationSeconds * fps);
  return durationSeconds >= SPLIT_MIN_SECONDS - 1e-6 ? Math.floor(frames / 2) : frames;
}

export interface ForensicPlan {
  videoId: string;
  /** Folder with the working segments; variants and sidecar go to its forensic/ subfolder. */
  dir: string;
  width: number;
  height: number;
  fps: number;
  gop: number;
  hasAudio: boolean;
  segmentDurations: number[];
  encode: EncodeOptions;
  workers: number;
  secret: Buffer;
}

function x264(gop: number, encode: EncodeOptions): string[] {
  return [
    '-c:v', 'libx264', '-preset', encode.preset, '-crf', String(encode.crf),
    '-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0', '-x264-params', 'open-gop=0',
    '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts',
  ];
}

/** One decode of the working segment, split into A (grainmerge = +pattern) and B (grainextract = -pattern), both encoded alike. */
export function variantArgs(plan: { input: string; pattern: string; width: number; height: number; outA: string; outB: string; gop: number; encode: EncodeOptions; hasAudio: boolean }): string[] {
  const enc = (out: string, label: string) => ['-map', `[${label}]`, ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []), ...x264(plan.gop, plan.encode), out];
  return [
    '-y', '-copyts', '-threads', '1', '-i', plan.input,
    '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${plan.width}x${plan.height}`, '-i', plan.pattern,
    '-threads', '1',
    '-filter_complex',
    // Chroma passes through untouched ("normal" keeps the top layer); only luma carries the mark.
    '[0:v]split[va][vb];[1:v]split[pa][pb];' +
      '[va][pa]blend=c0_mode=grainmerge:c1_mode=normal:c2_mode=normal[a];' +
      '[vb][pb]blend=c0_mode=grainextract:c1_mode=normal:c2_mode=normal[b]',
    ...enc(plan.outA, 'a'),
    ...enc(plan.outB, 'b'),
  ];
}

/**
 * Two slots: one decode, cut at frame `split` into halves, each half +/- its own pattern: four video-only encodes
 * (first half A, B; second half A, B), each half its own closed GOP so that any first half joins any second half.
 */
export function halfVariantArgs(plan: { input: string; patterns: [string, string]; width: number; height: number; split: number; out: [string, string, string, string]; gop: number; encode: EncodeOptions }): string[] {
  const raw = (file: string) => ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${plan.width}x${plan.height}`, '-i', file];
  const blend = (mode: string) => `blend=c0_mode=${mode}:c1_mode=normal:c2_mode=normal`;
  return [
    '-y', '-copyts', '-threads', '1', '-i', plan.input, ...raw(plan.patterns[0]), ...raw(plan.patterns[1]), '-threads', '1',
    '-filter_complex',
    `[0:v]split[h1][h2];[h1]trim=end_frame=${plan.split},split[x1][y1];[h2]trim=start_frame=${plan.split},split[x2][y2];` +
      `[1:v]split[p1][q1];[2:v]split[p2][q2];` +
      `[x1][p1]${blend('grainmerge')}[a1];[y1][q1]${blend('grainextract')}[b1];[x2][p2]${blend('grainmerge')}[a2];[y2][q2]${blend('grainextract')}[b2]`,
    ...(['a1', 'b1', 'a2', 'b2'] as const).flatMap((label, i) => ['-map', `[${label}]`, '-an', ...x264(plan.gop, plan.encode), plan.out[i]!]),
  ];
}

/** The four segment files aa, ab, ba, bb: halves joined by stream copy (concat protocol), with the working segment's audio. */
export function joinHalvesArgs(plan: { halves: [string, string, string, string]; audioFrom?: string; out: { aa: string; ab: string; ba: string; bb: string } }): string[] {
  const [a1, b1, a2, b2] = plan.halves;
  const combos = [[a1, a2, plan.out.aa], [a1, b2, plan.out.ab], [b1, a2, plan.out.ba], [b1, b2, plan.out.bb]] as const;
  const audio = plan.audioFrom !== undefined;
  return [
    '-y', '-copyts',
    ...combos.flatMap(([x, y]) => ['-f', 'mpegts', '-i', `concat:${x}|${y}`]),
    ...(audio ? ['-i', plan.audioFrom!] : []),
    ...combos.flatMap(([, , out], i) => ['-map', `${i}:v:0`, ...(audio ? ['-map', '4:a:0'] : []), '-c', 'copy', '-muxdelay', '0', '-f', 'mpegts', out]),
  ];
}

/** Small grey decode of several files one after the other (the concat filter keeps their order). */
async function decodeSmall(runner: ProcessRunner, files: string[]): Promise<Uint16Array> {
  const inputs = files.flatMap((f) => ['-threads', '1', '-i', f]);
  const graph = `${files.map((_, i) => `[${i}:v:0]`).join('')}concat=n=${files.length}:v=1:a=0,scale=${SIDECAR_WIDTH}:${SIDECAR_HEIGHT}:flags=area,format=gray16le[v]`;
  const { stdout } = await runner.ffmpeg(['-v', 'error', ...inputs, '-filter_complex', graph, '-map', '[v]', '-f', 'rawvideo', 'pipe:1'], { captureStdout: true });
  return new Uint16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

/** 2x2 area average: the sidecar's mark at SIDECAR_DIFF size. */
function halve(src: Float64Array, width: number, height: number): Float32Array {
  const w = width >> 1, h = height >> 1;
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) out[y * w + x] = (src[2 * y * width + 2 * x]! + src[2 * y * width + 2 * x + 1]! + src[(2 * y + 1) * width + 2 * x]! + src[(2 * y + 1) * width + 2 * x + 1]!) / 4;
  return out;
}

export async function prepareForensic(runner: ProcessRunner, plan: ForensicPlan, onProgress?: (done: number, total: number) => void): Promise<{ sidecarBytes: number; slots: number }> {
  const out = path.join(plan.dir, FORENSIC_DIR);
  await mkdir(out, { recursive: true });
  const key = forensicKey(plan.secret);
  const count = plan.segmentDurations.length;
  const splits = plan.segmentDurations.map((d) => splitFrame(d, plan.fps));
  const slotsPerSegment = plan.segmentDurations.map((d, k) => (splits[k]! < Math.round(d * plan.fps) ? 2 : 1));
  const layout = makeLayout(2, slotsPerSegment);
  const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
  const dn = SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT;
  const mean = new Float32Array(layout.slots * n);
  const diff = new Float32Array(layout.slots * dn);
  const frameSigs: { k: number; sig: Float32Array; frames: number }[] = [];
  let done = 0;

  await forEachBounded(
    Array.from({ length: count }, (_, k) => k),
    plan.workers,
    async (k) => {
      const input = path.join(plan.dir, segmentFileName(k));
      const first = layout.firstSlot[k]!;
      const pattern = (s: number) => path.join(out, `pattern_${first + s}.yuv`);
      const slots = slotsPerSegment[k]!;
      for (let s = 0; s < slots; s++) await writeFile(pattern(s), patternFrameYuv420(patternGrid(key, plan.videoId, first + s), plan.width, plan.height));
      /** Per slot, the files of +P and -P, in decode order. */
      let decode: string[];
      const temporary: string[] = [];
      if (slots === 1) {
        const outA = path.join(out, variantFileName('a', k));
        const outB = path.join(out, variantFileName('b', k));
        await runner.ffmpeg(variantArgs({ input, pattern: pattern(0), width: plan.width, height: plan.height, outA, outB, gop: plan.gop, encode: plan.encode, hasAudio: plan.hasAudio }));
        decode = [outA, outB];
      } else {
        const halves = (['a1', 'b1', 'a2', 'b2'] as const).map((h) => path.join(out, `half_${h}_${String(k).padStart(5, '0')}.ts`)) as [string, string, string, string];
        await runner.ffmpeg(halfVariantArgs({ input, patterns: [pattern(0), pattern(1)], width: plan.width, height: plan.height, split: splits[k]!, out: halves, gop: plan.gop, encode: plan.encode }));
        const name = (v: string) => path.join(out, variantFileName(v, k));
        await runner.ffmpeg(joinHalvesArgs({ halves, audioFrom: plan.hasAudio ? input : undefined, out: { aa: name('aa'), ab: name('ab'), ba: name('ba'), bb: name('bb') } }));
        decode = halves;
        temporary.push(...halves);
      }
      for (let s = 0; s < slots; s++) await rm(pattern(s), { force: true });
      const frames = await decodeSmall(runner, decode);
      await Promise.all(temporary.map((f) => rm(f, { force: true })));
      const total = frames.length / n;
      const perSlot = slots === 1 ? [total / 2] : [splits[k]!, (total - 2 * splits[k]!) / 2];
      const segFrames = perSlot.reduce((a, b) => a + b, 0);
      const sig = new Float32Array(segFrames * SIGNATURE_CELLS);
      const avg = new Float32Array(n);
      const d = new Float64Array(n);
      let base = 0, f0 = 0;
      for (let s = 0; s < slots; s++) {
        const fr = perSlot[s]!;
        const slot = first + s;
        d.fill(0);
        for (let f = 0; f < fr; f++) {
          const a = (base + f) * n, b = (base + fr + f) * n;
          for (let p = 0; p < n; p++) {
            const av = frames[a + p]! / 256;
            const bv = frames[b + p]! / 256;
            avg[p] = (av + bv) / 2;
            mean[slot * n + p]! += avg[p]! / fr;
            d[p]! += (av - bv) / 2 / fr;
          }
          frameSignature(avg, SIDECAR_WIDTH, SIDECAR_HEIGHT, sig, (f0 + f) * SIGNATURE_CELLS);
        }
        diff.set(halve(d, SIDECAR_WIDTH, SIDECAR_HEIGHT), slot * dn);
        base += 2 * fr;
        f0 += fr;
      }
      frameSigs.push({ k, sig, frames: segFrames });
      onProgress?.(++done, count);
    },
  );

  frameSigs.sort((x, y) => x.k - y.k);
  const starts: number[] = [];
  let t = 0;
  for (const d of plan.segmentDurations) {
    starts.push(Number(t.toFixed(6)));
    t += d;
  }
  const slotStarts: number[] = [], slotDurations: number[] = [], slotSegments: number[] = [];
  plan.segmentDurations.forEach((dur, k) => {
    if (slotsPerSegment[k] === 1) {
      slotStarts.push(starts[k]!);
      slotDurations.push(dur);
    } else {
      const half = Number((splits[k]! / plan.fps).toFixed(6));
      slotStarts.push(starts[k]!, Number((starts[k]! + half).toFixed(6)));
      slotDurations.push(half, Number((dur - half).toFixed(6)));
    }
    for (let s = 0; s < slotsPerSegment[k]!; s++) slotSegments.push(k);
  });
  const totalFrames = frameSigs.reduce((a, s) => a + s.frames, 0);
  const signature = new Float32Array(totalFrames * SIGNATURE_CELLS);
  const signatureTimes = new Float64Array(totalFrames);
  let at = 0;
  for (const s of frameSigs) {
    signature.set(s.sig, at * SIGNATURE_CELLS);
    for (let f = 0; f < s.frames; f++) signatureTimes[at + f] = starts[s.k]! + f / plan.fps;
    at += s.frames;
  }
  const sidecar: Sidecar = {
    version: 2,
    width: SIDECAR_WIDTH,
    height: SIDECAR_HEIGHT,
    diffWidth: SIDECAR_DIFF_WIDTH,
    diffHeight: SIDECAR_DIFF_HEIGHT,
    fps: plan.fps,
    segmentStarts: starts,
    segmentDurations: plan.segmentDurations,
    slotStarts,
    slotDurations,
    slotSegments,
    mean,
    diff,
    signature,
    signatureTimes,
  };
  const bytes = encodeSidecar(sidecar);
  await writeFile(path.join(out, SIDECAR_NAME), bytes);
  await writeFile(path.join(out, LAYOUT_NAME), JSON.stringify({ version: 2, slotsPerSegment }));
  return { sidecarBytes: bytes.length, slots: layout.slots };
}
