// Streams a leak through ffmpeg into what detection needs, without holding the decoded video: per-frame signatures
// (16 numbers a frame) and small grey frames, kept one per frame for leaks that fit the memory budget, else as the
// means of short runs of frames (chunks). A 2-hour leak at 30 fps is 216,000 frames: 4 GB as frames, 380 MB as chunks.
import { WmarkError } from '../../core/errors.js';
import type { LeakFrames } from '../../core/forensic/detect-inputs.js';
import { frameSignature, SIGNATURE_CELLS } from '../../core/forensic/frame-signature.js';
import { createProcessRunner, type ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';

/** Budget for the kept frames (bytes); the rest of detection needs well under 300 MB more. */
const LEAK_FRAME_BUDGET = 384 * 1024 * 1024;

export interface StreamedLeak {
  frames: LeakFrames;
  /** Every decoded frame's start time and 4x4 signature (for alignment). */
  times: Float64Array;
  signature: Float32Array;
  frameCount: number;
  /** Frames averaged per kept entry (1 = every frame kept). */
  chunkFrames: number;
  decodeSeconds: number;
}

/** Which ffmpeg decodes: the engine's runner, or a binary that gets a runner of its own (standalone callers: bench). */
type LeakDecoder = { runner: ProcessRunner } | { ffmpeg: string };

export type LeakReadOptions = LeakDecoder & {
  file: string;
  fps: { num: number; den: number };
  /** From the probe; sizes the chunks (an underestimate only costs a reallocation). */
  durationSeconds: number;
  width: number;
  height: number;
  budgetBytes?: number;
  threads?: number;
  /**
   * Decode without the in-loop deblocking filter (ffmpeg -skip_loop_filter all): a long leak's time is mostly its
   * decode, and deblocking is a large part of that; its effect on 128x72 means is block-edge detail the area downscale
   * averages away. detect.ts asks for it on long leaks only (see LONG_LEAK_SECONDS there).
   */
  skipLoopFilter?: boolean;
  /** The clock that times the decode (the engine's). */
  now?: () => number;
};

/** ffmpeg's arguments: the leak's first video stream at its own frame rate, area-scaled small, 16-bit grey, raw to stdout. */
export function leakDecodeArgs(o: Pick<LeakReadOptions, 'file' | 'fps' | 'width' | 'height' | 'threads' | 'skipLoopFilter'>): string[] {
  // The runner adds -hide_banner and -nostdin.
  return [
    '-v',
    'error',
    '-threads',
    String(o.threads ?? 0),
    // A decoder option: it must come before the input it applies to.
    ...(o.skipLoopFilter ? ['-skip_loop_filter', 'all'] : []),
    '-i',
    o.file,
    '-map',
    '0:v:0',
    '-vf',
    `fps=${o.fps.num}/${o.fps.den},scale=${o.width}:${o.height}:flags=area,format=gray16le`,
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

export async function readLeak(o: LeakReadOptions): Promise<StreamedLeak> {
  const now = o.now ?? Date.now;
  const started = now();
  const n = o.width * o.height;
  const frameBytes = n * 2;
  const fps = o.fps.num / o.fps.den;
  const expected = Math.max(1, Math.ceil((Number.isFinite(o.durationSeconds) ? o.durationSeconds : 600) * fps * 1.02) + 2);
  const budget = o.budgetBytes ?? LEAK_FRAME_BUDGET;
  const chunkFrames = Math.max(1, Math.ceil((expected * frameBytes) / budget));
  let capacity = Math.ceil(expected / chunkFrames) + 4;
  let kept = new Uint16Array(capacity * n);
  let counts = new Uint16Array(capacity);
  let sigCapacity = expected + 16;
  let times = new Float64Array(sigCapacity);
  let signature = new Float32Array(sigCapacity * SIGNATURE_CELLS);
  const acc = new Float64Array(n);
  const grey = new Float32Array(n);
  let frameCount = 0,
    inChunk = 0,
    entries = 0;
  const pending = Buffer.alloc(frameBytes);
  let pendingBytes = 0;

  const flushChunk = () => {
    if (!inChunk) return;
    if (entries >= capacity) {
      capacity = Math.ceil(capacity * 1.5) + 4;
      const k2 = new Uint16Array(capacity * n);
      k2.set(kept);
      kept = k2;
      const c2 = new Uint16Array(capacity);
      c2.set(counts);
      counts = c2;
    }
    const base = entries * n;
    for (let p = 0; p < n; p++) kept[base + p] = Math.round(acc[p]! / inChunk);
    counts[entries] = inChunk;
    entries++;
    acc.fill(0);
    inChunk = 0;
  };
  const onFrame = (buf: Buffer, at: number) => {
    if (frameCount >= sigCapacity) {
      sigCapacity = Math.ceil(sigCapacity * 1.5);
      const t2 = new Float64Array(sigCapacity);
      t2.set(times);
      times = t2;
      const s2 = new Float32Array(sigCapacity * SIGNATURE_CELLS);
      s2.set(signature);
      signature = s2;
    }
    for (let p = 0; p < n; p++) {
      const v = buf[at + 2 * p]! | (buf[at + 2 * p + 1]! << 8);
      grey[p] = v / 256;
      acc[p]! += v;
    }
    times[frameCount] = frameCount / fps;
    frameSignature(grey, o.width, o.height, signature, frameCount * SIGNATURE_CELLS);
    frameCount++;
    if (++inChunk === chunkFrames) flushChunk();
  };

  const onData = (chunk: Buffer) => {
    let at = 0;
    if (pendingBytes) {
      const take = Math.min(frameBytes - pendingBytes, chunk.length);
      chunk.copy(pending, pendingBytes, 0, take);
      pendingBytes += take;
      at = take;
      if (pendingBytes < frameBytes) return;
      onFrame(pending, 0);
      pendingBytes = 0;
    }
    for (; at + frameBytes <= chunk.length; at += frameBytes) onFrame(chunk, at);
    if (at < chunk.length) {
      chunk.copy(pending, 0, at);
      pendingBytes = chunk.length - at;
    }
  };
  // Through the engine's runner, like every ffmpeg run: its stall watchdog and the kill-with-us guard apply here too.
  const runner = 'runner' in o ? o.runner : createProcessRunner(o.ffmpeg, o.ffmpeg);
  await runner.ffmpeg(leakDecodeArgs(o), { onStdout: onData, durationSeconds: o.durationSeconds }).catch((error: unknown) => {
    if (error instanceof WmarkError && (error.code === 'FFMPEG_FAILED' || error.code === 'FFMPEG_CRASHED'))
      throw new WmarkError('LEAK_DECODE_FAILED', `ffmpeg could not decode the leak: ${error.message}`, { details: error.details, cause: error });
    throw error;
  });
  flushChunk();
  const entryTimes = new Float64Array(entries);
  const spans = new Float64Array(entries);
  let f = 0;
  for (let e = 0; e < entries; e++) {
    entryTimes[e] = f / fps;
    spans[e] = counts[e]! / fps;
    f += counts[e]!;
  }
  return {
    frames: {
      width: o.width,
      height: o.height,
      times: entryTimes,
      frames: kept.subarray(0, entries * n),
      ...(chunkFrames > 1 ? { counts: counts.subarray(0, entries), spans } : {}),
    },
    times: times.subarray(0, frameCount),
    signature: signature.subarray(0, frameCount * SIGNATURE_CELLS),
    frameCount,
    chunkFrames,
    decodeSeconds: (now() - started) / 1000,
  };
}
