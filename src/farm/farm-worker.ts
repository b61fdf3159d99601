// A render-farm worker: takes tasks from the BullMQ queue, N at a time (segment renders, ingest transcodes, forensic
// preparation of a segment), runs them from and into the shared media store, and refuses (failing the job with the
// reason) what it must not run: a task from another wmark version, or a render laid out with another font. A worker
// whose ffmpeg or font cannot render refuses to start at all. While the store does not answer it takes no task, and a
// task it could not finish for that goes back to the queue; stopping, it gives the tasks in hand a bounded time.

import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { changeLine, type Dependency } from '../core/dependency.js';
import { isUnavailable, isWmarkError, WmarkError } from '../core/errors.js';
import type { BandStats } from '../engine/band/band-render.js';
import { type BandSupport, bandSupport } from '../engine/band/band-support.js';
import { renderToolProblems } from '../ffmpeg/render-capabilities.js';
import type { ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../media/media-store.js';
import { VERSION } from '../version.js';
import { redactQueueUrl } from './queue-url.js';
import { connectRedis } from './redis-connection.js';
import { watchRedis } from './redis-health.js';
import { connectedWorkers, failureReason, TASK_QUEUE, workerName } from './task-queue.js';
import { WorkerBand } from './tasks/band-task.js';
import { type FarmResult, type FarmTask, parseFarmTask, taskKind, taskOutput } from './tasks/farm-task.js';
import { type ForensicTask, runForensicTask } from './tasks/forensic-task.js';
import { type IngestTask, runIngestTask } from './tasks/ingest-task.js';
import { fontSha256, ImageCache, runSegmentTask, type SegmentTask } from './tasks/segment-task.js';

export interface FarmWorkerOptions {
  queueUrl: string;
  store: MediaStore;
  runner: ProcessRunner;
  /** The ffmpeg the runner runs and the drawtext font, checked before any work is taken. */
  tools: { ffmpeg: string; font: string };
  /** Tasks rendered at once. */
  concurrency?: number;
  /** ffmpeg threads per render (default: this machine's cores shared among the concurrent renders). */
  threads?: number;
  /** This worker's version (default: the running wmark's); tasks planned by another version are refused. */
  version?: string;
  /** A task's lock lasts this long unless renewed; a worker that died is noticed about this long after. */
  lockMs?: number;
  /** How often this worker looks for tasks whose worker died (default: half of lockMs). */
  stalledCheckMs?: number;
  tmpDir?: string;
  log?: (line: string) => void;
  connectTimeoutMs?: number;
  /** Band rendering on this worker (default: as this machine finds the patched x264 and WMARK_BAND). */
  band?: BandSupport;
  /**
   * The worker's clock: its tasks' timings, when its dependencies went away, and the delays of tasks it hands back
   * (default: the wall clock). Its processes' stall watch reads the runner's own.
   */
  now?: () => number;
}

export interface RunningFarmWorker {
  /** host:pid:random, reported with every result. */
  id: string;
  /**
   * Stops taking tasks and gives the ones in hand up to `timeoutMs` (default 10 s; 0 with `force`). What is still
   * running then is stopped and goes back to the queue (or, with Redis away, to another worker when its lock expires).
   * Resolves within about two seconds after that, whatever Redis and the store do.
   */
  close(options?: { force?: boolean; timeoutMs?: number }): Promise<void>;
  /** Segments this worker rendered as a band alone, and band renders it rendered in full instead, by reason. */
  bandStats(): BandStats;
}

/** A task passed on waits this long before a worker takes it again (the one that passed it on may be the next). */
const PASS_ON_DELAY_MS = 1_000;
/** A task stopped because the store did not answer waits this long in the queue before a worker takes it again. */
const STORE_RETRY_MS = 2_000;
/** How long the tasks in hand get to finish when the worker stops, unless told otherwise. */
const SHUTDOWN_TIMEOUT_MS = 10_000;
/** Once stopped, a task gets this long to go back to the queue; then BullMQ this long to let go of Redis. */
const HAND_BACK_MS = 1_000;
const CLOSE_WAIT_MS = 1_000;
/** Worker errors about the connection itself: the queue's monitor reports those once, lost and back. */
const CONNECTION_ERROR = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed|Stream isn't writeable/i;

/** True when `work` settles within `ms`. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/** What the log says of a task done: rendered (as a band alone, spliced), or already there. */
function doneLine(what: string, result: { rendered?: boolean; ms: number; band?: unknown }): string {
  if (result.rendered === false) return `already there: ${what}`;
  return `rendered ${what}${result.band === 'spliced' ? ' (band)' : ''} in ${result.ms} ms`;
}

/** The ordinary failure of a task this worker must not render: no retries, the reason for whoever waits. */
function refuse(error: WmarkError): UnrecoverableError {
  return new UnrecoverableError(failureReason(error));
}

/** What a task needs of this worker beyond the task: where to work, when to stop, and a segment's threads and images. */
interface TaskSetting {
  tmpDir?: string;
  signal: AbortSignal;
  now: () => number;
}

/** Runs a task of any kind; what it made, and whether this run made it (false: it was already in the store). */
function runTask(
  task: FarmTask,
  options: Pick<FarmWorkerOptions, 'store' | 'runner' | 'tools'>,
  common: TaskSetting,
  segment: { threads: number; images: ImageCache; band: WorkerBand },
): Promise<Omit<FarmResult<FarmTask>, 'worker'> & { rendered?: boolean; ms: number }> {
  switch (taskKind(task)) {
    case 'ingest':
      return runIngestTask(task as IngestTask, options.store, options.runner, { ...common, threads: segment.threads, band: segment.band });
    case 'forensic-variant':
      return runForensicTask(task as ForensicTask, options.store, options.runner, common);
    default:
      return runSegmentTask(task as SegmentTask, options.store, options.runner, { ...common, fontFile: options.tools.font, ...segment });
  }
}

/**
 * Whether this worker may render a task: planned by its own version (checked first: a newer serve's task may be of a
 * kind this worker cannot even read) and laid out with its font. Otherwise the reason to pass it on, and a few words
 * for the log; a task that does not parse is refused outright.
 */
function admit(
  data: unknown,
  worker: { id: string; version: string; ownFont: string | undefined; font: string },
): { task: FarmTask } | { refused: WmarkError; because: string } {
  const planned: unknown = (data as { version?: unknown } | undefined)?.version;
  if (typeof planned === 'string' && planned !== worker.version) {
    return {
      because: `planned by wmark ${planned}, this worker is ${worker.version}`,
      refused: new WmarkError(
        'WORKER_VERSION_MISMATCH',
        `worker ${worker.id} runs wmark ${worker.version} and refuses a task planned by wmark ${planned} (its output could differ)`,
      ),
    };
  }
  let task: FarmTask;
  try {
    task = parseFarmTask(data);
  } catch (error) {
    throw refuse(error as WmarkError);
  }
  const fontSha = 'fontSha256' in task ? task.fontSha256 : undefined;
  if (fontSha && fontSha !== worker.ownFont) {
    return {
      because: 'another font',
      refused: new WmarkError(
        'WORKER_FONT_MISMATCH',
        `worker ${worker.id} draws with ${worker.font}, not the font the task was laid out with (sha256 ${fontSha.slice(0, 12)}…)`,
      ),
    };
  }
  return { task };
}

/**
 * Back to the queue, not failed: a task this worker stopped (it is stopping) or could not finish because the store did
 * not answer. Neither is the task's fault, so neither costs one of its tries.
 */
async function handBack(job: Job, token: string | undefined, delayMs: number, now: () => number): Promise<never> {
  if (token) await within(delayMs > 0 ? job.moveToDelayed(now() + delayMs, token) : job.moveToWait(token), HAND_BACK_MS);
  throw new DelayedError();
}

/**
 * A task this worker must not render goes back to the queue for another worker (a farm mid-upgrade has workers of both
 * versions); only once every connected worker has refused it does it fail, with this worker's reason.
 */
async function passOn(
  job: Job,
  token: string | undefined,
  why: WmarkError,
  worker: { id: string; peers: Queue; log: (line: string) => void; now: () => number },
): Promise<never> {
  const refusedBy = new Set<string>([...(Array.isArray(job.data?.refusedBy) ? (job.data.refusedBy as string[]) : []), worker.id]);
  const others = (await connectedWorkers(worker.peers).catch(() => [])).filter((w) => !refusedBy.has(w.id));
  if (others.length === 0 || !token) throw refuse(why);
  await job.updateData({ ...job.data, refusedBy: [...refusedBy] });
  await job.moveToDelayed(worker.now() + PASS_ON_DELAY_MS, token);
  worker.log(`passed ${String(job.data?.output ?? job.data?.outputPrefix)} on to another worker`);
  throw new DelayedError();
}

/** A worker whose ffmpeg or font cannot render refuses to start; the SHA-256 of its font otherwise. */
async function checkTools(options: Pick<FarmWorkerOptions, 'runner' | 'tools'>): Promise<string> {
  const problems = await renderToolProblems(options.runner, options.tools);
  if (problems.length) {
    throw new WmarkError('WORKER_UNUSABLE', `this worker cannot render segments: ${problems.join('; ')}`, { details: problems });
  }
  return fontSha256(options.tools.font);
}

/**
 * Says each change of the queue's Redis and of what the store needs (lost, back) once, and takes no task while the store
 * does not answer: it could only go back to the queue. Returns what unsubscribes.
 */
function watchDependencies(worker: Worker, queue: Dependency, store: MediaStore, log: (line: string) => void, now: () => number): (() => void)[] {
  return [
    queue.subscribe((status, away) => log(changeLine(status, now(), away))),
    ...store.dependencies.map((d) =>
      d.subscribe((status, away) => {
        log(changeLine(status, now(), away));
        const storeUp = store.dependencies.every((s) => s.status().up);
        void (storeUp ? worker.resume() : worker.pause(true)).catch(() => undefined);
      }),
    ),
  ];
}

export async function startFarmWorker(options: FarmWorkerOptions): Promise<RunningFarmWorker> {
  const id = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const version = options.version ?? VERSION;
  const log = options.log ?? (() => undefined);
  const now = options.now ?? Date.now;
  const ownFont = await checkTools(options);
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const threads = Math.max(1, options.threads ?? Math.floor(os.availableParallelism() / concurrency));
  const lockMs = options.lockMs ?? 30_000;
  const connection: Redis = await connectRedis(options.queueUrl, { timeoutMs: options.connectTimeoutMs });
  const queueHealth = watchRedis(connection, redactQueueUrl(options.queueUrl), { now });
  /** Aborted when the tasks in hand must stop (the worker stops and their time is up). */
  const stopping = new AbortController();
  /** The tasks being run now. */
  const inHand = new Set<Promise<unknown>>();
  const images = new ImageCache(options.store, await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'wmark-images-')));
  const band = new WorkerBand(options.band ?? (await bandSupport()), log);

  // Lists the other workers, to pass on a task this one must not render (see passOn).
  const peers = new Queue(TASK_QUEUE, { connection });
  peers.on('error', () => undefined);

  const render = async (job: Job, token?: string): Promise<FarmResult<FarmTask>> => {
    const label = String(job.data?.output ?? job.data?.outputPrefix ?? job.id);
    const admitted = admit(job.data, { id, version, ownFont, font: options.tools.font });
    if ('refused' in admitted) {
      log(`refused ${label}: ${admitted.because}`);
      return passOn(job, token, admitted.refused, { id, peers, log, now });
    }
    const { task } = admitted;
    const what = `${taskKind(task) === 'segment' ? '' : `${taskKind(task)} `}${taskOutput(task)}`;
    const running = runTask(task, options, { tmpDir: options.tmpDir, signal: stopping.signal, now }, { threads, images, band });
    inHand.add(running);
    try {
      const result = await running;
      log(doneLine(what, result));
      return { ...result, worker: id } as FarmResult<FarmTask>;
    } catch (error) {
      if (stopping.signal.aborted) {
        log(`stopped ${what}: back to the queue`);
        return handBack(job, token, 0, now);
      }
      // The store's monitor says so once; the task waits in the queue, and this worker takes none until it is back.
      if (isUnavailable(error)) return handBack(job, token, STORE_RETRY_MS, now);
      log(`failed ${what}: ${isWmarkError(error) ? error.message.split('\n')[0] : String(error)}`);
      // ffmpeg gone from under us: every task would fail here, none is this task's fault.
      if (isWmarkError(error) && error.code === 'FFMPEG_NOT_FOUND') throw refuse(new WmarkError('WORKER_UNUSABLE', `worker ${id}: ${error.message}`));
      throw new Error(failureReason(error));
    } finally {
      inHand.delete(running);
    }
  };

  const worker = new Worker(TASK_QUEUE, render, {
    connection,
    // Named, so serve can list the workers connected to the queue and their versions (TaskQueue.workers()).
    name: workerName(id, version),
    concurrency,
    lockDuration: lockMs,
    stalledInterval: options.stalledCheckMs ?? Math.max(500, Math.floor(lockMs / 2)),
    // A task whose worker died twice is more likely the task's fault (it kills ffmpeg, or the machine) than bad luck.
    maxStalledCount: 2,
    autorun: false,
  });
  // Connection trouble is the monitors' to report, once lost and once back; anything else once per message in a row.
  let lastError = '';
  worker.on('error', (error) => {
    if (!queueHealth.isUp || CONNECTION_ERROR.test(error.message) || error.message === lastError) return;
    lastError = error.message;
    log(`queue: ${error.message}`);
  });
  void worker.run().catch((error: unknown) => log(`worker stopped: ${(error as Error).message}`));
  await worker.waitUntilReady();
  const unwatch = watchDependencies(worker, queueHealth, options.store, log, now);
  log(
    `worker ${id} (wmark ${version}) takes up to ${concurrency} task(s) at once, ${threads} ffmpeg thread(s) each, from ${TASK_QUEUE}; media in ${options.store.location}`,
  );
  band.announce();

  return {
    id,
    bandStats: () => ({ rendered: band.stats.rendered, fallbacks: { ...band.stats.fallbacks } }),
    close: async ({ force = false, timeoutMs = force ? 0 : SHUTDOWN_TIMEOUT_MS } = {}) => {
      for (const off of unwatch) off();
      // Takes no more tasks from now on; resolves once those in hand are done and BullMQ let go of Redis.
      const closing = worker.close().catch(() => undefined);
      if (!(await within(Promise.allSettled([...inHand]), timeoutMs))) {
        log(`stopping ${inHand.size} task(s) still running: they go back to the queue`);
        stopping.abort();
        await within(Promise.allSettled([...inHand]), HAND_BACK_MS * 3);
      }
      // Redis may be away: BullMQ's own close would wait for it.
      await within(closing, CLOSE_WAIT_MS);
      void worker.close(true).catch(() => undefined);
      queueHealth.close();
      void peers.close().catch(() => undefined);
      await images.close();
      connection.disconnect();
    },
  };
}
