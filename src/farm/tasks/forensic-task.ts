// Forensic preparation of one working segment as data a worker on any machine can run: its variants (pattern added
// and subtracted in luma) and its measurement for the sidecar. Segments are independent, so the many segments of one
// title spread over every worker of a farm. The task carries the segment's pattern grids, never the key they come
// from: a worker learns nothing that would let it make another title's (or another segment's) mark.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { WmarkError } from '../../core/errors.js';
import { GRID_COLUMNS, GRID_ROWS } from '../../core/forensic/keyed-bits.js';
import { encodeMeasure, variantFileName, variantNames } from '../../core/forensic/variant-plan.js';
import { prepareSegmentVariants } from '../../ffmpeg/forensic-variants.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../../media/media-store.js';
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
export async function runForensicTask(
  task: ForensicTask,
  store: MediaStore,
  runner: ProcessRunner,
  /** `now`: the worker's clock, which times the task. */
  options: { now: () => number; tmpDir?: string; signal?: AbortSignal },
): Promise<ForensicRunResult> {
  const started = options.now();
  const output = measureKey(task.outputPrefix, task.index);
  if (await store.exists(output)) return { output, rendered: false, ms: options.now() - started };
  const work = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'wmark-forensic-'));
  try {
    const input = path.join(work, 'input.ts');
    const outDir = path.join(work, 'out');
    await Promise.all([store.getFile(task.input, input), mkdir(outDir)]);
    const measure = await prepareSegmentVariants(runner, { ...task, input, outDir });
    if (options.signal?.aborted) throw new WmarkError('CANCELLED', `forensic preparation of ${task.input} cancelled`);
    for (const v of variantNames(task.grids.length))
      await store.putFile(`${task.outputPrefix}/${variantFileName(v, task.index)}`, path.join(outDir, variantFileName(v, task.index)));
    const file = path.join(work, 'measure.bin');
    await writeFile(file, encodeMeasure(measure));
    await store.putFile(output, file);
    return { output, rendered: true, ms: options.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
