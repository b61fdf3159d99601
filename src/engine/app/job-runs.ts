// The dispatcher above the jobs: which code runs each kind of job (an ingest, a watermark). engine/jobs/ offers the
// leases and the queues and knows no kind of job; the queues the front ends build here are handed this dispatcher.
import type { Engine } from '../engine.js';
import { runIngestJob } from '../ingest/ingest-job.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import { type DetachedQueueOptions, HandOffJobQueue } from '../jobs/detached-job-queue.js';
import { InProcessJobQueue, type InProcessQueueOptions, type JobQueue, type JobRef } from '../jobs/job-queue.js';
import { runWatermarkJob } from '../watermark/watermark-job.js';

/**
 * Runs one job in this process: the result, or undefined when another process holds it. `sourcePolicy` is what the
 * process that runs it lets sources reach: a server's, so an API client's URL is checked again when a resumed ingest
 * downloads it (its address may have changed since it was accepted).
 */
export function runJob(engine: Engine, job: JobRef, signal?: AbortSignal, sourcePolicy?: SourcePolicy): Promise<unknown> {
  return job.kind === 'ingest' ? runIngestJob(engine, job.id, signal, sourcePolicy) : runWatermarkJob(engine, job.id, signal);
}

export interface JobQueueOptions extends InProcessQueueOptions {
  /** Sources a resumed ingest may read again (a server's policy); default: any (the CLI user's own jobs). */
  sourcePolicy?: SourcePolicy;
}

/** A queue that runs every kind of job in this process. */
export function inProcessJobQueue(engine: Engine, options: JobQueueOptions = {}): InProcessJobQueue {
  const { sourcePolicy, ...queue } = options;
  return new InProcessJobQueue(engine, (job, signal) => runJob(engine, job, signal, sourcePolicy), queue);
}

export interface CommandQueueOptions {
  log?: (line: string) => void;
  /** For a command that returns before its work is done (--no-wait): where unfinished jobs are handed on (on this engine's data folder). */
  detached?: Omit<DetachedQueueOptions, 'dataDir'>;
}

/**
 * The queue of a command run: its jobs run in this process one at a time (each spreads its segments over every worker
 * already); with `detached`, whatever is unfinished when the command ends goes on in a detached `wmark job run`.
 */
export function commandJobQueue(engine: Engine, options: CommandQueueOptions = {}): JobQueue {
  const here = inProcessJobQueue(engine, { concurrency: 1, ...(options.log ? { log: options.log } : {}) });
  return options.detached ? new HandOffJobQueue(engine, here, { ...options.detached, dataDir: engine.paths.root }) : here;
}
