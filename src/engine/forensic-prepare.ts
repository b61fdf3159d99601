// Forensic preparation at ingest: variants A and B of every working segment (pattern added / subtracted in luma)
// and the detection sidecar measured from the encoded variants.
import { mkdir, writeFile, rm } from 'node:fs/promises';
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
/** Sidecar resolution: 8x8 pixels per pattern cell, enough to register crops and read the mark after downscaling. */
export const SIDECAR_WIDTH = 128;
export const SIDECAR_HEIGHT = 72;

export const variantFileName = (variant: 'a' | 'b', index: number) => `${variant}_${String(index).padStart(5, '0')}.ts`;

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

/** One decode of the working segment, split into A (grainmerge = +pattern) and B (grainextract = -pattern), both encoded alike. */
export function variantArgs(plan: { input: string; pattern: string; width: number; height: number; outA: string; outB: string; gop: number; encode: EncodeOptions; hasAudio: boolean }): string[] {
  const enc = (out: string, label: string) => [
    '-map', `[${label}]`, ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []),
    '-c:v', 'libx264', '-preset', plan.encode.preset, '-crf', String(plan.encode.crf),
    '-g', String(plan.gop), '-keyint_min', String(plan.gop), '-sc_threshold', '0', '-x264-params', 'open-gop=0',
    '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts', out,
  ];
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

async function decodeSmall(runner: ProcessRunner, file: string): Promise<Uint16Array> {
  const { stdout } = await runner.ffmpeg(
    ['-v', 'error', '-threads', '1', '-i', file, '-map', '0:v:0', '-vf', `scale=${SIDECAR_WIDTH}:${SIDECAR_HEIGHT}:flags=area,format=gray16le`, '-f', 'rawvideo', 'pipe:1'],
    { captureStdout: true },
  );
  return new Uint16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

export async function prepareForensic(runner: ProcessRunner, plan: ForensicPlan, onProgress?: (done: number, total: number) => void): Promise<{ sidecarBytes: number }> {
  const out = path.join(plan.dir, FORENSIC_DIR);
  await mkdir(out, { recursive: true });
  const key = forensicKey(plan.secret);
  const count = plan.segmentDurations.length;
  const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
  const mean = new Float32Array(count * n);
  const diff = new Float32Array(count * n);
  const frameSigs: { k: number; sig: Float32Array; frames: number }[] = [];
  let done = 0;

  await forEachBounded(
    Array.from({ length: count }, (_, k) => k),
    plan.workers,
    async (k) => {
      const pattern = path.join(out, `pattern_${k}.yuv`);
      await writeFile(pattern, patternFrameYuv420(patternGrid(key, plan.videoId, k), plan.width, plan.height));
      const outA = path.join(out, variantFileName('a', k));
      const outB = path.join(out, variantFileName('b', k));
      await runner.ffmpeg(variantArgs({ input: path.join(plan.dir, segmentFileName(k)), pattern, width: plan.width, height: plan.height, outA, outB, gop: plan.gop, encode: plan.encode, hasAudio: plan.hasAudio }));
      await rm(pattern, { force: true });
      const [a, b] = await Promise.all([decodeSmall(runner, outA), decodeSmall(runner, outB)]);
      const frames = Math.min(a.length, b.length) / n;
      const sig = new Float32Array(frames * SIGNATURE_CELLS);
      const avg = new Float32Array(n);
      for (let f = 0; f < frames; f++) {
        for (let p = 0; p < n; p++) {
          const av = a[f * n + p]! / 256;
          const bv = b[f * n + p]! / 256;
          avg[p] = (av + bv) / 2;
          mean[k * n + p]! += avg[p]!;
          diff[k * n + p]! += (av - bv) / 2;
        }
        frameSignature(avg, SIDECAR_WIDTH, SIDECAR_HEIGHT, sig, f * SIGNATURE_CELLS);
      }
      for (let p = 0; p < n; p++) {
        mean[k * n + p]! /= frames;
        diff[k * n + p]! /= frames;
      }
      frameSigs.push({ k, sig, frames });
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
  const totalFrames = frameSigs.reduce((a, s) => a + s.frames, 0);
  const signature = new Float32Array(totalFrames * SIGNATURE_CELLS);
  const signatureTimes = new Float64Array(totalFrames);
  let at = 0;
  for (const s of frameSigs) {
    signature.set(s.sig, at * SIGNATURE_CELLS);
    for (let f = 0; f < s.frames; f++) signatureTimes[at + f] = starts[s.k]! + f / plan.fps;
    at += s.frames;
  }
  const sidecar: Sidecar = { width: SIDECAR_WIDTH, height: SIDECAR_HEIGHT, fps: plan.fps, segmentStarts: starts, segmentDurations: plan.segmentDurations, mean, diff, signature, signatureTimes };
  const bytes = encodeSidecar(sidecar);
  await writeFile(path.join(out, SIDECAR_NAME), bytes);
  return { sidecarBytes: bytes.length };
}
