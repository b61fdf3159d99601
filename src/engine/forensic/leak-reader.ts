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
  const fps = o.fps.num / o.fps.den;
  const expected = Math.max(1, Math.ceil((Number.isFinite(o.durationSeconds) ? o.durationSeconds : 600) * fps * 1.02) + 2);
  const chunkFrames = Math.max(1, Math.ceil((expected * n * 2) / (o.budgetBytes ?? LEAK_FRAME_BUDGET)));
  const chunks = new ChunkMeans(n, chunkFrames, Math.ceil(expected / chunkFrames) + 4);
  const signatures = new SignatureLog(expected + 16);
  const grey = new Float32Array(n);
  const sum = chunks.sum;
  const onFrame = (buf: Buffer, at: number) => {
    // One pass over the pixels: the grey picture the signature reads, and the chunk's sum.
    for (let p = 0; p < n; p++) {
      const v = buf[at + 2 * p]! | (buf[at + 2 * p + 1]! << 8);
      grey[p] = v / 256;
      sum[p]! += v;
    }
    signatures.add(grey, o.width, o.height, fps);
    chunks.frameAdded();
  };
  // Through the engine's runner, like every ffmpeg run: its stall watchdog and the kill-with-us guard apply here too.
  const runner = 'runner' in o ? o.runner : createProcessRunner(o.ffmpeg, o.ffmpeg);
  await runner.ffmpeg(leakDecodeArgs(o), { onStdout: framesOf(n * 2, onFrame), durationSeconds: o.durationSeconds }).catch((error: unknown) => {
    if (error instanceof WmarkError && (error.code === 'FFMPEG_FAILED' || error.code === 'FFMPEG_CRASHED'))
      throw new WmarkError('LEAK_DECODE_FAILED', `ffmpeg could not decode the leak: ${error.message}`, { details: error.details, cause: error });
    throw error;
  });
  chunks.flush();
  return {
    frames: chunks.frames(o.width, o.height, fps),
    times: signatures.times.subarray(0, signatures.count),
    signature: signatures.signature.subarray(0, signatures.count * SIGNATURE_CELLS),
    frameCount: signatures.count,
    chunkFrames,
    decodeSeconds: (now() - started) / 1000,
  };
}

/** Cuts a byte stream into whole frames of `frameBytes`, however the stream's chunks fall, and hands each to `onFrame`. */
function framesOf(frameBytes: number, onFrame: (buf: Buffer, at: number) => void): (chunk: Buffer) => void {
  const pending = Buffer.alloc(frameBytes);
  let pendingBytes = 0;
  return (chunk) => {
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
}

/** Every frame's start time and 4x4 signature, in arrays that grow when the probe's duration was short. */
class SignatureLog {
  times: Float64Array;
  signature: Float32Array;
  count = 0;

  constructor(private capacity: number) {
    this.times = new Float64Array(capacity);
    this.signature = new Float32Array(capacity * SIGNATURE_CELLS);
  }

  add(grey: Float32Array, width: number, height: number, fps: number): void {
    if (this.count >= this.capacity) {
      this.capacity = Math.ceil(this.capacity * 1.5);
      const t2 = new Float64Array(this.capacity);
      t2.set(this.times);
      this.times = t2;
      const s2 = new Float32Array(this.capacity * SIGNATURE_CELLS);
      s2.set(this.signature);
      this.signature = s2;
    }
    this.times[this.count] = this.count / fps;
    frameSignature(grey, width, height, this.signature, this.count * SIGNATURE_CELLS);
    this.count++;
  }
}

/** The kept grey frames: the mean of each run of `chunkFrames` frames (one frame a run when the budget allows). */
class ChunkMeans {
  /** The current run's sum, pixel by pixel: the caller adds each frame to it, then calls frameAdded(). */
  readonly sum: Float64Array;
  private kept: Uint16Array;
  private counts: Uint16Array;
  private entries = 0;
  private inChunk = 0;

  constructor(
    private readonly n: number,
    private readonly chunkFrames: number,
    private capacity: number,
  ) {
    this.sum = new Float64Array(n);
    this.kept = new Uint16Array(capacity * n);
    this.counts = new Uint16Array(capacity);
  }

  frameAdded(): void {
    if (++this.inChunk === this.chunkFrames) this.flush();
  }

  /** Keeps the current run's mean (a last, shorter run too). */
  flush(): void {
    const { n } = this;
    if (!this.inChunk) return;
    if (this.entries >= this.capacity) {
      this.capacity = Math.ceil(this.capacity * 1.5) + 4;
      const k2 = new Uint16Array(this.capacity * n);
      k2.set(this.kept);
      this.kept = k2;
      const c2 = new Uint16Array(this.capacity);
      c2.set(this.counts);
      this.counts = c2;
    }
    const base = this.entries * n;
    for (let p = 0; p < n; p++) this.kept[base + p] = Math.round(this.sum[p]! / this.inChunk);
    this.counts[this.entries] = this.inChunk;
    this.entries++;
    this.sum.fill(0);
    this.inChunk = 0;
  }

  /** The kept entries with each one's start time (and, for runs of several frames, its frame count and span). */
  frames(width: number, height: number, fps: number): LeakFrames {
    const { entries, n } = this;
    const entryTimes = new Float64Array(entries);
    const spans = new Float64Array(entries);
    let f = 0;
    for (let e = 0; e < entries; e++) {
      entryTimes[e] = f / fps;
      spans[e] = this.counts[e]! / fps;
      f += this.counts[e]!;
    }
    return {
      width,
      height,
      times: entryTimes,
      frames: this.kept.subarray(0, entries * n),
      ...(this.chunkFrames > 1 ? { counts: this.counts.subarray(0, entries), spans } : {}),
    };
  }
}
