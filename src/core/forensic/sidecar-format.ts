// The detection sidecar kept per forensic video: binary, gzip-compressed, versioned. Small enough to keep forever.
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Sidecar } from './detect-math.js';
import { SIGNATURE_CELLS } from './detect-math.js';

const MAGIC = 'WMFS1';
/** Fixed-point scales: luma means to 1/64 level, pattern differences to 1/1024 level. */
const MEAN_SCALE = 64;
const DIFF_SCALE = 1024;
const SIG_SCALE = 64;

export function encodeSidecar(s: Sidecar): Buffer {
  const header = Buffer.from(
    JSON.stringify({ width: s.width, height: s.height, fps: s.fps, segmentStarts: s.segmentStarts, segmentDurations: s.segmentDurations, frames: s.signatureTimes.length }),
  );
  const mean = Uint16Array.from(s.mean, (v) => Math.max(0, Math.min(65535, Math.round(v * MEAN_SCALE))));
  const diff = Int16Array.from(s.diff, (v) => Math.max(-32768, Math.min(32767, Math.round(v * DIFF_SCALE))));
  const sig = Uint16Array.from(s.signature, (v) => Math.max(0, Math.min(65535, Math.round(v * SIG_SCALE))));
  const times = Float64Array.from(s.signatureTimes);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  return gzipSync(Buffer.concat([Buffer.from(MAGIC), len, header, Buffer.from(mean.buffer), Buffer.from(diff.buffer), Buffer.from(sig.buffer), Buffer.from(times.buffer)]), { level: 9 });
}

export function decodeSidecar(data: Buffer): Sidecar {
  const raw = gunzipSync(data);
  if (raw.subarray(0, MAGIC.length).toString() !== MAGIC) throw new Error('not a wmark forensic sidecar');
  const headerLength = raw.readUInt32LE(MAGIC.length);
  let at = MAGIC.length + 4;
  const header = JSON.parse(raw.subarray(at, at + headerLength).toString()) as { width: number; height: number; fps: number; segmentStarts: number[]; segmentDurations: number[]; frames: number };
  at += headerLength;
  const take = (bytes: number) => {
    const copy = Buffer.from(raw.subarray(at, at + bytes));
    at += bytes;
    return copy.buffer.slice(copy.byteOffset, copy.byteOffset + bytes);
  };
  const cells = header.width * header.height * header.segmentStarts.length;
  const mean = Float32Array.from(new Uint16Array(take(cells * 2)), (v) => v / MEAN_SCALE);
  const diff = Float32Array.from(new Int16Array(take(cells * 2)), (v) => v / DIFF_SCALE);
  const signature = Float32Array.from(new Uint16Array(take(header.frames * SIGNATURE_CELLS * 2)), (v) => v / SIG_SCALE);
  const signatureTimes = new Float64Array(take(header.frames * 8));
  return { width: header.width, height: header.height, fps: header.fps, segmentStarts: header.segmentStarts, segmentDurations: header.segmentDurations, mean, diff, signature, signatureTimes };
}
