// Forensic test support: a seeded PRNG, synthetic sidecars and leaks for the detector maths (no ffmpeg), and for the
// real pipeline a viewer's copy fetched segment by segment through the signed links and turned into a degraded leak.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { type Rng, rng } from '../../harness/rng.js';
import { FFMPEG } from '../../harness/tools.js';
import type { LeakFrames, Sidecar } from '../../src/core/forensic/detect-inputs.js';
import { frameSignature, SIGNATURE_CELLS } from '../../src/core/forensic/frame-signature.js';
import { patternGrid } from '../../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField } from '../../src/core/forensic/pattern-image.js';
import type { SegmentReading } from '../../src/core/forensic/score.js';
import { grayFrames } from './media.js';

const run = promisify(execFile);

export { type Rng, rng } from '../../harness/rng.js';

/** A smooth random picture (a few low-frequency waves around mid-grey, roughly 40..215): a stand-in for a segment's mean frame. */
export function smoothImage(r: Rng, width: number, height: number): Float32Array {
  const waves = Array.from({ length: 6 }, () => ({ fx: r.next() * 3, fy: r.next() * 3, phase: r.next() * 2 * Math.PI, amp: 10 + r.next() * 20 }));
  const base = 100 + r.next() * 50;
  const img = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let v = base;
      for (const w of waves) v += w.amp * Math.sin((2 * Math.PI * (w.fx * x)) / width + (2 * Math.PI * (w.fy * y)) / height + w.phase);
      img[y * width + x] = v;
    }
  }
  return img;
}

export interface SyntheticTitle {
  sidecar: Sidecar;
  key: Buffer;
  videoId: string;
}

/**
 * A sidecar as ingest would measure it, made up: per segment a random smooth mean M_k and D_k = amplitude x the
 * segment's real keyed pattern field. Segments last `segmentSeconds`; signatures are left empty (not read here).
 */
export function syntheticTitle(options: {
  seed: number;
  segments?: number;
  width?: number;
  height?: number;
  fps?: number;
  segmentSeconds?: number;
  videoId?: string;
}): SyntheticTitle {
  const { seed, segments = 75, width = 32, height = 18, fps = 5, segmentSeconds = 4, videoId = `video-${seed}` } = options;
  const r = rng(seed);
  const key = Buffer.from(Array.from({ length: 32 }, () => r.int(256)));
  const n = width * height;
  const mean = new Float32Array(segments * n);
  const diff = new Float32Array(segments * n);
  for (let k = 0; k < segments; k++) {
    mean.set(smoothImage(r, width, height), k * n);
    const field = patternField(patternGrid(key, videoId, k), width, height);
    for (let p = 0; p < n; p++) diff[k * n + p] = MARK_AMPLITUDE * field[p]!;
  }
  return {
    key,
    videoId,
    sidecar: {
      version: 1,
      width,
      height,
      diffWidth: width,
      diffHeight: height,
      fps,
      segmentStarts: Array.from({ length: segments }, (_, k) => k * segmentSeconds),
      segmentDurations: Array.from({ length: segments }, () => segmentSeconds),
      slotStarts: Array.from({ length: segments }, (_, k) => k * segmentSeconds),
      slotDurations: Array.from({ length: segments }, () => segmentSeconds),
      slotSegments: Array.from({ length: segments }, (_, k) => k),
      mean,
      diff,
      signatureTimes: new Float64Array(0),
      signature: new Float32Array(0),
    },
  };
}

export interface LeakOptions {
  /** Per segment, the mark's sign in the leak: +1 = A, -1 = B, 0 = unmarked, 0.5*(c1+c2) for two averaged copies. */
  signs: ArrayLike<number>;
  /** Luma noise per frame and pixel (8-bit levels). */
  noise?: number;
  gain?: number;
  offset?: number;
  /** Leak covers [from, to) seconds of the original timeline. */
  from?: number;
  to?: number;
  seed?: number;
  /** The leak plays the original at this speed (1.04: 4 % faster), from `from` for (to - from) / speed seconds. */
  speed?: number;
}

/** leak frame = gain * (M_k + s_k * D_k + noise) + offset, as ffmpeg's gray16le would hand it over. Returns the leak and its true offset. */
export function syntheticLeak(title: SyntheticTitle, o: LeakOptions): { leak: LeakFrames; offset: number } {
  const s = title.sidecar;
  const n = s.width * s.height;
  const end = s.segmentStarts.at(-1)! + s.segmentDurations.at(-1)!;
  const { noise = 4, gain = 1, offset = 0, from = 0, to = end, seed = 1, speed = 1 } = o;
  const r = rng(seed);
  const first = Math.ceil(from * s.fps - 1e-9);
  const last = Math.ceil(to * s.fps - 1e-9);
  const count = Math.floor((last - first) / speed);
  const frames = new Uint16Array(count * n);
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const t = (first + i * speed) / s.fps;
    times[i] = (first + i) / s.fps - first / s.fps;
    const k = Math.min(s.segmentStarts.length - 1, Math.floor(t / s.segmentDurations[0]!));
    const sign = o.signs[k] ?? 0;
    for (let p = 0; p < n; p++) {
      const v = gain * (s.mean[k * n + p]! + sign * s.diff[k * n + p]! + noise * r.gauss()) + offset;
      frames[i * n + p] = Math.max(0, Math.min(65535, Math.round(v * 256)));
    }
  }
  return { leak: { width: s.width, height: s.height, times, frames }, offset: first / s.fps };
}

/** Readings of pure noise: what an unreadable or unmarked leak gives the scorer. */
export function noiseReadings(r: Rng, segments: number[], sd = 0.5): SegmentReading[] {
  return segments.map((segment) => ({ segment, value: sd * r.gauss(), frames: 30 }));
}

/** Per-frame signatures of a synthetic timeline: each 4x4 cell drifts slowly (a camera pan) under per-frame grain. */
export function syntheticSignatures(r: Rng, frames: number, grain = 1.5): Float32Array {
  const sig = new Float32Array(frames * SIGNATURE_CELLS);
  const level = Array.from({ length: SIGNATURE_CELLS }, () => 80 + r.next() * 100);
  const velocity = new Float64Array(SIGNATURE_CELLS);
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < SIGNATURE_CELLS; c++) {
      velocity[c] = 0.95 * velocity[c]! + 0.3 * r.gauss();
      level[c] = Math.min(230, Math.max(20, level[c]! + velocity[c]!));
      sig[f * SIGNATURE_CELLS + c] = level[c]! + grain * r.gauss();
    }
  }
  return sig;
}

/** Signature of every frame of a (synthetic or decoded) leak, as the detector computes it. */
export function leakSignatures(leak: LeakFrames): Float32Array {
  const n = leak.width * leak.height;
  const sig = new Float32Array(leak.times.length * SIGNATURE_CELLS);
  const scratch = new Float32Array(n);
  for (let i = 0; i < leak.times.length; i++) {
    for (let p = 0; p < n; p++) scratch[p] = leak.frames[i * n + p]! / 256;
    frameSignature(scratch, leak.width, leak.height, sig, i * SIGNATURE_CELLS);
  }
  return sig;
}

/** Least-squares slope of y on x (both centred): how much of x is in y. */
export function slope(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let mx = 0,
    my = 0;
  for (let i = 0; i < x.length; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= x.length;
  my /= y.length;
  let sxy = 0,
    sxx = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
  }
  return sxy / sxx;
}

// ---- the real pipeline

/** Absolute URLs of a playlist's segments (resolved against the playlist URL, query strings kept). */
export function segmentUrls(playlistUrl: string, text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((uri) => new URL(uri, playlistUrl).href);
}

/** A playlist with every URI's query string removed: what is left once signatures are set aside. */
export function withoutQueries(text: string): string {
  return text
    .split('\n')
    .map((l) => (l && !l.startsWith('#') ? l.replace(/\?.*$/, '') : l))
    .join('\n');
}

/** GETs a URL and returns the body bytes (throws on anything but 200). */
export async function fetchBytes(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Writes the MPEG-TS segments end to end (TS concatenates byte-wise): the viewer's copy as one file. */
export async function concatSegments(segments: Buffer[], file: string): Promise<string> {
  await writeFile(file, Buffer.concat(segments));
  return file;
}

/** Re-encodes a copy the way a pirate might: optionally an excerpt, scaled by `scale`, x264 at `crf`, audio dropped. */
export async function degrade(
  input: string,
  output: string,
  options: { crf: number; scale: number; start?: number; duration?: number; preset?: string; extraFilters?: string[] },
): Promise<string> {
  const vf = [`scale=trunc(iw*${options.scale}/2)*2:trunc(ih*${options.scale}/2)*2`, ...(options.extraFilters ?? [])].join(',');
  // The excerpt is cut after decoding (-ss after -i): seeking the input of a raw TS lands between keyframes, and the
  // gap up to the next one is filled with copies of the next segment's first frame.
  await run(
    FFMPEG,
    [
      '-v',
      'error',
      '-y',
      '-i',
      input,
      ...(options.start !== undefined ? ['-ss', String(options.start)] : []),
      ...(options.duration !== undefined ? ['-t', String(options.duration)] : []),
      '-map',
      '0:v:0',
      '-vf',
      vf,
      '-c:v',
      'libx264',
      '-preset',
      options.preset ?? 'veryfast',
      '-crf',
      String(options.crf),
      '-an',
      output,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return output;
}

/** Two viewers' copies averaged frame by frame (the classic collusion attack), scaled and re-encoded like a leak. */
export async function averageCopies(a: string, b: string, output: string, options: { crf: number; scale: number }): Promise<string> {
  const scale = `scale=trunc(iw*${options.scale}/2)*2:trunc(ih*${options.scale}/2)*2`;
  await run(
    FFMPEG,
    [
      '-v',
      'error',
      '-y',
      '-i',
      a,
      '-i',
      b,
      '-filter_complex',
      `[0:v][1:v]blend=all_mode=average,${scale}[v]`,
      '-map',
      '[v]',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      String(options.crf),
      '-an',
      output,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return output;
}

/** Cuts the first `seconds` of a file by stream copy (no re-encode; the end of a cut needs no keyframe). */
export async function cutCopy(input: string, output: string, seconds: number): Promise<string> {
  await run(FFMPEG, ['-v', 'error', '-y', '-i', input, '-t', String(seconds), '-c', 'copy', output]);
  return output;
}

/** Frame width and height of a video file, from ffmpeg's stream line. */
export async function frameSize(file: string): Promise<{ width: number; height: number }> {
  const { stderr } = await run(FFMPEG, ['-hide_banner', '-i', file]).catch((e: { stderr: string }) => ({ stderr: e.stderr }));
  const m = /Video:.*?, (\d{2,5})x(\d{2,5})/.exec(stderr);
  if (!m) throw new Error(`no video size in:\n${stderr}`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

/**
 * How strongly each of a two-slot segment's four variant files carries its sign on each half: per slot, the slope of
 * (the file's mean frame over that half, minus the mean of aa's and bb's) against the slot's pattern field, decoded
 * small and grey (gray16: levels x 256). `split` frames are in the first half, `frames` in all.
 */
export async function halfSlopes(
  files: Record<'aa' | 'ab' | 'ba' | 'bb', string>,
  patterns: [Float32Array, Float32Array],
  size: { width: number; height: number; split: number; frames: number },
): Promise<Record<'aa' | 'ab' | 'ba' | 'bb', [number, number]>> {
  const { width: w, height: h, split, frames } = size;
  const halves = {} as Record<'aa' | 'ab' | 'ba' | 'bb', [Float64Array, Float64Array]>;
  for (const v of ['aa', 'ab', 'ba', 'bb'] as const) {
    const raw = await grayFrames(files[v], w, h);
    const mean = (from: number, to: number) => {
      const m = new Float64Array(w * h);
      for (let f = from; f < to; f++) for (let p = 0; p < w * h; p++) m[p]! += raw[f * w * h + p]! / 256 / (to - from);
      return m;
    };
    halves[v] = [mean(0, split), mean(split, frames)];
  }
  const out = {} as Record<'aa' | 'ab' | 'ba' | 'bb', [number, number]>;
  for (const v of ['aa', 'ab', 'ba', 'bb'] as const) {
    out[v] = [0, 1].map((s) => {
      const clean = halves.aa[s]!.map((x, p) => (x + halves.bb[s]![p]!) / 2);
      return slope(
        patterns[s]!,
        halves[v][s]!.map((x, p) => x - clean[p]!),
      );
    }) as [number, number];
  }
  return out;
}
