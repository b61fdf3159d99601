// The engine's side of the render farm (issue 11): with `wmark serve --queue`, a watermark's segment renders become
// SegmentTasks on the Redis queue instead of local ffmpeg runs. Workers read and write the shared media store: serve's
// --media (engine.media), or else the data folder's media folder through a shared mount (`wmark worker --media
// <data>/media`). Either way a task names its files by their path relative to the media folder.
import { stat } from 'node:fs/promises';
import type { ConnectedWorker, SegmentQueue } from '../cluster/segment-queue.js';
import { redactQueueUrl } from '../cluster/queue-url.js';
import { fontSha256, TASK_FONT_FILE, type SegmentTask } from '../cluster/segment-task.js';
import type { TextFile } from '../core/plan/text-drawing.js';
import { WmarkError } from '../core/errors.js';
import { VERSION } from '../version.js';
import type { Engine } from './engine.js';
import { mediaKey } from './media-publish.js';
import { RenderScheduler, type RenderUrgency } from './render-scheduler.js';

/** Segment renders one serve keeps waiting on the farm at once (each is a queued task, not a local process). */
export const FARM_WAITING_RENDERS = 256;

/**
 * Watermark jobs one serve runs at once on a farm. A job there only waits on its tasks, and renders its opening one
 * segment after the other, so with short videos only many jobs at once keep many workers busy.
 */
export const FARM_WATERMARK_JOBS = 64;

/** BullMQ priorities (1 first): a segment a player waits for, then render-ahead, then full renders. */
export const FARM_PRIORITY: Record<RenderUrgency, number> = { now: 1, ahead: 2, background: 3 };

/** One segment render for the farm: local paths under the media folder, and the drawing with the font by its task name. */
export interface FarmRender {
  input: string;
  output: string;
  drawing: { graph: string; files: TextFile[] };
  gop: number;
  hasAudio: boolean;
}

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
export type PublicFarmStatus = Pick<FarmStatus, 'reachable' | 'depth'> & { workers: { version?: string }[] | null };

export function publicFarmStatus(status: FarmStatus): PublicFarmStatus {
  return { reachable: status.reachable, depth: status.depth, workers: status.workers && status.workers.map((w) => ({ version: w.version })) };
}

/** A status page must answer while Redis is down (its client waits for the reconnect instead of failing). */
export const STATUS_TIMEOUT_MS = 2_000;

export interface SegmentFarm {
  /** The drawtext font's name in a task's filtergraph (each worker links its own font there). */
  readonly fontName: string;
  /** Renders one segment on a worker; resolves once the output file is in place. */
  render(job: FarmRender, signal?: AbortSignal, urgency?: RenderUrgency): Promise<void>;
  /** Drops the tasks for these outputs that no worker has taken yet (their watermark was deleted). */
  discard(outputs: string[]): Promise<void>;
  status(): Promise<FarmStatus>;
  close(): Promise<void>;
}

/**
 * Gives the engine a farm: segment renders go to `queue`, and the render scheduler only bounds how many this process
 * waits on at once (the farm's workers, not this machine's cores, do the work). Call before any render starts.
 */
export async function attachSegmentFarm(engine: Engine, queue: SegmentQueue, url: string): Promise<SegmentFarm> {
  const media = engine.media?.location ?? engine.paths.media;
  const font = await fontSha256(engine.tools.font.path);
  const keyOf = (file: string): string => mediaKey(engine.paths.media, file);
  const exists = (file: string): Promise<boolean> => (engine.media ? engine.media.exists(keyOf(file)) : isFile(file));
  const farm: SegmentFarm = {
    fontName: TASK_FONT_FILE,
    async render(job, signal, urgency = 'background') {
      const options = { priority: FARM_PRIORITY[urgency] };
      const task: SegmentTask = {
        version: VERSION,
        input: keyOf(job.input),
        output: keyOf(job.output),
        filterScript: job.drawing.graph,
        textFiles: job.drawing.files,
        fontSha256: font,
        encode: { preset: engine.encode.preset, crf: engine.encode.crf },
        gop: job.gop,
        hasAudio: job.hasAudio,
      };
      await untilAborted(queue.enqueue(task, options), signal);
      // A result remembered from before the output was deleted (the same watermark made again): render it anew.
      if (!(await exists(job.output))) {
        await queue.forget(task.output);
        await untilAborted(queue.enqueue(task, options), signal);
        if (!(await exists(job.output))) {
          const ask = engine.media ? 'do the workers use the same --media (and --s3-endpoint)?' : 'do the workers mount this folder as --media?';
          throw new WmarkError('WATERMARK_FAILED', `a worker reported ${task.output} done, but it is not in ${media} (${ask})`);
        }
      }
    },
    discard: (outputs) => queue.discard(outputs),
    async status() {
      const base = { url: redactQueueUrl(url), media };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), STATUS_TIMEOUT_MS);
      });
      const asked = Promise.all([queue.counts(), queue.workers()]).catch(() => undefined);
      const answer = await Promise.race([asked, timeout]).finally(() => clearTimeout(timer));
      if (!answer) return { ...base, reachable: false, depth: null, workers: null };
      const [counts, workers] = answer;
      return { ...base, reachable: true, depth: { waiting: counts.waiting + counts.prioritized + counts.delayed, active: counts.active }, workers };
    },
    close: () => queue.close(),
  };
  engine.farm = farm;
  engine.renders = new RenderScheduler(FARM_WAITING_RENDERS, { remote: true });
  return farm;
}

function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** Stops waiting when `signal` aborts (CANCELLED); the task itself stays queued, and asking again joins it. */
export function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new WmarkError('CANCELLED', 'render cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new WmarkError('CANCELLED', 'render cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
