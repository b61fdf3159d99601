// The detection sidecar kept per forensic video: binary, gzip-compressed, versioned. Small enough to keep forever.
//
// v1 (videos ingested before code slots): one code bit per segment, diff at the mean's resolution.
// v2: one code bit per slot (a segment carries one or two slots), per-slot mean at width x height and the measured
//     mark (A-B)/2 at diffWidth x diffHeight (the mark is a smooth 16x9 pattern: a quarter of the pixels lose nothing).
// Both decode to the same Sidecar shape, so the detector never asks which one it has.
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Sidecar } from './detect-inputs.js';
import { SIGNATURE_CELLS } from './frame-signature.js';

const MAGIC_V1 = 'WMFS1';
const MAGIC_V2 = 'WMFS2';
/** Fixed-point scales: luma means to 1/64 level, pattern differences to 1/1024 level. */
const MEAN_SCALE = 64;
const DIFF_SCALE = 1024;
const SIG_SCALE = 64;

interface HeaderV2 {
  width: number;
  height: number;
  diffWidth: number;
  diffHeight: number;
  fps: number;
  segmentStarts: number[];
  segmentDurations: number[];
  slotStarts: number[];
  slotDurations: number[];
  slotSegments: number[];
  frames: number;
}

// No `TypedArray.from(array, mapFn)` on the big arrays: with a mapping function V8 first copies the whole source into a
// list of JS numbers, so a 2-hour title's means (33 M values) would cost gigabytes to encode and to decode, more than
// the detector's whole budget. Plain loops into preallocated arrays need only the result.

/** Fixed-point copy of `src`: round(value x scale), clamped to the type's range. */
function quantise<T extends Uint16Array | Int16Array>(out: T, src: ArrayLike<number>, scale: number, lo: number, hi: number): T {
  for (let i = 0; i < out.length; i++) out[i] = Math.max(lo, Math.min(hi, Math.round(src[i]! * scale)));
  return out;
}

/** Elements converted per step when decoding: the aligned scratch copy stays at 2 MB whatever the title's length. */
const DECODE_CHUNK = 1 << 20;

/** `count` fixed-point values of `Type` at byte `at` of `raw`, divided by `scale`, as float32 (raw may be unaligned). */
function dequantise(raw: Buffer, at: number, count: number, Type: typeof Uint16Array | typeof Int16Array, scale: number): Float32Array {
  const out = new Float32Array(count);
  const scratch = new ArrayBuffer(Math.min(count, DECODE_CHUNK) * 2);
  const bytes = new Uint8Array(scratch);
  for (let i0 = 0; i0 < count; i0 += DECODE_CHUNK) {
    const n = Math.min(DECODE_CHUNK, count - i0);
    raw.copy(bytes, 0, at + i0 * 2, at + (i0 + n) * 2);
    const values = new Type(scratch, 0, n);
    for (let i = 0; i < n; i++) out[i0 + i] = values[i]! / scale;
  }
  return out;
}

function body(s: Sidecar): Buffer[] {
  const mean = quantise(new Uint16Array(s.mean.length), s.mean, MEAN_SCALE, 0, 65535);
  const diff = quantise(new Int16Array(s.diff.length), s.diff, DIFF_SCALE, -32768, 32767);
  const sig = quantise(new Uint16Array(s.signature.length), s.signature, SIG_SCALE, 0, 65535);
  const times = Float64Array.from(s.signatureTimes);
  return [Buffer.from(mean.buffer), Buffer.from(diff.buffer), Buffer.from(sig.buffer), Buffer.from(times.buffer)];
}

function frame(magic: string, header: object, parts: Buffer[]): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length);
  return gzipSync(Buffer.concat([Buffer.from(magic), len, json, ...parts]), { level: 9 });
}

/** Writes the current format (v2). */
export function encodeSidecar(s: Sidecar): Buffer {
  const header: HeaderV2 = {
    width: s.width,
    height: s.height,
    diffWidth: s.diffWidth,
    diffHeight: s.diffHeight,
    fps: s.fps,
    segmentStarts: s.segmentStarts,
    segmentDurations: s.segmentDurations,
    slotStarts: s.slotStarts,
    slotDurations: s.slotDurations,
    slotSegments: s.slotSegments,
    frames: s.signatureTimes.length,
  };
  return frame(MAGIC_V2, header, body(s));
}

/** Writes the v1 format (one slot per segment, diff at the mean's size): what ingest wrote before v2; kept for tests of old videos. */
export function encodeSidecarV1(s: Sidecar): Buffer {
  if (s.slotStarts.length !== s.segmentStarts.length || s.diffWidth !== s.width || s.diffHeight !== s.height)
    throw new Error("a v1 sidecar has one slot per segment and diff at the mean's size");
  return frame(
    MAGIC_V1,
    { width: s.width, height: s.height, fps: s.fps, segmentStarts: s.segmentStarts, segmentDurations: s.segmentDurations, frames: s.signatureTimes.length },
    body(s),
  );
}

export function decodeSidecar(data: Buffer): Sidecar {
  const raw = gunzipSync(data);
  const magic = raw.subarray(0, MAGIC_V1.length).toString();
  if (magic !== MAGIC_V1 && magic !== MAGIC_V2) throw new Error('not a wmark forensic sidecar');
  const headerLength = raw.readUInt32LE(magic.length);
  let at = magic.length + 4;
  const parsed = JSON.parse(raw.subarray(at, at + headerLength).toString()) as Partial<HeaderV2> & {
    width: number;
    height: number;
    fps: number;
    segmentStarts: number[];
    segmentDurations: number[];
    frames: number;
  };
  at += headerLength;
  // v1: every segment is one slot, and the diff has the mean's size.
  const header: HeaderV2 = {
    diffWidth: parsed.width,
    diffHeight: parsed.height,
    slotStarts: parsed.segmentStarts,
    slotDurations: parsed.segmentDurations,
    slotSegments: parsed.segmentStarts.map((_, k) => k),
    ...parsed,
  } as HeaderV2;
  const slots = header.slotStarts.length;
  const needed = at + 2 * slots * (header.width * header.height + header.diffWidth * header.diffHeight) + header.frames * (2 * SIGNATURE_CELLS + 8);
  if (raw.length < needed) throw new Error(`truncated forensic sidecar: ${raw.length} bytes, its header needs ${needed}`);
  const section = (count: number, Type: typeof Uint16Array | typeof Int16Array, scale: number) => {
    const values = dequantise(raw, at, count, Type, scale);
    at += count * 2;
    return values;
  };
  const mean = section(header.width * header.height * slots, Uint16Array, MEAN_SCALE);
  const diff = section(header.diffWidth * header.diffHeight * slots, Int16Array, DIFF_SCALE);
  const signature = section(header.frames * SIGNATURE_CELLS, Uint16Array, SIG_SCALE);
  // Copied out of raw: its offset need not be a multiple of 8.
  const signatureTimes = new Float64Array(header.frames);
  raw.copy(new Uint8Array(signatureTimes.buffer), 0, at, at + header.frames * 8);
  return {
    version: magic === MAGIC_V1 ? 1 : 2,
    width: header.width,
    height: header.height,
    diffWidth: header.diffWidth,
    diffHeight: header.diffHeight,
    fps: header.fps,
    segmentStarts: header.segmentStarts,
    segmentDurations: header.segmentDurations,
    slotStarts: header.slotStarts,
    slotDurations: header.slotDurations,
    slotSegments: header.slotSegments,
    mean,
    diff,
    signature,
    signatureTimes,
  };
}
