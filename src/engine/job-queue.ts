// Runs watermark jobs in the background for `wmark serve`: dedupes by watermark, resumes unfinished jobs at start,
// lets requests wait until a watermark is playable, and cancels cleanly (jobs requeue) on shutdown.
import { EventEmitter } from 'node:events';
import { isWmarkError } from '../core/errors.js';
import type { Engine } from './engine.js';
import type { WatermarkRecord } from './store.js';
import { LEASE_STALE_MS, runWatermarkJob } from './watermark.js';

export type JobOutcome = 'playable' | 'ready' | 'failed';

/** How often a running queue looks for jobs whose lease went stale (a process killed mid-job) since it started. */
const SWEEP_MS = 2_500;

/** The seam a scale-out backend (e.g. a Redis queue with remote workers) would implement. */
export interface JobQueue {
  /** `immediate` starts the job now, outside the concurrency limit (for jobs that cost no encode). */
  enqueue(watermarkId: string, options?: { immediate?: boolean }): void;
  /** Resolves with the record once it is at least playable (or failed), or when the timeout passes. */
  waitPlayable(watermarkId: string, timeoutMs: number): Promise<WatermarkRecord>;
  resume(): number;
  close(): Promise<void>;
}

export class LocalJobQueue implements JobQueue {
  private readonly queue: string[] = [];
  private readonly active = new Map<string, Promise<void>>();
  private readonly events = new EventEmitter();
  private readonly controller = new AbortController();
  private closed = false;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly engine: Engine,
    /** Jobs rendered at once; each already spreads its segments over all workers. */
    private readonly concurrency = 2,
    private readonly log: (message: string) => void = () => {},
  ) {
    this.events.setMaxListeners(0);
  }

  enqueue(id: string, options: { immediate?: boolean } = {}): void {
    if (this.closed || this.active.has(id)) return;
    if (options.immediate) {
      // Cheap jobs (a forensic viewer is only links to existing files) must not wait behind renders.
      const queued = this.queue.indexOf(id);
      if (queued >= 0) this.queue.splice(queued, 1);
      return this.start(id);
    }
    if (this.queue.includes(id)) return;
    this.queue.push(id);
    this.pump();
  }

  /**
   * Queues every unfinished job whose lease is free or stale (a restart after a crash or Ctrl-C), then keeps looking:
   * a lease left by a process killed just before this start (or by a CLI run that dies while we serve) only goes
   * stale LEASE_STALE_MS later, and nobody else would ever pick that job up.
   */
  resume(): number {
    const count = this.sweep();
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    return count;
  }

  private sweep(): number {
    if (this.closed) return 0;
    const jobs = this.engine.store.resumableJobs(this.engine.now(), LEASE_STALE_MS);
    for (const job of jobs) this.enqueue(job.targetId);
    return jobs.length;
  }

  private pump(): void {
    while (!this.closed && this.active.size < this.concurrency && this.queue.length) this.start(this.queue.shift()!);
  }

  private start(id: string): void {
    const run = runWatermarkJob(this.engine, id, { onPlayable: () => this.events.emit(id, 'playable') }, this.controller.signal)
      .then(() => void this.events.emit(id, 'ready'))
      .catch((error: unknown) => {
        if (!(isWmarkError(error) && error.kind === 'interrupted')) this.log(`job ${id} failed: ${error instanceof Error ? error.message : String(error)}`);
        this.events.emit(id, 'failed');
      })
      .finally(() => {
        this.active.delete(id);
        this.pump();
      });
    this.active.set(id, run);
  }

  async waitPlayable(id: string, timeoutMs: number): Promise<WatermarkRecord> {
    const current = () => this.engine.store.getWatermark(id)!;
    const settled = (w: WatermarkRecord) => w.status !== 'PENDING';
    if (settled(current())) return current();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        clearInterval(poll);
        this.events.off(id, done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      // Another process may be rendering this watermark: the store is the source of truth, events only speed it up.
      const poll = setInterval(() => settled(current()) && done(), 250);
      this.events.on(id, done);
    });
    return current();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.queue.length = 0;
    this.controller.abort();
    await Promise.allSettled(this.active.values());
  }
}
