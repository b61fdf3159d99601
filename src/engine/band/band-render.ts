// A viewer's band render of one segment, wherever it runs (this process, or a farm worker with the files fetched from
// the shared store): the watermark's graph drawn on the band's kept rows, the band encode with the shared encode's frame
// types, and the splice into the shared segment. The checks are the same everywhere: x264 reports a missed clamp, and
// the splice refuses streams whose PPS or slices do not match.
import { rm, writeFile } from 'node:fs/promises';
import { isWmarkError } from '../../core/errors.js';
import { type PreparedSegment, prepareSharedSegment } from '../../core/h264/splice-segment.js';
import { type BandCut, type BandEncodeOptions, bandDrawArgs, bandDrawFilter, bandEncodeArgs } from '../../core/plan/band-plan.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { clampHeld } from './encode-band.js';
import { spliceSegmentFiles } from './splice-file.js';

/** Band renders that made their segment, and those that fell back to a full render, by reason (an error code). */
export interface BandStats {
  rendered: number;
  fallbacks: Record<string, number>;
}

export interface BandRenderTools {
  /** The patched x264 CLI. */
  x264: string;
  runner: ProcessRunner;
}

export interface BandRenderFiles {
  cut: BandCut;
  options: BandEncodeOptions;
  /** The watermark's filtergraph for whole pictures; it names its files relative to `cwd`. */
  graph: string;
  cwd: string;
  /** The band's kept source rows and the shared segment's qpfile, as files here. */
  rows: string;
  qpfile: string;
  shared: PreparedSegment;
  /** The spliced segment's file. */
  output: string;
  /** Path prefix of the render's temporary files (removed when it ends). */
  base: string;
  signal?: AbortSignal;
}

/**
 * Draws, band-encodes and splices one segment into `job.output`, one thread at a time (the draw's ffmpeg, then x264:
 * bandEncodeArgs); throws (SPLICE_MISMATCH, ...) where a full render must do.
 */
export async function renderBandSegment(tools: BandRenderTools, job: BandRenderFiles): Promise<void> {
  const [script, y4m, stream] = [`${job.base}.band-filter.txt`, `${job.base}.band.y4m`, `${job.base}.band.264`];
  try {
    await writeFile(script, bandDrawFilter(job.cut, job.graph));
    await tools.runner.ffmpeg(bandDrawArgs(job.rows, y4m, script, 1), { signal: job.signal, cwd: job.cwd });
    clampHeld(await tools.runner.x264(tools.x264, bandEncodeArgs(y4m, stream, job.qpfile, job.options), { signal: job.signal }));
    await spliceSegmentFiles(job.shared, [{ band: stream, output: job.output }], job.cut.rows);
  } finally {
    await Promise.all([script, y4m, stream].map((f) => rm(f, { force: true })));
  }
}

/** Shared segments parsed for splicing, the latest few by key: viewers of a title tend to ask for the same segments. */
export class PreparedSegments {
  private readonly prepared = new Map<string, Promise<PreparedSegment>>();

  /** `max`: parsed segments kept (a few MB each at 720p). */
  constructor(private readonly max = 8) {}

  /** The segment `key` parsed, read with `read` unless it is among the latest few. */
  get(key: string, read: (key: string) => Promise<Buffer>): Promise<PreparedSegment> {
    let prepared = this.prepared.get(key);
    if (!prepared) {
      prepared = read(key).then(prepareSharedSegment);
      prepared.catch(() => this.prepared.delete(key));
      this.prepared.set(key, prepared);
      if (this.prepared.size > this.max) this.prepared.delete(this.prepared.keys().next().value!);
    }
    return prepared;
  }
}

/**
 * A band render that failed: counted by its reason (an error code) and told, so the segment is rendered in full
 * instead. A cancellation is thrown again: nothing is rendered in its place.
 */
export function fallBack(error: unknown, job: { output: string; signal?: AbortSignal; stats: BandStats; log: (line: string) => void }): string {
  if (job.signal?.aborted || (isWmarkError(error) && error.code === 'CANCELLED')) throw error;
  const reason = isWmarkError(error) ? error.code : 'ERROR';
  job.stats.fallbacks[reason] = (job.stats.fallbacks[reason] ?? 0) + 1;
  const message = error instanceof Error ? error.message : String(error);
  job.log(`band render of ${job.output} failed (${reason}: ${message.split('\n')[0]}); rendering it in full`);
  return reason;
}
