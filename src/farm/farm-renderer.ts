// Segment renders on the render farm: each becomes a segment task on the Redis queue, which a `wmark worker` on any
// machine renders from the media store into the media store (serve's --media, or the data folder's media folder the
// workers mount). This process only waits, at most FARM_WAITING_RENDERS at a time, most urgent first.
import { WmarkError } from '../core/errors.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import type { BandStats } from '../engine/band/band-render.js';
import { mediaKeys } from '../engine/data-folder/layout.js';
import { type RenderListener, RenderScheduler, type RenderUrgency } from '../engine/render/render-scheduler.js';
import type { FarmTasks, RendererHealth, SegmentRender, SegmentRenderer } from '../engine/render/segment-renderer.js';
import type { FolderMediaStore } from '../media/folder-store.js';
import type { MediaStore } from '../media/media-store.js';
import { VERSION } from '../version.js';
import { abortable } from './abortable.js';
import { redactQueueUrl } from './queue-url.js';
import type { ConnectedWorker, TaskQueue } from './task-queue.js';
import { bandTask } from './tasks/band-task.js';
import { fontSha256, type SegmentRunResult, type SegmentTask, TASK_FONT_FILE } from './tasks/segment-task.js';

/** Segment renders one serve keeps waiting on the farm at once (each is a queued task, not a local process). */
const FARM_WAITING_RENDERS = 256;

/**
 * Watermark jobs one serve runs at once on a farm. A job there only waits on its tasks, so with short videos only many
 * jobs at once keep many workers busy.
 */
const FARM_WATERMARK_JOBS = 64;

/** Ingest jobs one serve runs at once on a farm: each only waits on its tasks, so many titles go side by side. */
const FARM_INGEST_JOBS = 16;

/** BullMQ priorities (1 first): a segment a player waits for, then render-ahead, then full renders. */
export const FARM_PRIORITY: Record<RenderUrgency, number> = { now: 1, ahead: 2, background: 3 };

/** Uploads of a video's folder at once, when a shared store needs what only the data folder has. */
const TRANSFERS_AT_ONCE = 4;

export interface FarmStatus {
  /** The queue's URL without its password. */
  url: string;
  /** False when Redis did not answer within STATUS_TIMEOUT_MS (depth and workers are then unknown: null). */
  reachable: boolean;
  /** Tasks waiting for a worker (prioritised or not, and delayed retries), and tasks being rendered. */
  depth: { waiting: number; active: number } | null;
  /** The workers connected now: id (host:pid:random) and wmark version. */
  workers: ConnectedWorker[] | null;
  /** What workers must use as their --media: serve's store, or the folder they must mount. */
  media: string;
}

/** What /healthz tells a peer on another machine: the queue's health, without where things are or who the workers are. */
type PublicFarmStatus = Pick<FarmStatus, 'reachable' | 'depth'> & { workers: { version?: string }[] | null };

function publicFarmStatus(status: FarmStatus): PublicFarmStatus {
  return { reachable: status.reachable, depth: status.depth, workers: status.workers?.map((w) => ({ version: w.version })) ?? null };
}

/** A status page must answer while Redis is down (its client waits for the reconnect instead of failing). */
export const STATUS_TIMEOUT_MS = 2_000;

export interface FarmRendererOptions {
  queue: TaskQueue;
  /** The queue's URL, for status pages (shown without its password). */
  url: string;
  /** Where tasks read and write: the store the workers share. */
  media: MediaStore;
  /** The data folder's own media folder: what a shared store lacks is published from there. */
  folder: FolderMediaStore;
  fontFile: string;
  encode: EncodeOptions;
  /** The engine's clock, which the scheduler of waiting renders reads. */
  now: () => number;
}

export class FarmRenderer implements SegmentRenderer {
  readonly concurrency = { watermarkJobs: FARM_WATERMARK_JOBS, ingestJobs: FARM_INGEST_JOBS };
  private readonly scheduler: RenderScheduler;
  /** Segments the workers rendered as a band, and band renders they rendered in full instead, by reason. */
  private readonly bands: BandStats = { rendered: 0, fallbacks: {} };
  /** Videos whose working media this process has made sure the store holds. */
  private readonly published = new Map<string, Promise<void>>();

  private constructor(
    private readonly options: FarmRendererOptions,
    private readonly fontSha256: string,
  ) {
    this.scheduler = new RenderScheduler(FARM_WAITING_RENDERS, { remote: true, now: options.now });
  }

  static async open(options: FarmRendererOptions): Promise<FarmRenderer> {
    return new FarmRenderer(options, await fontSha256(options.fontFile));
  }

  /** What workers must use as --media: the shared store, or the folder they must mount. */
  get mediaLocation(): string {
    return this.options.media.location;
  }

  /**
   * A video ingested before serve had its shared store has its working media (segments, forensic variants, layout
   * and sidecar) only in the data folder: each object the store lacks is published there, once per video and process.
   */
  useSources(videoId: string): Promise<void> {
    const { media, folder } = this.options;
    if (media.location === folder.location) return Promise.resolve();
    let publishing = this.published.get(videoId);
    if (!publishing) {
      publishing = publishFolder(folder, media, mediaKeys.video(videoId));
      this.published.set(videoId, publishing);
      publishing.catch(() => this.published.delete(videoId));
    }
    return publishing;
  }

  render(job: SegmentRender, urgency: RenderUrgency, signal?: AbortSignal): Promise<void> {
    return this.scheduler.render(job.output, urgency, job.group, (_threads, s, u) => this.onFarm(job, u, s), signal);
  }

  private async onFarm(job: SegmentRender, urgency: RenderUrgency, signal: AbortSignal): Promise<void> {
    const { queue, media, encode } = this.options;
    const options = { priority: FARM_PRIORITY[urgency] };
    // The drawing travels in the task and names the font as each worker links it in its scratch folder.
    const drawing = job.drawing(TASK_FONT_FILE);
    const task: SegmentTask = {
      version: VERSION,
      input: job.input,
      output: job.output,
      filterScript: drawing.graph,
      textFiles: drawing.files,
      ...(drawing.images.length ? { images: drawing.images } : {}),
      fontSha256: this.fontSha256,
      encode: { preset: encode.preset, crf: encode.crf },
      gop: job.gop,
      hasAudio: job.hasAudio,
      ...(job.band ? { band: bandTask(job.band) } : {}),
    };
    this.count(await abortable(queue.enqueue(task, options), signal));
    // A result remembered from before the output was deleted (the same watermark made again): render it anew.
    if (!(await media.exists(job.output))) {
      await queue.forget(task.output);
      this.count(await abortable(queue.enqueue(task, options), signal));
      if (!(await media.exists(job.output))) {
        const ask =
          media.location === this.options.folder.location
            ? 'do the workers mount this folder as --media?'
            : 'do the workers use the same --media (and --s3-endpoint)?';
        throw new WmarkError('WATERMARK_FAILED', `a worker reported ${task.output} done, but it is not in ${media.location} (${ask})`);
      }
    }
  }

  /** A worker's band render, counted as the local renderer counts its own (a result already there is not counted). */
  private count(result: SegmentRunResult): void {
    if (!result.rendered || !result.band) return;
    if (result.band === 'spliced') this.bands.rendered++;
    else this.bands.fallbacks[result.band.fallback] = (this.bands.fallbacks[result.band.fallback] ?? 0) + 1;
  }

  bandStats(): BandStats {
    return { rendered: this.bands.rendered, fallbacks: { ...this.bands.fallbacks } };
  }

  discard(outputs: string[]): Promise<void> {
    return this.options.queue.discard(outputs);
  }

  /** Workers write through the store (whole objects only): nothing of theirs is left in a folder here. */
  async tidy(): Promise<void> {}

  depth() {
    return this.scheduler.depth();
  }

  stats() {
    return { ...this.scheduler.stats, joined: this.scheduler.shared.joined };
  }

  onRendered(listener: RenderListener): () => void {
    return this.scheduler.onRendered(listener);
  }

  /** The queue's tasks: waiting (prioritized and delayed ones too) and active; undefined while Redis does not answer. */
  async taskDepth(): Promise<FarmTasks | undefined> {
    return (await this.status()).depth ?? undefined;
  }

  async status(): Promise<FarmStatus> {
    const { queue, url, media } = this.options;
    const base = { url: redactQueueUrl(url), media: media.location };
    // Known to be down: answered at once, not after a wait for a reconnect.
    if (!queue.health.isUp) return { ...base, reachable: false, depth: null, workers: null };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), STATUS_TIMEOUT_MS);
    });
    const asked = Promise.all([queue.counts(), queue.workers()]).catch(() => undefined);
    const answer = await Promise.race([asked, timeout]).finally(() => clearTimeout(timer));
    if (!answer) return { ...base, reachable: false, depth: null, workers: null };
    const [counts, workers] = answer;
    return { ...base, reachable: true, depth: { waiting: counts.waiting + counts.prioritized + counts.delayed, active: counts.active }, workers };
  }

  async health(): Promise<RendererHealth> {
    const status = await this.status();
    return { reachable: status.reachable, detail: { ...status }, publicDetail: { ...publicFarmStatus(status) } };
  }

  /** Stops waiting on the queue; tasks already queued stay in Redis for the next start. */
  close(): Promise<void> {
    return this.options.queue.close();
  }
}

/** Puts every object of a folder of `from` that `to` lacks into `to`. */
async function publishFolder(from: FolderMediaStore, to: MediaStore, folder: string): Promise<void> {
  const prefix = `${folder}/`;
  const there = new Set(await to.list(prefix));
  const missing = (await from.list(prefix)).filter((key) => !there.has(key));
  for (let i = 0; i < missing.length; i += TRANSFERS_AT_ONCE) {
    await Promise.all(missing.slice(i, i + TRANSFERS_AT_ONCE).map((key) => to.putFile(key, from.fileOf(key))));
  }
}
