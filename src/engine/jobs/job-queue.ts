// The job-queue seam: who runs ingest and watermark jobs. This process (`wmark serve`, CLI --wait), a detached
// `wmark job run` process (CLI --no-wait), or, for a render farm, workers on other machines. Callers only enqueue and
// watch; jobs report progress through the store, whoever runs them. A queue knows no kind of job: it is handed the
// function that runs one (engine/app/job-runs.ts, the dispatcher above the jobs).

import type { DependencyListener } from '../../core/dependency.js';
import { isUnavailable, leavesJobQueued } from '../../core/errors.js';
import { isLeaseLive, type JobEngine, type JobKind, jobId, LEASE_STALE_MS } from './job-lease.js';

/** What a queue needs of the engine beyond leases: how many jobs its renderer suits, and its dependencies' health. */
export interface QueueEngine extends JobEngine {
  readonly renderer: { readonly concurrency: { watermarkJobs: number; ingestJobs: number } };
  readonly dependencies: { readonly allUp: boolean; subscribe(listener: DependencyListener): () => void };
}

export interface JobRef {
  kind: JobKind;
  id: string;
}

export interface JobQueue {
  /** Asks for the job to run; returns at once. `immediate` skips the line, for jobs that cost no encode. */
  enqueue(job: JobRef, options?: { immediate?: boolean }): void;
  /** Queues jobs left unfinished by a stopped process; resolves with how many were found. */
  resume(): Promise<number>;
  /** Stops taking work; running jobs are cancelled and stay queued for the next start. */
  close(): Promise<void>;
}

/** Runs one job in this process: its result, or undefined when another process holds it. */
export type JobRunner = (job: JobRef, signal: AbortSignal) => Promise<unknown>;

/** How often a queue looks for jobs whose lease went stale (a process killed mid-job). */
const SWEEP_MS = 2_500;
/** A job stopped by a dependency that did not answer goes back in line after this long (or when it is back). */
const UNAVAILABLE_RETRY_MS = 1_000;

export interface InProcessQueueOptions {
  /** Ingest jobs run at once (default: what the engine's renderer suits). */
  concurrency?: number;
  /**
   * Watermark jobs run at once (default: what the engine's renderer suits). They only coordinate: their renders go
   * through the engine's renderer, and running several at once lets renders of one source segment share a decode.
   */
  watermarkConcurrency?: number;
  /** Take over any unfinished job in the data dir (a server), rather than only the ones asked for here (a CLI run). */
  adoptAll?: boolean;
  log?: (line: string) => void;
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
  private readonly unwatch: () => void;

  constructor(
    private readonly engine: QueueEngine,
    private readonly run: JobRunner,
    private readonly options: InProcessQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? engine.renderer.concurrency.ingestJobs;
    // Jobs wait in line while a dependency is down (they could only stop again), and start when it is back.
    this.unwatch = engine.dependencies.subscribe((status) => {
      if (status.up) this.pump();
    });
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
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => undefined), SWEEP_MS).unref();
  }

  resume(): Promise<number> {
    this.sweeper ??= setInterval(
      () => void this.sweep().catch((error: unknown) => this.options.log?.(`looking for unfinished jobs failed: ${(error as Error).message}`)),
      SWEEP_MS,
    ).unref();
    return this.sweep();
  }

  /** Queues what is unfinished and free: every such job for a server, the ones asked for here otherwise. */
  private async sweep(): Promise<number> {
    if (this.closed) return 0;
    const now = this.engine.now();
    const jobs: JobRef[] = [];
    if (this.options.adoptAll) {
      for (const j of await this.engine.store.resumableJobs(now, LEASE_STALE_MS)) jobs.push({ kind: j.kind, id: j.targetId });
    } else {
      for (const j of [...this.wanted.values()]) {
        const record = await this.engine.store.getJob(jobId(j.kind, j.id));
        if (!record || record.status === 'done' || record.status === 'failed') this.wanted.delete(jobId(j.kind, j.id));
        if (record !== undefined && (record.status === 'queued' || record.status === 'running') && !isLeaseLive(record, now)) jobs.push(j);
      }
    }
    for (const job of jobs) this.enqueue(job);
    return jobs.length;
  }

  private pump(): void {
    for (;;) {
      const running = (kind: JobRef['kind']) => [...this.activeKinds.values()].filter((k) => k === kind).length;
      const limit = (kind: JobRef['kind']) =>
        kind === 'ingest' ? this.concurrency : (this.options.watermarkConcurrency ?? this.engine.renderer.concurrency.watermarkJobs);
      const next = this.waiting.findIndex((j) => running(j.kind) < limit(j.kind));
      if (this.closed || next < 0 || !this.engine.dependencies.allUp) return;
      this.start(this.waiting.splice(next, 1)[0]!);
    }
  }

  private start(job: JobRef): void {
    const id = jobId(job.kind, job.id);
    const run = this.run(job, this.controller.signal)
      .then((result) => {
        if (result === undefined) this.wanted.set(id, job);
        else this.wanted.delete(id);
      })
      .catch((error: unknown) => {
        this.wanted.delete(id);
        // A dependency that did not answer is reported once, by its monitor; the job waits in line for it.
        if (isUnavailable(error) && !this.closed) setTimeout(() => this.enqueue(job), UNAVAILABLE_RETRY_MS).unref();
        if (!leavesJobQueued(error)) this.options.log?.(`${job.kind} job ${job.id} failed: ${error instanceof Error ? error.message : String(error)}`);
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
    this.unwatch();
    clearInterval(this.sweeper);
    this.waiting.length = 0;
    this.controller.abort();
    await Promise.allSettled(this.active.values());
  }
}
