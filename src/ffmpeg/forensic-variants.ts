// The forensic variants of one working segment (the pattern added and subtracted in luma) and their measurement for
// the detection sidecar: the same steps whether the engine prepares a title or a render-farm worker prepares a segment.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { patternFrameYuv420 } from '../core/forensic/pattern-image.js';
import {
  decodeSmallArgs,
  halfVariantArgs,
  joinHalvesArgs,
  measureSegment,
  type SegmentMeasure,
  SIDECAR_HEIGHT,
  SIDECAR_WIDTH,
  slotOrderFromWhole,
  variantArgs,
  variantFileName,
  variantNames,
  wholeVariantArgs,
} from '../core/forensic/variant-plan.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import type { ProcessRunner } from './run-ffmpeg.js';

export interface SegmentVariantPlan {
  /** The working segment (a local file). */
  input: string;
  /** Folder the variant files are written to (named by variantFileName). */
  outDir: string;
  index: number;
  width: number;
  height: number;
  gop: number;
  hasAudio: boolean;
  encode: EncodeOptions;
  split: number;
  grids: ArrayLike<number>[];
  /** Two slots: encode each half as a GOP of its own and join them (the 'split' layout). */
  halves?: boolean;
}

/**
 * Encodes a segment's variants into `outDir` and measures them: one slot, files a/b from one decode; two slots, the
 * four whole-segment files aa/ab/ba/bb from one decode (measured from aa and bb), or with `halves` four half encodes
 * joined into them (measured from the halves). The same steps in this process (engine/ingest/forensic-prepare.ts) and on a worker.
 */
export async function prepareSegmentVariants(runner: ProcessRunner, plan: SegmentVariantPlan): Promise<SegmentMeasure> {
  const pad = String(plan.index).padStart(5, '0');
  const slots = plan.grids.length;
  const patterns = plan.grids.map((_, s) => path.join(plan.outDir, `pattern_${pad}_${s}.yuv`));
  await Promise.all(plan.grids.map((g, s) => writeFile(patterns[s]!, patternFrameYuv420(Int8Array.from(g), plan.width, plan.height))));
  const temporary = [...patterns];
  let decode: string[];
  try {
    const name = (v: string) => path.join(plan.outDir, variantFileName(v, plan.index));
    const four = { aa: name('aa'), ab: name('ab'), ba: name('ba'), bb: name('bb') };
    const pair: [string, string] = [patterns[0]!, patterns[1]!];
    if (slots === 1) {
      const [outA, outB] = variantNames(1).map(name) as [string, string];
      await runner.ffmpeg(
        variantArgs({
          input: plan.input,
          pattern: patterns[0]!,
          width: plan.width,
          height: plan.height,
          outA,
          outB,
          gop: plan.gop,
          encode: plan.encode,
          hasAudio: plan.hasAudio,
        }),
      );
      decode = [outA, outB];
    } else if (plan.halves) {
      const halves = (['a1', 'b1', 'a2', 'b2'] as const).map((h) => path.join(plan.outDir, `half_${h}_${pad}.ts`)) as [string, string, string, string];
      temporary.push(...halves);
      await runner.ffmpeg(
        halfVariantArgs({
          input: plan.input,
          patterns: pair,
          width: plan.width,
          height: plan.height,
          split: plan.split,
          out: halves,
          gop: plan.gop,
          encode: plan.encode,
        }),
      );
      await runner.ffmpeg(joinHalvesArgs({ halves, ...(plan.hasAudio ? { audioFrom: plan.input } : {}), out: four }));
      decode = halves;
    } else {
      await runner.ffmpeg(
        wholeVariantArgs({
          input: plan.input,
          patterns: pair,
          width: plan.width,
          height: plan.height,
          split: plan.split,
          out: four,
          gop: plan.gop,
          encode: plan.encode,
          hasAudio: plan.hasAudio,
        }),
      );
      decode = [four.aa, four.bb];
    }
    await Promise.all(patterns.map((p) => rm(p, { force: true })));
    const { stdout } = await runner.ffmpeg(decodeSmallArgs(decode), { captureStdout: true });
    const decoded = new Uint16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
    // The halves decode as A1 B1 A2 B2 already, the order measureSegment reads; whole variants come as aa then bb.
    const frames = slots === 1 || plan.halves ? decoded : slotOrderFromWhole(decoded, SIDECAR_WIDTH * SIDECAR_HEIGHT, plan.split);
    return measureSegment(frames, slots, plan.split);
  } finally {
    await Promise.all(temporary.map((f) => rm(f, { force: true })));
  }
}
