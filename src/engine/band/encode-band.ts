// The two encodes of band rendering, run through the process runners: the shared encode of a whole picture (once per
// title) and a viewer's band encode (the band's source rows with the mark drawn on them, the shared encode's frame
// types forced), ready for the splice.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { frameTypesOf } from '../../core/h264/frame-types.js';
import type { BandRows } from '../../core/h264/splice-band.js';
import { type BandEncodeOptions, bandEncodeArgs, bandSourceArgs, checkBands, qpfileFor, sharedEncodeArgs } from '../../core/plan/band-plan.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';

export interface BandEncoders {
  /** The patched x264 CLI. */
  x264: string;
  runner: ProcessRunner;
}

/** The shared encode of a y4m source into raw H.264 with the band's slices and clamp. */
export async function encodeShared(
  encoders: BandEncoders,
  job: { source: string; output: string; rows: BandRows | readonly BandRows[]; height: number; options: BandEncodeOptions; signal?: AbortSignal },
): Promise<void> {
  checkBands(Array.isArray(job.rows) ? job.rows : [job.rows as BandRows], job.height);
  clampHeld(await encoders.runner.x264(encoders.x264, sharedEncodeArgs(job.source, job.output, job.rows, job.options), { signal: job.signal }));
}

/** The patch reports a decided macroblock whose vectors break the clamp: such a stream must not be spliced. */
export function clampHeld(run: { stderr: string }): void {
  const missed = /band clamp missed[^\n]*/.exec(run.stderr);
  if (missed) throw new WmarkError('SPLICE_MISMATCH', `x264 broke the band clamp (${missed[0]})`);
}

/**
 * A viewer's band stream: the band rows of the y4m `source` with `filter` drawn on them, encoded with the frame
 * types of `shared` (the shared encode's raw stream). Works in `workDir`, which it leaves as it found it.
 */
export async function encodeBand(
  encoders: BandEncoders,
  job: {
    source: string;
    shared: string;
    output: string;
    rows: BandRows;
    width: number;
    height: number;
    filter?: string;
    options: BandEncodeOptions;
    workDir: string;
    signal?: AbortSignal;
  },
): Promise<void> {
  const base = path.join(job.workDir, path.basename(job.output));
  const qpfile = `${base}.qpfile`;
  const rows = `${base}.band.y4m`;
  try {
    await writeFile(qpfile, qpfileFor(frameTypesOf(await readFile(job.shared))));
    await encoders.runner.ffmpeg(bandSourceArgs(job.source, rows, job.rows, { width: job.width, height: job.height }, job.filter), { signal: job.signal });
    clampHeld(await encoders.runner.x264(encoders.x264, bandEncodeArgs(rows, job.output, qpfile, job.options), { signal: job.signal }));
  } finally {
    await Promise.all([rm(qpfile, { force: true }), rm(rows, { force: true })]);
  }
}
