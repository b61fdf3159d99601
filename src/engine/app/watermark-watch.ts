// What a watcher of a video or a watermark makes of what it reads: whether the wait is over, what its job is doing,
// how often to read again, and what to do with a job nobody works on any more.
import type { WatchGoal } from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import { isLeaseLive, type JobKind } from '../jobs/job-lease.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { JobRecord, WatermarkRecord } from '../state/state-store.js';

/** How often a watcher reads the store: seldom (for a lost notice) where the database pushes other processes' changes. */
export const pollMs = (engine: Engine) => (engine.changes.crossProcess ? 2000 : 250);

/** A job nobody works on any more (its process died, or was never started) is queued again. */
export function takeOver(engine: Engine, queue: JobQueue, kind: JobKind, id: string, job: JobRecord | undefined): void {
  if (job && (job.status === 'queued' || job.status === 'running') && !isLeaseLive(job, engine.now())) queue.enqueue({ kind, id });
}

export async function* mapAsync<T, U>(source: AsyncIterable<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of source) yield map(item);
}

/** Whether a watermark reached what a watch waits for (or failed, which ends every wait). */
export function goalOf(goal: WatchGoal): (w: WatermarkRecord) => boolean {
  return (w) => w.status === 'FAILED' || (goal === 'playable' ? w.status !== 'PENDING' : w.status === 'READY');
}

/**
 * What a job is doing now, for progress: its stage and counts only while it runs (a finished job's row still holds its
 * last stage, "joining mp4 7/7", which is no news to someone who asks again); "queued" while it waits its turn.
 */
export function workInHand(job: JobRecord | undefined): { stage?: string; done?: number; total?: number } {
  if (job?.status === 'queued') return { stage: 'queued' };
  if (job?.status !== 'running') return {};
  return { ...(job.stage ? { stage: job.stage } : {}), ...(job.total > 0 ? { done: job.done, total: job.total } : {}) };
}
