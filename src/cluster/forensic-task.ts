// Forensic preparation of one working segment as data a worker on any machine can run: its variants (pattern added
// and subtracted in luma) and its measurement for the sidecar. Segments are independent, so the many segments of one
// title spread over every worker of a farm. The task carries the segment's pattern grids, never the key they come
// from: a worker learns nothing that would let it make another title's (or another segment's) mark.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { WmarkError } from '../core/errors.js';
import { GRID_COLUMNS, GRID_ROWS } from '../core/forensic/keyed-bits.js';
import { patternFrameYuv420 } from '../core/forensic/pattern-image.js';
import {
  decodeSmallArgs,
  encodeMeasure,
  halfVariantArgs,
  joinHalvesArgs,
  measureSegment,
  SIDECAR_HEIGHT,
  SIDECAR_WIDTH,
  slotOrderFromWhole,
  variantArgs,
  variantFileName,
  variantNames,
  wholeVariantArgs,
  type SegmentMeasure,
} from '../core/forensic/variant-plan.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import type { ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../media/media-store.js';
import { encodeSchema, keySchema, versionSchema } from './task-fields.js';

const gridSchema = z.array(z.union([z.literal(1), z.literal(-1)])).length(GRID_COLUMNS * GRID_ROWS);

export const forensicTaskSchema = z.object({
  kind: z.literal('forensic-variant'),
  version: versionSchema,
  /** The working segment. */
  input: keySchema,
  /** The video's forensic folder in the store: the variants and the measurement go there. */
  outputPrefix: keySchema,
  index: z.number().int().min(0).max(99_999),
  width: z.number().int().positive().max(16_384),
  height: z.number().int().positive().max(16_384),
  gop: z.number().int().positive(),
  hasAudio: z.boolean(),
  encode: encodeSchema,
  /** Frames in the first code slot (with two slots; the whole segment with one). */
  split: z.number().int().positive(),
  /** One pattern grid per code slot of the segment (one or two). */
  grids: z.array(gridSchema).min(1).max(2),
  /** Two slots only: each half its own GOP (the 'split' layout) rather than each variant one GOP ('whole'). */
  halves: z.boolean().optional(),
});

export type ForensicTask = z.infer<typeof forensicTaskSchema>;

/** Where a segment's measurement goes: written last, so it being there means the segment's variants are all stored. */
export const measureKey = (prefix: string, index: number) => `${prefix}/measure_${String(index).padStart(5, '0')}.bin`;

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
 * joined into them (measured from the halves). The same steps in this process (engine/forensic-prepare.ts) and on a worker.
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
      await runner.ffmpeg(variantArgs({ input: plan.input, pattern: patterns[0]!, width: plan.width, height: plan.height, outA, outB, gop: plan.gop, encode: plan.encode, hasAudio: plan.hasAudio }));
      decode = [outA, outB];
    } else if (plan.halves) {
      const halves = (['a1', 'b1', 'a2', 'b2'] as const).map((h) => path.join(plan.outDir, `half_${h}_${pad}.ts`)) as [string, string, string, string];
      temporary.push(...halves);
      await runner.ffmpeg(halfVariantArgs({ input: plan.input, patterns: pair, width: plan.width, height: plan.height, split: plan.split, out: halves, gop: plan.gop, encode: plan.encode }));
      await runner.ffmpeg(joinHalvesArgs({ halves, ...(plan.hasAudio ? { audioFrom: plan.input } : {}), out: four }));
      decode = halves;
    } else {
      await runner.ffmpeg(wholeVariantArgs({ input: plan.input, patterns: pair, width: plan.width, height: plan.height, split: plan.split, out: four, gop: plan.gop, encode: plan.encode, hasAudio: plan.hasAudio }));
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

export interface ForensicRunResult {
  /** The measurement's key. */
  output: string;
  /** False when the measurement was already stored: nothing was fetched or encoded. */
  rendered: boolean;
  ms: number;
}

/**
 * Runs a forensic task: fetches the working segment into a scratch folder, encodes and measures its variants, and
 * stores the variants, then the measurement. Idempotent like a segment render: a stored measurement is not redone.
 */
export async function runForensicTask(task: ForensicTask, store: MediaStore, runner: ProcessRunner, options: { tmpDir?: string; signal?: AbortSignal } = {}): Promise<ForensicRunResult> {
  const started = Date.now();
  const output = measureKey(task.outputPrefix, task.index);
  if (await store.exists(output)) return { output, rendered: false, ms: Date.now() - started };
  const work = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'wmark-forensic-'));
  try {
    const input = path.join(work, 'input.ts');
    const outDir = path.join(work, 'out');
    await Promise.all([store.getFile(task.input, input), mkdir(outDir)]);
    const measure = await prepareSegmentVariants(runner, { ...task, input, outDir });
    if (options.signal?.aborted) throw new WmarkError('CANCELLED', `forensic preparation of ${task.input} cancelled`);
    for (const v of variantNames(task.grids.length)) await store.putFile(`${task.outputPrefix}/${variantFileName(v, task.index)}`, path.join(outDir, variantFileName(v, task.index)));
    const file = path.join(work, 'measure.bin');
    await writeFile(file, encodeMeasure(measure));
    await store.putFile(output, file);
    return { output, rendered: true, ms: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
