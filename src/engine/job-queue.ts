// The job-queue seam: who runs ingest and watermark jobs. This process (`wmark serve`, CLI --wait), a detached
// `wmark job run` process (CLI --no-wait, cli/detached-job-queue.ts), or, for a render farm, workers on other
// machines. Callers only enqueue and watch; jobs report progress through the store, whoever runs them.
import { isInterruption } from '../core/errors.js';
import type { Engine } from './engine.js';
import { runIngestJob } from './ingest.js';
import type { SourcePolicy } from './source-policy.js';
import { isLeaseLive, jobId, LEASE_STALE_MS, type JobKind } from './job-lease.js';
import { MAX_SHARED_RENDERS } from './render-scheduler.js';
import { runWatermarkJob } from './watermark.js';

export interface JobRef {
  kind: JobKind;
  id: string;
}

export interface JobQueue {
  /** Asks for the job to run; returns at once. `immediate` skips the line, for jobs that cost no encode. */
  enqueue(job: JobRef, options?: { immediate?: boolean }): void;
  /** Queues jobs left unfinished by a stopped process; returns how many were found. */
  resume(): number;
  /** Stops taking work; running jobs are cancelled and stay queued for the next start. */
  close(): Promise<void>;
}

/**
 * Runs one job in this process: the result, or undefined when another process holds it. `sourcePolicy` is what the
 * process that runs it lets sources reach: a server's, so an API client's URL is checked again when a resumed ingest
 * downloads it (its address may have changed since it was accepted).
 */
export function runJob(engine: Engine, job: JobRef, signal?: AbortSignal, sourcePolicy?: SourcePolicy): Promise<unknown> {
  return job.kind === 'ingest' ? runIngestJob(engine, job.id, signal, sourcePolicy) : runWatermarkJob(engine, job.id, signal);
}

/** How often a queue looks for jobs whose lease went stale (a process killed mid-job). */
const SWEEP_MS = 2_500;

export interface InProcessQueueOptions {
  /** Ingest jobs run at once (each is one ffmpeg using every core). */
  concurrency?: number;
  /**
   * Watermark jobs run at once. They only coordinate: their encodes share the process's threads through
   * engine.renders, and running several at once lets renders of the same source segment share one decode.
   */
  watermarkConcurrency?: number;
  /** Take over any unfinished job in the data dir (a server), rather than only the ones asked for here (a CLI run). */
  adoptAll?: boolean;
  log?: (line: string) => void;
  /** Sources a resumed ingest may read again (a server's policy); default: any (the CLI user's own jobs). */
  sourcePolicy?: SourcePolicy;
}

export class InProcessJobQueue implements JobQueue {
  private readonly waiting: JobRef[] = [];
  private readonly active = new Map<string, Promise<void>>();
  private readonly activeKinds = new Map<string, JobRef['kind']>();
  /** Jobs asked for here that another process held: taken over if that process dies. */
  private readonly wanted = new Map<string, JobRef>();
  private readonly controller = new AbortController();
  private readonly concurrency: number;
  private closed = false;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly engine: Engine,
    private readonly options: InProcessQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 2;
  }

  enqueue(job: JobRef, options: { immediate?: boolean } = {}): void {
    const id = jobId(job.kind, job.id);
    if (this.closed || this.active.has(id)) return;
    const queued = this.waiting.findIndex((j) => jobId(j.kind, j.id) === id);
    if (options.immediate) {
      if (queued >= 0) this.waiting.splice(queued, 1);
      this.start(job);
      return;
    }
    if (queued < 0) this.waiting.push(job);
    this.pump();
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  resume(): number {
    const found = this.sweep();
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    return found;
  }

  /** Queues what is unfinished and free: every such job for a server, the ones asked for here otherwise. */
  private sweep(): number {
    if (this.closed) return 0;
    const now = this.engine.now();
    const jobs = this.options.adoptAll
      ? this.engine.store.resumableJobs(now, LEASE_STALE_MS).map((j) => ({ kind: j.kind, id: j.targetId }))
      : [...this.wanted.values()].filter((j) => {
          const record = this.engine.store.getJob(jobId(j.kind, j.id));
          if (!record || record.status === 'done' || record.status === 'failed') this.wanted.delete(jobId(j.kind, j.id));
          return record !== undefined && (record.status === 'queued' || record.status === 'running') && !isLeaseLive(record, now);
        });
    for (const job of jobs) this.enqueue(job);
    return jobs.length;
  }

  private pump(): void {
    for (;;) {
      const running = (kind: JobRef['kind']) => [...this.activeKinds.values()].filter((k) => k === kind).length;
      const limit = (kind: JobRef['kind']) => (kind === 'ingest' ? this.concurrency : (this.options.watermarkConcurrency ?? MAX_SHARED_RENDERS));
      const next = this.waiting.findIndex((j) => running(j.kind) < limit(j.kind));
      if (this.closed || next < 0) return;
      this.start(this.waiting.splice(next, 1)[0]!);
    }
  }

  private start(job: JobRef): void {
    const id = jobId(job.kind, job.id);
    const run = runJob(this.engine, job, this.controller.signal, this.options.sourcePolicy)
      .then((result) => {
        if (result === undefined) this.wanted.set(id, job);
        else this.wanted.delete(id);
      })
      .catch((error: unknown) => {
        this.wanted.delete(id);
        if (!isInterruption(error)) this.options.log?.(`${job.kind} job ${job.id} failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        this.active.delete(id);
        this.activeKinds.delete(id);
        this.pump();
      });
    this.active.set(id, run);
    this.activeKinds.set(id, job.kind);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.waiting.length = 0;
    this.controller.abort();
    await Promise.allSettled(this.active.values());
  }
}
