// The detection sidecar kept per forensic video: binary, gzip-compressed, versioned. Small enough to keep forever.
//
// v1 (videos ingested before code slots): one code bit per segment, diff at the mean's resolution.
// v2: one code bit per slot (a segment carries one or two slots), per-slot mean at width x height and the measured
//     mark (A-B)/2 at diffWidth x diffHeight (the mark is a smooth 16x9 pattern: a quarter of the pixels lose nothing).
// Both decode to the same Sidecar shape, so the detector never asks which one it has.
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Sidecar } from './detect-math.js';
import { SIGNATURE_CELLS } from './detect-math.js';

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

function body(s: Sidecar): Buffer[] {
  const mean = Uint16Array.from(s.mean, (v) => Math.max(0, Math.min(65535, Math.round(v * MEAN_SCALE))));
  const diff = Int16Array.from(s.diff, (v) => Math.max(-32768, Math.min(32767, Math.round(v * DIFF_SCALE))));
  const sig = Uint16Array.from(s.signature, (v) => Math.max(0, Math.min(65535, Math.round(v * SIG_SCALE))));
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
  if (s.slotStarts.length !== s.segmentStarts.length || s.diffWidth !== s.width || s.diffHeight !== s.height) throw new Error('a v1 sidecar has one slot per segment and diff at the mean\'s size');
  return frame(MAGIC_V1, { width: s.width, height: s.height, fps: s.fps, segmentStarts: s.segmentStarts, segmentDurations: s.segmentDurations, frames: s.signatureTimes.length }, body(s));
}

export function decodeSidecar(data: Buffer): Sidecar {
  const raw = gunzipSync(data);
  const magic = raw.subarray(0, MAGIC_V1.length).toString();
  if (magic !== MAGIC_V1 && magic !== MAGIC_V2) throw new Error('not a wmark forensic sidecar');
  const headerLength = raw.readUInt32LE(magic.length);
  let at = magic.length + 4;
  const parsed = JSON.parse(raw.subarray(at, at + headerLength).toString()) as Partial<HeaderV2> & { width: number; height: number; fps: number; segmentStarts: number[]; segmentDurations: number[]; frames: number };
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
  const take = (bytes: number) => {
    const copy = Buffer.from(raw.subarray(at, at + bytes));
    at += bytes;
    return copy.buffer.slice(copy.byteOffset, copy.byteOffset + bytes);
  };
  const slots = header.slotStarts.length;
  const mean = Float32Array.from(new Uint16Array(take(header.width * header.height * slots * 2)), (v) => v / MEAN_SCALE);
  const diff = Float32Array.from(new Int16Array(take(header.diffWidth * header.diffHeight * slots * 2)), (v) => v / DIFF_SCALE);
  const signature = Float32Array.from(new Uint16Array(take(header.frames * SIGNATURE_CELLS * 2)), (v) => v / SIG_SCALE);
  const signatureTimes = new Float64Array(take(header.frames * 8));
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
