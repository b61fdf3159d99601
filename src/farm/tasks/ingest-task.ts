// A video's ingest transcode as data a worker on any machine can run: the source as serve stored it in the media store,
// the working form to make (frame rate, size, lead segments) and where the working segments go. It is one ffmpeg run
// over the whole source, as in this process: the segment muxer cuts at exact frame numbers and the audio is encoded
// once, which time-range pieces on several workers could not promise (each piece's AAC encoder would start afresh).
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { WmarkError } from '../../core/errors.js';
import { framesPerSegment, segmentFileName } from '../../core/plan/segment-timing.js';
import { segmentDurations } from '../../core/plan/working-form.js';
import { BAND_DIR, BAND_META_NAME, prepareBandMedia, SEVERAL_BANDS } from '../../engine/band/band-media.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { type TranscodeResult, transcodeToSegments } from '../../ffmpeg/transcode-segments.js';
import type { MediaStore } from '../../media/media-store.js';
import type { WorkerBand } from './band-task.js';
import { encodeSchema, keySchema, versionSchema } from './task-fields.js';

export const ingestTaskSchema = z.object({
  kind: z.literal('ingest'),
  version: versionSchema,
  /** The source, stored by serve (workers never fetch a client's URL: serve's source policy stays in one place). */
  source: keySchema,
  /** The video's folder in the store: the working segments go there as seg_00000.ts, ... */
  outputPrefix: keySchema,
  fps: z.object({ num: z.number().int().positive(), den: z.number().int().positive() }),
  width: z.number().int().positive().max(16_384),
  height: z.number().int().positive().max(16_384),
  hasAudio: z.boolean(),
  encode: encodeSchema,
  lead: z.boolean(),
  maxFrames: z.number().int().positive().optional(),
  /** The probed length, for progress. */
  durationSeconds: z.number().positive().optional(),
  /**
   * Make the title's band media too, with the render's settings, when this worker has the patched x264 (absent: serve
   * renders every mark in full, WMARK_BAND=off).
   */
  band: z.object({ encode: encodeSchema }).optional(),
});

export type IngestTask = z.infer<typeof ingestTaskSchema>;

export interface IngestRunResult extends TranscodeResult {
  ms: number;
  /** Whether the band media were made and stored (asked for, and this worker has the patched x264). */
  band?: boolean;
}

/**
 * Runs an ingest task: fetches the source into a scratch folder, transcodes it, and stores every working segment.
 * Retried after its worker died, it runs again from the start and writes the same objects (the encode is the same).
 */
export async function runIngestTask(
  task: IngestTask,
  store: MediaStore,
  runner: ProcessRunner,
  /** `now`: the worker's clock, which times the task. */
  options: { now: () => number; tmpDir?: string; signal?: AbortSignal; threads?: number; band?: Pick<WorkerBand, 'x264'> },
): Promise<IngestRunResult> {
  const started = options.now();
  const work = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'wmark-ingest-'));
  try {
    const source = path.join(work, 'source');
    await store.getFile(task.source, source);
    const outDir = path.join(work, 'out');
    await mkdir(outDir);
    const result = await transcodeToSegments(
      runner,
      { ...task, source, outDir, label: task.source },
      { durationSeconds: task.durationSeconds, signal: options.signal },
    );
    if (options.signal?.aborted) throw new WmarkError('CANCELLED', `ingest of ${task.source} cancelled`);
    for (let i = 0; i < result.segments; i++) await store.putFile(`${task.outputPrefix}/${segmentFileName(i)}`, path.join(outDir, segmentFileName(i)));
    // The muxer's list too, so the video's folder holds what an embedded ingest publishes.
    await store.putFile(`${task.outputPrefix}/segments.csv`, path.join(outDir, 'segments.csv'));
    const x264 = task.band ? options.band?.x264() : undefined;
    if (x264) await makeBandMedia(x264, task, result, { store, runner, dir: outDir, workers: Math.max(1, options.threads ?? 1), signal: options.signal });
    return { ...result, ms: options.now() - started, ...(task.band ? { band: Boolean(x264) } : {}) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The title's band media, made from the working segments as an embedded ingest makes them, and stored under the video's
 * folder: band.json last, since its presence says the title has a band encode.
 */
async function makeBandMedia(
  x264: string,
  task: IngestTask,
  made: TranscodeResult,
  job: { store: MediaStore; runner: ProcessRunner; dir: string; workers: number; signal?: AbortSignal },
): Promise<void> {
  await prepareBandMedia(
    x264,
    job.runner,
    {
      dir: job.dir,
      width: task.width,
      height: task.height,
      fps: task.fps,
      gop: framesPerSegment(task.fps),
      hasAudio: task.hasAudio,
      segmentDurations: segmentDurations(made.segments, made.frames, task.fps, task.lead),
      timeOrigin: made.timeOrigin,
      encode: task.band!.encode,
      workers: job.workers,
      severalBands: SEVERAL_BANDS,
    },
    undefined,
    job.signal,
  );
  if (job.signal?.aborted) throw new WmarkError('CANCELLED', `ingest of ${task.source} cancelled`);
  const dir = path.join(job.dir, BAND_DIR);
  const names = (await readdir(dir)).filter((name) => name !== BAND_META_NAME);
  for (const name of [...names, BAND_META_NAME]) await job.store.putFile(`${task.outputPrefix}/${BAND_DIR}/${name}`, path.join(dir, name));
}
