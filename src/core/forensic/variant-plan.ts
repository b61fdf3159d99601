// Forensic preparation of one working segment, as pure plans and maths: the ffmpeg arguments of its variants, the
// sums it measures from their decoded frames, and how the per-segment measurements join into the title's sidecar. One
// segment's work needs nothing of the others, so it runs in this process or on any render-farm worker alike
// (farm/tasks/forensic-task.ts), and the sidecar built from the measurements is the same bytes either way.

import { DEFAULT_FORENSIC_LAYOUT, type ForensicLayoutChoice } from '../forensic-layout.js';
import { type EncodeOptions, x264Gop } from '../plan/x264.js';
import type { Sidecar } from './detect-inputs.js';
import { frameSignature, SIGNATURE_CELLS } from './frame-signature.js';

/** Sidecar resolution: 8x8 pixels per pattern cell, enough to register crops and read the mark after downscaling. */
export const SIDECAR_WIDTH = 128;
export const SIDECAR_HEIGHT = 72;
/** The measured mark (A-B)/2 is smooth (a 16x9 grid): kept at half the sidecar's size. */
export const SIDECAR_DIFF_WIDTH = 64;
export const SIDECAR_DIFF_HEIGHT = 36;
/** A segment this long or longer carries two code slots (each half at least 1.5 s: enough to read after trimming margins). */
export const SPLIT_MIN_SECONDS = 3;

/**
 * What each layout costs and gives, as docs/forensic.md measures it ("Choosing a layout (`--forensic-layout`)"): the
 * help quotes these, and a test holds them to the doc's table.
 */
export const FORENSIC_LAYOUT_TRADES: Readonly<
  Record<ForensicLayoutChoice, { files: readonly string[]; encodesPerSegment: number; bytesPerView: string; shortestLeakSeconds: number; shortestLeak: string }>
> = {
  whole: { files: ['aa', 'ab', 'ba', 'bb'], encodesPerSegment: 4, bytesPerView: '-5.3 %', shortestLeakSeconds: 120, shortestLeak: '2 minutes' },
  split: { files: ['aa', 'ab', 'ba', 'bb'], encodesPerSegment: 2, bytesPerView: '+23.9 %', shortestLeakSeconds: 120, shortestLeak: '2 minutes' },
  single: { files: ['a', 'b'], encodesPerSegment: 2, bytesPerView: '-7.0 %', shortestLeakSeconds: 210, shortestLeak: 'about 3.5 minutes' },
};

/** The ingest stage that prepares a title's variants, naming the files each segment gets in its layout. */
export function forensicStage(layout: ForensicLayoutChoice | null | undefined): string {
  const files = FORENSIC_LAYOUT_TRADES[layout ?? DEFAULT_FORENSIC_LAYOUT].files;
  return `preparing forensic variants ${files.slice(0, -1).join(', ')} and ${files.at(-1)} of each segment`;
}

/** A variant file: `variant` is the segment's code bits as letters ('a', 'b' for one slot; 'aa'..'bb' for two). */
export const variantFileName = (variant: string, index: number) => `${variant}_${String(index).padStart(5, '0')}.ts`;

/** The variant files a segment with `slots` code slots has, in the order its measurement decodes them. */
export const variantNames = (slots: number): string[] => (slots === 1 ? ['a', 'b'] : ['aa', 'ab', 'ba', 'bb']);

/** Frames of a segment in its first slot (the rest are in the second); the whole segment when it is not split. */
export function splitFrame(durationSeconds: number, fps: number): number {
  const frames = Math.round(durationSeconds * fps);
  return durationSeconds >= SPLIT_MIN_SECONDS - 1e-6 ? Math.floor(frames / 2) : frames;
}

/** Code slots of each segment: two when its split frame falls inside it (one everywhere in the 'single' layout). */
export function slotsOfSegments(segmentDurations: readonly number[], fps: number, layout: ForensicLayoutChoice = DEFAULT_FORENSIC_LAYOUT): number[] {
  return segmentDurations.map((d) => (layout !== 'single' && splitFrame(d, fps) < Math.round(d * fps) ? 2 : 1));
}

function x264(gop: number, encode: EncodeOptions): string[] {
  return ['-c:v', 'libx264', '-preset', encode.preset, '-crf', String(encode.crf), ...x264Gop(gop), '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts'];
}

/** A one-frame pattern (raw yuv420p at the segment's size) as an ffmpeg input. */
const patternInput = (file: string, width: number, height: number) => ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${width}x${height}`, '-i', file];

/**
 * Adds (sign 'a': grainmerge = +pattern) or subtracts ('b': grainextract = -pattern) the pattern in luma; chroma passes
 * through untouched ("normal" keeps the top layer). With `enable`, only on the frames it selects.
 */
const markBlend = (sign: string, enable?: string) =>
  `blend=c0_mode=${sign === 'a' ? 'grainmerge' : 'grainextract'}:c1_mode=normal:c2_mode=normal${enable ? `:enable='${enable}'` : ''}`;

/** One output of a variant plan: the labelled video (with the working segment's audio, if any), one closed GOP. */
const variantOutput = (label: string, out: string, plan: { gop: number; encode: EncodeOptions; hasAudio: boolean }) => [
  '-map',
  `[${label}]`,
  ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : ['-an']),
  ...x264(plan.gop, plan.encode),
  out,
];

/** One decode of the working segment, split into A (+pattern) and B (-pattern), both encoded alike. */
export function variantArgs(plan: {
  input: string;
  pattern: string;
  width: number;
  height: number;
  outA: string;
  outB: string;
  gop: number;
  encode: EncodeOptions;
  hasAudio: boolean;
}): string[] {
  return [
    '-y',
    '-copyts',
    '-threads',
    '1',
    '-i',
    plan.input,
    ...patternInput(plan.pattern, plan.width, plan.height),
    '-threads',
    '1',
    '-filter_complex',
    `[0:v]split[va][vb];[1:v]split[pa][pb];[va][pa]${markBlend('a')}[a];[vb][pb]${markBlend('b')}[b]`,
    ...variantOutput('a', plan.outA, plan),
    ...variantOutput('b', plan.outB, plan),
  ];
}

/**
 * Two slots: one decode, four whole-segment variants aa, ab, ba, bb. Each adds (a) or subtracts (b) the first slot's
 * pattern on the frames before `split` and the second slot's from there on (two blends, each enabled on its half), and
 * is encoded as the segment's own GOP with the working segment's audio (the default 'whole' layout). Cutting the halves
 * into GOPs of their own ('split': halfVariantArgs) needs two encodes instead of four, but puts a second keyframe in
 * every segment, whose bytes are paid on every view (docs/forensic.md compares the layouts).
 */
export function wholeVariantArgs(plan: {
  input: string;
  patterns: [string, string];
  width: number;
  height: number;
  split: number;
  out: { aa: string; ab: string; ba: string; bb: string };
  gop: number;
  encode: EncodeOptions;
  hasAudio: boolean;
}): string[] {
  const names = ['aa', 'ab', 'ba', 'bb'] as const;
  // Each blend reads its own one-frame pattern input (inputs 1..8: slot 1's then slot 2's, per variant): splitting a
  // one-frame input four ways deadlocks ffmpeg's scheduler once that input ends (two ways does not).
  const chains = names.map(
    (v, i) =>
      `[v${i}][${1 + 2 * i}:v]${markBlend(v[0]!, `lt(n,${plan.split})`)}[h${i}];[h${i}][${2 + 2 * i}:v]${markBlend(v[1]!, `gte(n,${plan.split})`)}[${v}]`,
  );
  return [
    '-y',
    '-copyts',
    '-threads',
    '1',
    '-i',
    plan.input,
    ...names.flatMap(() => plan.patterns.flatMap((p) => patternInput(p, plan.width, plan.height))),
    '-threads',
    '1',
    '-filter_complex',
    `[0:v]split=4[v0][v1][v2][v3];${chains.join(';')}`,
    ...names.flatMap((v) => variantOutput(v, plan.out[v], plan)),
  ];
}

/**
 * The 'split' layout's two slots: one decode, cut at frame `split` into halves, each half +/- its own pattern: four
 * video-only encodes (first half A, B; second half A, B), each half its own closed GOP so that any first half joins
 * any second half (joinHalvesArgs). Two encodes' work instead of wholeVariantArgs' four, for a keyframe more per segment.
 */
export function halfVariantArgs(plan: {
  input: string;
  patterns: [string, string];
  width: number;
  height: number;
  split: number;
  out: [string, string, string, string];
  gop: number;
  encode: EncodeOptions;
}): string[] {
  return [
    '-y',
    '-copyts',
    '-threads',
    '1',
    '-i',
    plan.input,
    ...plan.patterns.flatMap((p) => patternInput(p, plan.width, plan.height)),
    '-threads',
    '1',
    '-filter_complex',
    `[0:v]split[h1][h2];[h1]trim=end_frame=${plan.split},split[x1][y1];[h2]trim=start_frame=${plan.split},split[x2][y2];` +
      `[1:v]split[p1][q1];[2:v]split[p2][q2];` +
      `[x1][p1]${markBlend('a')}[a1];[y1][q1]${markBlend('b')}[b1];[x2][p2]${markBlend('a')}[a2];[y2][q2]${markBlend('b')}[b2]`,
    ...(['a1', 'b1', 'a2', 'b2'] as const).flatMap((label, i) => variantOutput(label, plan.out[i]!, { ...plan, hasAudio: false })),
  ];
}

/** The four segment files aa, ab, ba, bb: halves joined by stream copy (concat protocol), with the working segment's audio. */
export function joinHalvesArgs(plan: {
  halves: [string, string, string, string];
  audioFrom?: string;
  out: { aa: string; ab: string; ba: string; bb: string };
}): string[] {
  const [a1, b1, a2, b2] = plan.halves;
  const combos = [
    [a1, a2, plan.out.aa],
    [a1, b2, plan.out.ab],
    [b1, a2, plan.out.ba],
    [b1, b2, plan.out.bb],
  ] as const;
  const audio = plan.audioFrom !== undefined;
  return [
    '-y',
    '-copyts',
    ...combos.flatMap(([x, y]) => ['-f', 'mpegts', '-i', `concat:${x}|${y}`]),
    ...(audio ? ['-i', plan.audioFrom!] : []),
    ...combos.flatMap(([, , out], i) => ['-map', `${i}:v:0`, ...(audio ? ['-map', '4:a:0'] : []), '-c', 'copy', '-muxdelay', '0', '-f', 'mpegts', out]),
  ];
}

/**
 * The small decode of aa then bb (A1 A2 B1 B2: each variant's frames in order) rearranged as measureSegment reads two
 * slots (A1 B1 A2 B2). `frameSize` values a frame, `split` frames in the first slot.
 */
export function slotOrderFromWhole(frames: Uint16Array, frameSize: number, split: number): Uint16Array {
  const perVariant = frames.length / frameSize / 2;
  const rest = perVariant - split;
  const out = new Uint16Array(frames.length);
  const copy = (fromFrame: number, count: number, toFrame: number) =>
    out.set(frames.subarray(fromFrame * frameSize, (fromFrame + count) * frameSize), toFrame * frameSize);
  copy(0, split, 0); // A1
  copy(perVariant, split, split); // B1
  copy(split, rest, 2 * split); // A2
  copy(perVariant + split, rest, 2 * split + rest); // B2
  return out;
}

/** Small grey decode of several files one after the other (the concat filter keeps their order), raw to stdout. */
export function decodeSmallArgs(files: readonly string[]): string[] {
  const inputs = files.flatMap((f) => ['-threads', '1', '-i', f]);
  const graph = `${files.map((_, i) => `[${i}:v:0]`).join('')}concat=n=${files.length}:v=1:a=0,scale=${SIDECAR_WIDTH}:${SIDECAR_HEIGHT}:flags=area,format=gray16le[v]`;
  return ['-v', 'error', ...inputs, '-filter_complex', graph, '-map', '[v]', '-f', 'rawvideo', 'pipe:1'];
}

/** What one segment contributes to the sidecar: per slot its mean frame and measured mark, and per frame a signature. */
export interface SegmentMeasure {
  slots: number;
  frames: number;
  /** slots x SIDECAR_WIDTH x SIDECAR_HEIGHT */
  mean: Float32Array;
  /** slots x SIDECAR_DIFF_WIDTH x SIDECAR_DIFF_HEIGHT */
  diff: Float32Array;
  /** frames x SIGNATURE_CELLS */
  signature: Float32Array;
}

/** 2x2 area average: the sidecar's mark at SIDECAR_DIFF size. */
function halve(src: Float64Array, width: number, height: number): Float32Array {
  const w = width >> 1,
    h = height >> 1;
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      out[y * w + x] =
        (src[2 * y * width + 2 * x]! + src[2 * y * width + 2 * x + 1]! + src[(2 * y + 1) * width + 2 * x]! + src[(2 * y + 1) * width + 2 * x + 1]!) / 4;
  return out;
}

/**
 * Measures a segment from the small decode of its variants: per slot, the +P frames then the -P frames (one slot: A
 * then B; two: first half A, B, then second half A, B), `split` frames in the first slot.
 */
export function measureSegment(frames: Uint16Array, slots: number, split: number): SegmentMeasure {
  const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
  const dn = SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT;
  const total = frames.length / n;
  const perSlot = slots === 1 ? [total / 2] : [split, (total - 2 * split) / 2];
  const segFrames = perSlot.reduce((a, b) => a + b, 0);
  const mean = new Float32Array(slots * n);
  const diff = new Float32Array(slots * dn);
  const signature = new Float32Array(segFrames * SIGNATURE_CELLS);
  const avg = new Float32Array(n);
  const d = new Float64Array(n);
  let base = 0,
    f0 = 0;
  for (let s = 0; s < slots; s++) {
    const fr = perSlot[s]!;
    d.fill(0);
    for (let f = 0; f < fr; f++) {
      const a = (base + f) * n,
        b = (base + fr + f) * n;
      for (let p = 0; p < n; p++) {
        const av = frames[a + p]! / 256;
        const bv = frames[b + p]! / 256;
        avg[p] = (av + bv) / 2;
        mean[s * n + p]! += avg[p]! / fr;
        d[p]! += (av - bv) / 2 / fr;
      }
      frameSignature(avg, SIDECAR_WIDTH, SIDECAR_HEIGHT, signature, (f0 + f) * SIGNATURE_CELLS);
    }
    diff.set(halve(d, SIDECAR_WIDTH, SIDECAR_HEIGHT), s * dn);
    base += 2 * fr;
    f0 += fr;
  }
  return { slots, frames: segFrames, mean, diff, signature };
}

const MEASURE_MAGIC = 'WMFM1';

/** A measurement as bytes, to travel from a worker through the media store: exact float32s, nothing rounded. */
export function encodeMeasure(m: SegmentMeasure): Buffer {
  const header = Buffer.alloc(MEASURE_MAGIC.length + 8);
  header.write(MEASURE_MAGIC, 0, 'latin1');
  header.writeUInt32LE(m.slots, MEASURE_MAGIC.length);
  header.writeUInt32LE(m.frames, MEASURE_MAGIC.length + 4);
  const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return Buffer.concat([header, bytes(m.mean), bytes(m.diff), bytes(m.signature)]);
}

/** Back from encodeMeasure's bytes; anything else (a truncated or foreign object) is undefined. */
export function decodeMeasure(data: Buffer): SegmentMeasure | undefined {
  if (data.length < MEASURE_MAGIC.length + 8 || data.toString('latin1', 0, MEASURE_MAGIC.length) !== MEASURE_MAGIC) return undefined;
  const slots = data.readUInt32LE(MEASURE_MAGIC.length);
  const frames = data.readUInt32LE(MEASURE_MAGIC.length + 4);
  const sizes = [slots * SIDECAR_WIDTH * SIDECAR_HEIGHT, slots * SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT, frames * SIGNATURE_CELLS];
  if (slots < 1 || slots > 2 || data.length !== MEASURE_MAGIC.length + 8 + 4 * sizes.reduce((a, b) => a + b, 0)) return undefined;
  // Copied out: the Buffer may sit at an offset that is no multiple of 4 in a shared pool.
  const floats = new Float32Array(new Uint8Array(data.subarray(MEASURE_MAGIC.length + 8)).buffer);
  const [mean, diff, signature] = [floats.subarray(0, sizes[0]), floats.subarray(sizes[0], sizes[0]! + sizes[1]!), floats.subarray(sizes[0]! + sizes[1]!)];
  return { slots, frames, mean: mean!, diff: diff!, signature: signature! };
}

/** The title's sidecar (v2) from every segment's measurement, in segment order. */
export function buildSidecar(segmentDurations: readonly number[], fps: number, measures: readonly SegmentMeasure[]): Sidecar {
  const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
  const dn = SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT;
  const slotsPerSegment = measures.map((m) => m.slots);
  const slots = slotsPerSegment.reduce((a, b) => a + b, 0);
  const mean = new Float32Array(slots * n);
  const diff = new Float32Array(slots * dn);
  let slot = 0;
  for (const m of measures) {
    mean.set(m.mean, slot * n);
    diff.set(m.diff, slot * dn);
    slot += m.slots;
  }
  const starts: number[] = [];
  let t = 0;
  for (const d of segmentDurations) {
    starts.push(Number(t.toFixed(6)));
    t += d;
  }
  const slotStarts: number[] = [],
    slotDurations: number[] = [],
    slotSegments: number[] = [];
  segmentDurations.forEach((dur, k) => {
    if (slotsPerSegment[k] === 1) {
      slotStarts.push(starts[k]!);
      slotDurations.push(dur);
    } else {
      const half = Number((splitFrame(dur, fps) / fps).toFixed(6));
      slotStarts.push(starts[k]!, Number((starts[k]! + half).toFixed(6)));
      slotDurations.push(half, Number((dur - half).toFixed(6)));
    }
    for (let s = 0; s < slotsPerSegment[k]!; s++) slotSegments.push(k);
  });
  const totalFrames = measures.reduce((a, m) => a + m.frames, 0);
  const signature = new Float32Array(totalFrames * SIGNATURE_CELLS);
  const signatureTimes = new Float64Array(totalFrames);
  let at = 0;
  measures.forEach((m, k) => {
    signature.set(m.signature, at * SIGNATURE_CELLS);
    for (let f = 0; f < m.frames; f++) signatureTimes[at + f] = starts[k]! + f / fps;
    at += m.frames;
  });
  return {
    version: 2,
    width: SIDECAR_WIDTH,
    height: SIDECAR_HEIGHT,
    diffWidth: SIDECAR_DIFF_WIDTH,
    diffHeight: SIDECAR_DIFF_HEIGHT,
    fps,
    segmentStarts: starts,
    segmentDurations: [...segmentDurations],
    slotStarts,
    slotDurations,
    slotSegments,
    mean,
    diff,
    signature,
    signatureTimes,
  };
}
