// The engine's side of ingest on the render farm (issue 11): with `wmark serve --queue`, an ingest job stores the
// source in the media store, has one worker transcode it into working segments (one ffmpeg run, as here), then has
// the workers prepare the forensic variants segment by segment, many at once. This process only plans, waits, and
// joins the workers' measurements into the sidecar, so the video ends exactly as an embedded ingest would make it.
import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { measureKey, type ForensicTask } from '../cluster/forensic-task.js';
import type { IngestTask } from '../cluster/ingest-task.js';
import type { SegmentQueue } from '../cluster/segment-queue.js';
import { decodeMeasure, type SegmentMeasure } from '../core/forensic/variant-plan.js';
import { WmarkError, isInterruption } from '../core/errors.js';
import { framesPerSegment, segmentFileName } from '../core/plan/segment-timing.js';
import { isHttpUrl } from '../core/http-url.js';
import type { MediaStore } from '../media/media-store.js';
import { VERSION } from '../version.js';
import type { Engine } from './engine.js';
import { FORENSIC_DIR, forensicFiles, LAYOUT_NAME, segmentPatterns, SIDECAR_NAME } from './forensic-prepare.js';
import { segmentDurations, videoDir, workingFormPlan } from './ingest.js';
import type { JobReporter } from './job-lease.js';
import { FARM_PRIORITY, untilAborted } from './segment-farm.js';
import type { VideoRecord } from './state-store.js';

/**
 * Ingest jobs one serve runs at once on a farm: each only waits on its tasks (the farm's queue orders the work), so
 * many titles can be transcoded and prepared side by side on as many workers.
 */
export const FARM_INGEST_JOBS = 16;

/** An ingest waits behind segments a player waits for, and ahead of full renders nobody watches yet. */
const INGEST_PRIORITY = FARM_PRIORITY.ahead;

export interface IngestFarm {
  /** Transcodes (and prepares) `video` from the local file `input` on the farm; resolves with the record's new fields. */
  normalise(video: VideoRecord, input: string, report: JobReporter, signal?: AbortSignal): Promise<Partial<VideoRecord>>;
}

/** The source's key in the store, keeping a plain file extension (a hint for ffmpeg's format probe). */
function sourceKey(prefix: string, sourceUrl: string): string {
  const name = isHttpUrl(sourceUrl) ? new URL(sourceUrl).pathname : sourceUrl;
  const ext = path.extname(name);
  return `${prefix}/source${/^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext.toLowerCase() : ''}`;
}

async function readObject(store: MediaStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await store.openRange(key)) as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Gives the engine's ingest jobs a farm: `store` is the media store the workers share (the data folder's media folder,
 * which they mount), `queue` the farm's queue. Call before any ingest job starts.
 */
export function attachIngestFarm(engine: Engine, queue: SegmentQueue, store: MediaStore): IngestFarm {
  const keyOf = (dir: string) => path.relative(engine.paths.media, dir).split(path.sep).join('/');

  /**
   * Keeps a file made here (the sidecar, the layout) in the media folder, where detect and viewer playlists read it,
   * and in the shared store when that is not the media folder itself (serve --media s3://…).
   */
  const putBytes = async (key: string, bytes: Buffer | string) => {
    const file = path.join(engine.paths.media, ...key.split('/'));
    const temp = path.join(engine.paths.tmp, `farm-${randomUUID()}`);
    try {
      await writeFile(temp, bytes);
      await mkdir(path.dirname(file), { recursive: true });
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
    if (engine.media) await engine.media.putFile(key, file);
  };

  /** Runs the task on the farm; a result remembered from before its outputs were deleted is run again. */
  const onFarm = async <T extends IngestTask | ForensicTask>(task: T, done: () => Promise<boolean>, signal?: AbortSignal) => {
    const result = await untilAborted(queue.enqueue(task, { priority: INGEST_PRIORITY }), signal);
    if (await done()) return result;
    await queue.forgetTask(task);
    const again = await untilAborted(queue.enqueue(task, { priority: INGEST_PRIORITY }), signal);
    if (!(await done())) throw new WmarkError('INGEST_FAILED', `a worker reported ${task.outputPrefix} done, but its output is not in ${store.location} (do the workers use this store as --media?)`);
    return again;
  };

  const farm: IngestFarm = {
    async normalise(video, input, report, signal) {
      const prefix = keyOf(videoDir(engine, video.id));
      const plan = workingFormPlan(video);
      const totalMs = Math.round((video.durationSeconds ?? 0) * 1000);
      try {
        report(0, totalMs, 'normalising on the render farm');
        const source = sourceKey(prefix, video.sourceUrl);
        // The source travels through the store: workers never fetch a client's URL, so serve's source policy (SSRF
        // checks, source roots) is the only one, and a file on serve's own disk reaches workers too.
        await store.putFile(source, input);
        const task: IngestTask = {
          kind: 'ingest',
          version: VERSION,
          source,
          outputPrefix: prefix,
          ...plan,
          ...(video.durationSeconds && video.durationSeconds > 0 ? { durationSeconds: video.durationSeconds } : {}),
        };
        const made = await onFarm(task, () => store.exists(`${prefix}/${segmentFileName(0)}`), signal);
        const durations = segmentDurations(made.segments, made.frames, plan.fps, plan.lead);
        report(totalMs, totalMs, 'normalising on the render farm');
        if (video.enableForensic) await prepareOnFarm(video, prefix, durations, report, signal);
        await store.deletePrefix(source);
        return { status: 'INGESTED', segments: durations, timeOrigin: made.timeOrigin, durationSeconds: Number(durations.reduce((a, b) => a + b, 0).toFixed(6)) };
      } catch (error) {
        // Interrupted (serve stopping): the tasks stay queued and what the workers stored stays, for the resumed job.
        if (!isInterruption(error)) await store.deletePrefix(`${prefix}/`).catch(() => undefined);
        throw error;
      }
    },
  };

  /** One task per segment, all queued at once: every worker of the farm takes a share of the title. */
  async function prepareOnFarm(video: VideoRecord, prefix: string, durations: number[], report: JobReporter, signal?: AbortSignal): Promise<void> {
    const fps = video.fpsNum! / video.fpsDen!;
    const forensicPrefix = `${prefix}/${FORENSIC_DIR}`;
    const patterns = segmentPatterns(engine.secret, video.id, durations, fps, video.forensicLayout ?? undefined);
    const stage = 'preparing forensic variants A and B';
    let done = 0;
    report(0, durations.length, stage);
    const measures: SegmentMeasure[] = await Promise.all(
      patterns.map(async ({ split, grids, halves }, index) => {
        const task: ForensicTask = {
          kind: 'forensic-variant',
          version: VERSION,
          input: `${prefix}/${segmentFileName(index)}`,
          outputPrefix: forensicPrefix,
          index,
          width: video.width!,
          height: video.height!,
          gop: framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! }),
          hasAudio: video.hasAudio,
          encode: { preset: engine.encode.preset, crf: engine.encode.crf },
          split,
          grids: grids.map((g) => Array.from(g) as (1 | -1)[]),
          ...(halves ? { halves } : {}),
        };
        const key = measureKey(forensicPrefix, index);
        await onFarm(task, () => store.exists(key), signal);
        const measure = decodeMeasure(await readObject(store, key));
        if (!measure || measure.slots !== grids.length) throw new WmarkError('INGEST_FAILED', `the forensic measurement ${key} a worker stored is not one of ${grids.length} slot(s)`);
        report(++done, durations.length, stage);
        return measure;
      }),
    );
    const files = forensicFiles(durations, fps, measures);
    await putBytes(`${forensicPrefix}/${SIDECAR_NAME}`, files.sidecar);
    await putBytes(`${forensicPrefix}/${LAYOUT_NAME}`, files.layout);
    // The measurements only carried the sidecar's parts here: an embedded ingest's folder has none.
    await store.deletePrefix(`${forensicPrefix}/measure_`);
  }

  engine.ingestFarm = farm;
  return farm;
}
