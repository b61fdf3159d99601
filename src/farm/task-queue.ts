// The render farm's queue of tasks (segment renders, ingest transcodes, forensic preparation), on BullMQ in Redis:
// serve enqueues a task and awaits its result; workers on any machine take tasks (farm-worker.ts). A task's job id
// is derived from its output key, so asking twice for the same output while it is queued or running makes one job,
// and a failed one is retried when asked for again.
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { ERRORS, type ErrorCode, isWmarkError, WmarkError } from '../core/errors.js';
import { redactQueueUrl } from './queue-url.js';
import { connectRedis, REDIS_COMMAND_DEADLINE_MS } from './redis-connection.js';
import { type RedisHealth, watchRedis } from './redis-health.js';
import { type FarmResult, type FarmTask, farmJobId, segmentJobId, taskKind, taskOutput } from './tasks/farm-task.js';

export { segmentJobId } from './tasks/farm-task.js';

export const TASK_QUEUE = 'wmark-segments';
/** How long close() waits for Redis before it just disconnects. */
const CLOSE_WAIT_MS = 2_000;

export interface TaskQueueOptions {
  /** Tries per task (a worker's crash is not a try: BullMQ's stalled-job check hands the task to another worker). */
  attempts?: number;
  /** How often waiting callers also look at their jobs' state, in case an event was missed. */
  pollMs?: number;
  /** Connecting at start gives up after this long (QUEUE_UNREACHABLE). */
  connectTimeoutMs?: number;
  /** The clock of when Redis stopped answering (default: the wall clock). */
  now?: () => number;
}

export interface EnqueueOptions {
  /** 1 is first; without one, tasks run in the order they came (after every prioritised one). */
  priority?: number;
}

/** A worker connected to the queue: its id (host:pid:random) and the wmark version it runs (tasks of another are refused). */
export interface ConnectedWorker {
  id: string;
  version?: string;
}

/** The BullMQ worker name a worker connects with: its id and version, which Redis' client list then shows. */
export function workerName(id: string, version: string): string {
  return `${id}@${version.replace(/[^\w.+-]/g, '_')}`;
}

/** The workers connected to `queue` (BullMQ's view of it), from their names in Redis' client list. */
export async function connectedWorkers(queue: Queue): Promise<ConnectedWorker[]> {
  const clients = (await queue.getWorkers()) as { rawname?: string }[];
  const found = new Map<string, ConnectedWorker>();
  for (const c of clients) {
    const m = /:w:([^@]+)(?:@(\S+))?$/.exec(c.rawname ?? '');
    if (m) found.set(m[1]!, { id: m[1]!, ...(m[2] ? { version: m[2] } : {}) });
  }
  return [...found.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** A job's failure as text that keeps its catalogue code: `CODE: message`. */
export function failureReason(error: unknown): string {
  if (isWmarkError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Back from a failure's text to the error it was, when it carries a catalogue code. */
export function errorFromReason(reason: string, output: string, fallback: ErrorCode = 'WATERMARK_FAILED'): WmarkError {
  const m = /^([A-Z][A-Z0-9_]+): ([\s\S]*)$/.exec(reason);
  if (m && m[1]! in ERRORS) return new WmarkError(m[1] as ErrorCode, m[2]!);
  return new WmarkError(fallback, `${fallback === 'WATERMARK_FAILED' ? 'rendering' : 'preparing'} ${output} failed: ${reason}`);
}

interface Waiter {
  task: FarmTask;
  options: EnqueueOptions;
  promises: { resolve: (result: unknown) => void; reject: (error: unknown) => void }[];
}

export class TaskQueue {
  private readonly waiters = new Map<string, Waiter>();
  private poller?: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly clients: Redis[],
    private readonly options: Required<Pick<TaskQueueOptions, 'attempts' | 'pollMs'>>,
    /** Whether Redis answers now, as the connection that queues tasks sees it. */
    readonly health: RedisHealth,
  ) {
    events.on('completed', ({ jobId, returnvalue }) => this.settle(jobId, { result: parseResult(returnvalue) }));
    events.on('failed', ({ jobId, failedReason }) => void this.onFailed(jobId, failedReason));
    // Reconnects are ioredis' business; an error event without a listener would end the process.
    events.on('error', () => undefined);
    queue.on('error', () => undefined);
    // Connected before construction, so every later 'ready' is a reconnect: Redis may have restarted empty, so every
    // task still awaited is added again (a job that survived is found by its id, not duplicated).
    clients[0]!.on('ready', () => void this.resubmitAll());
  }

  private async resubmitAll(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) {
      if (this.closed) return;
      await this.submit(jobId, { retryFailed: false }).catch(() => undefined);
    }
  }

  /** Connects to Redis at `url` (QUEUE_UNREACHABLE when it does not answer). */
  static async open(url: string, options: TaskQueueOptions = {}): Promise<TaskQueue> {
    const timeoutMs = options.connectTimeoutMs ?? 5_000;
    const queueClient = await connectRedis(url, { timeoutMs, name: 'wmark-queue', commandTimeoutMs: REDIS_COMMAND_DEADLINE_MS });
    const eventsClient = await connectRedis(url, { timeoutMs, name: 'wmark-queue-events' }).catch((error: unknown) => {
      queueClient.disconnect();
      throw error;
    });
    const queue = new Queue(TASK_QUEUE, { connection: queueClient });
    const events = new QueueEvents(TASK_QUEUE, { connection: eventsClient });
    // Listening before anything is added, so no completion can slip by unseen.
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    return new TaskQueue(
      queue,
      events,
      [queueClient, eventsClient],
      { attempts: options.attempts ?? 3, pollMs: options.pollMs ?? 10_000 },
      watchRedis(queueClient, redactQueueUrl(url), { now: options.now }),
    );
  }

  /**
   * Queues the task (or joins the job already rendering the same output) and resolves when its output is in the
   * store. Rejects with the worker's reason when the task failed for good (WORKER_VERSION_MISMATCH, FFMPEG_FAILED, ...).
   */
  enqueue<T extends FarmTask>(task: T, options: EnqueueOptions = {}): Promise<FarmResult<T>> {
    if (this.closed) return Promise.reject(new WmarkError('CANCELLED', 'the segment queue is closed'));
    const jobId = farmJobId(task);
    return new Promise<FarmResult<T>>((resolve, reject) => {
      const waiter = this.waiters.get(jobId);
      if (waiter) {
        waiter.promises.push({ resolve: resolve as (result: unknown) => void, reject });
        // The more urgent asker wins: submit() below raises the queued job's priority.
        if (options.priority && !(waiter.options.priority && waiter.options.priority <= options.priority))
          waiter.options = { ...waiter.options, priority: options.priority };
      } else this.waiters.set(jobId, { task, options, promises: [{ resolve: resolve as (result: unknown) => void, reject }] });
      this.poller ??= setInterval(() => void this.poll(), this.options.pollMs);
      this.poller.unref();
      void this.submit(jobId, { retryFailed: true }).catch((error: unknown) => this.settle(jobId, { error }));
    });
  }

  /** Adds the job, or finds it: a finished one settles at once, a failed one is retried when `retryFailed`. */
  private async submit(jobId: string, how: { retryFailed: boolean }): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    const job = await this.queue.add(taskKind(waiter.task), waiter.task, {
      jobId,
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: 1_000 },
      ...(waiter.options.priority ? { priority: waiter.options.priority } : {}),
      // Finished jobs stay a while so late askers find the result; failed ones so their reason can be read.
      removeOnComplete: { age: 3_600, count: 100_000 },
      removeOnFail: { age: 24 * 3_600, count: 100_000 },
    });
    await this.raisePriority(job, waiter.options.priority);
    await this.look(job, how);
  }

  /** A job still waiting for a worker that was queued less urgently (or by another serve) moves up. */
  private async raisePriority(job: Job, priority: number | undefined): Promise<void> {
    if (!priority) return;
    // add() answers with the options given, not the stored job's, when the job already existed.
    const stored = await Job.fromId(this.queue, job.id!);
    if (!stored || (stored.priority > 0 && stored.priority <= priority)) return;
    const state = await stored.getState();
    if (state === 'waiting' || state === 'prioritized') await stored.changePriority({ priority }).catch(() => undefined);
  }

  private async look(job: Job, how: { retryFailed: boolean }): Promise<void> {
    const state = await job.getState();
    if (state === 'completed') {
      const done = (await Job.fromId(this.queue, job.id!)) ?? job;
      this.settle(job.id!, { result: parseResult(done.returnvalue) });
    } else if (state === 'failed') {
      if (how.retryFailed) await job.retry('failed').catch(() => undefined);
      else this.settle(job.id!, { error: taskFailure(job.failedReason ?? 'failed', this.waiters.get(job.id!)?.task ?? (job.data as FarmTask)) });
    }
  }

  /** Catches what events missed: a job whose state moved on, or one that vanished (Redis restarted empty): re-added. */
  private async poll(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) {
      if (this.closed) return;
      try {
        const job = await Job.fromId(this.queue, jobId);
        if (!job) await this.submit(jobId, { retryFailed: false });
        else await this.look(job, { retryFailed: false });
      } catch {
        // Redis unreachable for now: the next round tries again.
      }
    }
  }

  private async onFailed(jobId: string, reason: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    // Only a final failure ends the wait; a failed try with tries left goes back to the queue.
    const job = await Job.fromId(this.queue, jobId).catch(() => undefined);
    if (job && (await job.getState().catch(() => 'unknown')) !== 'failed') return;
    this.settle(jobId, { error: taskFailure(reason, waiter.task) });
  }

  private settle(jobId: string, outcome: { result: FarmResult<FarmTask> } | { error: unknown }): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    this.waiters.delete(jobId);
    for (const p of waiter.promises) {
      if ('result' in outcome) p.resolve(outcome.result);
      else p.reject(outcome.error);
    }
    if (this.waiters.size === 0 && this.poller) {
      clearInterval(this.poller);
      this.poller = undefined;
    }
  }

  /**
   * Drops the finished job that wrote `output`, when that result no longer holds (the object was deleted since, e.g.
   * with its watermark): asking for the output again then renders it instead of settling on the old result.
   */
  forget(output: string): Promise<void> {
    return this.dropFinished(segmentJobId(output));
  }

  /** As forget(), for a task of any kind: its finished job is dropped, so asking again runs it again. */
  forgetTask(task: FarmTask): Promise<void> {
    return this.dropFinished(farmJobId(task));
  }

  private async dropFinished(jobId: string): Promise<void> {
    const job = await Job.fromId(this.queue, jobId);
    if (job && ['completed', 'failed'].includes(await job.getState())) await job.remove();
  }

  /**
   * Removes the jobs for these outputs that wait for a worker (a task being rendered cannot be taken back; its
   * output is removed by whoever awaited it). Whoever awaits a removed job here hears CANCELLED.
   */
  async discard(outputs: string[]): Promise<void> {
    for (const output of outputs) {
      const jobId = segmentJobId(output);
      const job = await Job.fromId(this.queue, jobId);
      if (!job || !['waiting', 'prioritized', 'delayed'].includes(await job.getState())) continue;
      await job.remove();
      this.settle(jobId, { error: new WmarkError('CANCELLED', `the task for ${output} was dropped: its watermark was deleted`) });
    }
  }

  /** Jobs by state, for status pages and tests. */
  counts(): Promise<Record<'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'prioritized', number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized') as Promise<
      Record<'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'prioritized', number>
    >;
  }

  /** The workers connected to the queue now, by id (from Redis' client list; one per worker, however many tasks it runs). */
  workers(): Promise<ConnectedWorker[]> {
    return connectedWorkers(this.queue);
  }

  /** Stops waiting (callers still waiting get CANCELLED); queued jobs stay in Redis for the workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    this.health.close();
    for (const jobId of [...this.waiters.keys()]) this.settle(jobId, { error: new WmarkError('CANCELLED', 'the segment queue was closed') });
    // With Redis down, BullMQ's close waits for a reconnect that may never come: serve's shutdown must not.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([this.events.close(), this.queue.close()]), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
    for (const client of this.clients) client.disconnect();
  }
}

/** A task's failure as the error its waiter gets: a segment's is the watermark's, the others' are the ingest's. */
function taskFailure(reason: string, task: FarmTask): WmarkError {
  return errorFromReason(reason, taskOutput(task), taskKind(task) === 'segment' ? 'WATERMARK_FAILED' : 'INGEST_FAILED');
}

function parseResult(value: unknown): FarmResult<FarmTask> {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as FarmResult<FarmTask>;
    } catch {
      // fall through
    }
  }
  return value as FarmResult<FarmTask>;
}
