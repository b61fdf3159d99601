// The band part of a segment task, and how a worker renders it: the band's kept rows, the shared segment's qpfile and
// the shared segment itself are fetched from the store, the task's drawing is drawn on the rows, band-encoded and
// spliced as in a local render (engine/band/band-render.ts). A worker without the patched x264 (or with WMARK_BAND=off)
// renders such a segment in full and says once why: a farm of workers with and without it works.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { isUnavailable } from '../../core/errors.js';
import { type BandStats, fallBack, PreparedSegments, renderBandSegment } from '../../engine/band/band-render.js';
import type { BandSupport } from '../../engine/band/band-support.js';
import type { BandRender } from '../../engine/render/segment-renderer.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../../media/media-store.js';
import { encodeSchema, keySchema } from './task-fields.js';

const size = z.number().int().positive().max(16_384);

export const bandTaskSchema = z.object({
  /** The band's macroblock rows (top included, bottom excluded) and the picture they were cut from. */
  cut: z.object({
    rows: z
      .object({ top: z.number().int().min(0).max(1024), bottom: z.number().int().min(1).max(1024) })
      .refine((rows) => rows.bottom > rows.top, 'the band ends below its top'),
    width: size,
    height: size,
  }),
  /** The shared segment, the band's kept source rows of the segment, and the shared segment's frame types. */
  shared: keySchema,
  rows: keySchema,
  qpfile: keySchema,
  /** The shared encode's settings, which the band encode repeats, and the segment's GOP. */
  options: encodeSchema.extend({ gop: z.number().int().positive(), refs: z.number().int().min(1).max(16) }),
});

export type BandTask = z.infer<typeof bandTaskSchema>;

/** A segment render's band, as a task carries it. */
export function bandTask(band: BandRender): BandTask {
  const { preset, crf, gop, refs } = band.options;
  return { cut: band.cut, shared: band.shared, rows: band.rows, qpfile: band.qpfile, options: { preset, crf, gop, refs } };
}

/** How a segment task with a band was rendered: spliced, or in full for this reason (an error code, or BAND_OFF). */
export type BandOutcome = 'spliced' | { fallback: string };

/** The reason a worker without band rendering gives for rendering a band's segment in full. */
const BAND_OFF = 'BAND_OFF';

/** Subfolder of a task's scratch folder for the band's files (task files may not start with a dot). */
const BAND_DIR = '.band';

/** A worker's band rendering: its patched x264 (or why it has none), the shared segments it parsed, its counts. */
export class WorkerBand {
  readonly stats: BandStats = { rendered: 0, fallbacks: {} };
  private readonly prepared = new PreparedSegments();
  private said = false;

  constructor(
    private readonly support: BandSupport,
    private readonly log: (line: string) => void,
  ) {}

  /** The patched x264 ingests use to make band media; undefined (said once) when this worker has none. */
  x264(): string | undefined {
    if (!this.support.x264) this.sayOff();
    return this.support.x264;
  }

  /** Said once, at the worker's start: which x264 renders the bands, or why marks that fit one are rendered in full. */
  announce(): void {
    if (this.support.x264) this.log(`band rendering with ${this.support.x264}`);
    else this.sayOff();
  }

  private sayOff(): void {
    if (this.said) return;
    this.said = true;
    this.log(`${this.support.off}: segments that fit a band are rendered in full on this worker, and its ingests make no band media`);
  }

  /**
   * Renders `band` of a segment into `output` (the drawing's files are in `work`). Anything but a cancellation or the
   * store going away falls back: counted, told, and the caller renders the segment in full.
   */
  async render(
    band: BandTask,
    job: { graph: string; work: string; output: string; label: string; store: MediaStore; runner: ProcessRunner; signal?: AbortSignal },
  ): Promise<BandOutcome> {
    if (!this.support.x264) {
      this.sayOff();
      this.stats.fallbacks[BAND_OFF] = (this.stats.fallbacks[BAND_OFF] ?? 0) + 1;
      return { fallback: BAND_OFF };
    }
    const dir = path.join(job.work, BAND_DIR);
    try {
      await mkdir(dir, { recursive: true });
      const [rows, qpfile] = [path.join(dir, `rows${path.extname(band.rows)}`), path.join(dir, 'frames.qp')];
      const [shared] = await Promise.all([
        this.prepared.get(band.shared, (key) => job.store.read(key)),
        job.store.getFile(band.rows, rows),
        job.store.getFile(band.qpfile, qpfile),
      ]);
      const tools = { x264: this.support.x264, runner: job.runner };
      const { graph, work: cwd, output, signal } = job;
      await renderBandSegment(tools, {
        cut: band.cut,
        options: band.options,
        graph,
        cwd,
        rows,
        qpfile,
        shared,
        output,
        base: path.join(dir, 'viewer'),
        signal,
      });
      this.stats.rendered++;
      return 'spliced';
    } catch (error) {
      if (isUnavailable(error)) throw error;
      return { fallback: fallBack(error, { output: job.label, signal: job.signal, stats: this.stats, log: this.log }) };
    }
  }
}
