// A video's ingest transcode as data a worker on any machine can run: the source as serve stored it in the media store,
// the working form to make (frame rate, size, lead segments) and where the working segments go. It is one ffmpeg run
// over the whole source, as in this process: the segment muxer cuts at exact frame numbers and the audio is encoded
// once, which time-range pieces on several workers could not promise (each piece's AAC encoder would start afresh).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { WmarkError } from '../../core/errors.js';
import { segmentFileName } from '../../core/plan/segment-timing.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { type TranscodeResult, transcodeToSegments } from '../../ffmpeg/transcode-segments.js';
import type { MediaStore } from '../../media/media-store.js';
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
});

export type IngestTask = z.infer<typeof ingestTaskSchema>;

export interface IngestRunResult extends TranscodeResult {
  ms: number;
}

/**
 * Runs an ingest task: fetches the source into a scratch folder, transcodes it, and stores every working segment.
 * Retried after its worker died, it runs again from the start and writes the same objects (the encode is the same).
 */
export async function runIngestTask(
  task: IngestTask,
  store: MediaStore,
  runner: ProcessRunner,
  options: { tmpDir?: string; signal?: AbortSignal } = {},
): Promise<IngestRunResult> {
  const started = Date.now();
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
    return { ...result, ms: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
