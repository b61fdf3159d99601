// Ingest on the render farm: the source goes into the media store, one worker transcodes it into working segments
// (one ffmpeg run, as an embedded ingest does), then the workers prepare the forensic variants segment by segment,
// many at once. This process only plans, waits, and joins the workers' measurements into the sidecar, so the video
// ends exactly as an embedded ingest would make it.
import path from 'node:path';
import { leavesJobQueued, WmarkError } from '../core/errors.js';
import { forensicFiles, segmentPatterns } from '../core/forensic/title-layout.js';
import { decodeMeasure, forensicStage, type SegmentMeasure } from '../core/forensic/variant-plan.js';
import { isHttpUrl } from '../core/http-url.js';
import { framesPerSegment } from '../core/plan/segment-timing.js';
import { segmentDurations, workingFormPlan } from '../core/plan/working-form.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import { LAYOUT_NAME, mediaKeys, SIDECAR_NAME } from '../engine/data-folder/layout.js';
import type { IngestPath } from '../engine/ingest-path.js';
import type { JobReporter } from '../engine/jobs/job-reporter.js';
import type { VideoRecord } from '../engine/state/state-store.js';
import type { MediaStore } from '../media/media-store.js';
import { VERSION } from '../version.js';
import { abortable } from './abortable.js';
import { FARM_PRIORITY } from './farm-renderer.js';
import type { TaskQueue } from './task-queue.js';
import { type ForensicTask, measureKey } from './tasks/forensic-task.js';
import type { IngestTask } from './tasks/ingest-task.js';

/** An ingest waits behind segments a player waits for, and ahead of full renders nobody watches yet. */
const INGEST_PRIORITY = FARM_PRIORITY.ahead;

/** The source's key in the store, keeping a plain file extension (a hint for ffmpeg's format probe). */
function sourceKey(prefix: string, sourceUrl: string): string {
  const name = isHttpUrl(sourceUrl) ? new URL(sourceUrl).pathname : sourceUrl;
  const ext = path.extname(name);
  return `${prefix}/source${/^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext.toLowerCase() : ''}`;
}

export interface FarmIngestOptions {
  queue: TaskQueue;
  /** The store the workers share. */
  store: MediaStore;
  encode: EncodeOptions;
  /** The service secret: forensic patterns are derived here, and only the patterns travel in tasks. */
  secret: Buffer;
  /** Ask the ingesting worker for the band media (it makes them when it has the patched x264). */
  bands?: boolean;
}

export class FarmIngest implements IngestPath {
  constructor(private readonly options: FarmIngestOptions) {}

  /** Runs the task on the farm; a result remembered from before its outputs were deleted is run again. */
  private async onFarm<T extends IngestTask | ForensicTask>(task: T, done: () => Promise<boolean>, signal?: AbortSignal) {
    const { queue, store } = this.options;
    const result = await abortable(queue.enqueue(task, { priority: INGEST_PRIORITY }), signal);
    if (await done()) return result;
    await queue.forgetTask(task);
    const again = await abortable(queue.enqueue(task, { priority: INGEST_PRIORITY }), signal);
    if (!(await done()))
      throw new WmarkError(
        'INGEST_FAILED',
        `a worker reported ${task.outputPrefix} done, but its output is not in ${store.location} (do the workers use this store as --media?)`,
      );
    return again;
  }

  async normalise(video: VideoRecord, input: string, report: JobReporter, signal?: AbortSignal): Promise<Partial<VideoRecord>> {
    const { store, encode } = this.options;
    const prefix = mediaKeys.video(video.id);
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
        ...(this.options.bands ? { band: { encode: { preset: encode.preset, crf: encode.crf } } } : {}),
      };
      const made = await this.onFarm(task, () => store.exists(mediaKeys.workingSegment(video.id, 0)), signal);
      const durations = segmentDurations(made.segments, made.frames, plan.fps, plan.lead);
      report(totalMs, totalMs, 'normalising on the render farm');
      if (video.enableForensic) await this.prepare(video, durations, encode, report, signal);
      await store.deletePrefix(source);
      return { status: 'INGESTED', segments: durations, timeOrigin: made.timeOrigin, durationSeconds: Number(durations.reduce((a, b) => a + b, 0).toFixed(6)) };
    } catch (error) {
      // Interrupted (serve stopping) or a dependency away: the tasks stay queued and what the workers stored stays, for
      // the resumed job.
      if (!leavesJobQueued(error)) await store.deletePrefix(`${prefix}/`).catch(() => undefined);
      throw error;
    }
  }

  /** One task per segment, all queued at once: every worker of the farm takes a share of the title. */
  private async prepare(video: VideoRecord, durations: number[], encode: EncodeOptions, report: JobReporter, signal?: AbortSignal): Promise<void> {
    const { store, secret } = this.options;
    const fps = video.fpsNum! / video.fpsDen!;
    const forensicPrefix = mediaKeys.forensic(video.id);
    const patterns = segmentPatterns(secret, video.id, durations, fps, video.forensicLayout ?? undefined);
    const stage = forensicStage(video.forensicLayout);
    let done = 0;
    report(0, durations.length, stage);
    const measures: SegmentMeasure[] = await Promise.all(
      patterns.map(async ({ split, grids, halves }, index) => {
        const task: ForensicTask = {
          kind: 'forensic-variant',
          version: VERSION,
          input: mediaKeys.workingSegment(video.id, index),
          outputPrefix: forensicPrefix,
          index,
          width: video.width!,
          height: video.height!,
          gop: framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! }),
          hasAudio: video.hasAudio,
          encode: { preset: encode.preset, crf: encode.crf },
          split,
          grids: grids.map((g) => Array.from(g) as (1 | -1)[]),
          ...(halves ? { halves } : {}),
        };
        const key = measureKey(forensicPrefix, index);
        await this.onFarm(task, () => store.exists(key), signal);
        const measure = decodeMeasure(await store.read(key));
        if (!measure || measure.slots !== grids.length)
          throw new WmarkError('INGEST_FAILED', `the forensic measurement ${key} a worker stored is not one of ${grids.length} slot(s)`);
        report(++done, durations.length, stage);
        return measure;
      }),
    );
    const files = forensicFiles(durations, fps, measures);
    await store.put(mediaKeys.forensicFile(video.id, SIDECAR_NAME), files.sidecar);
    await store.put(mediaKeys.forensicFile(video.id, LAYOUT_NAME), files.layout);
    // The measurements only carried the sidecar's parts here: an embedded ingest's folder has none.
    await store.deletePrefix(`${forensicPrefix}/measure_`);
  }
}
