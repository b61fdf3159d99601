// What a watcher of a watermark makes of what it reads: whether the wait is over, and what its job is doing.
import type { WatchGoal } from '../../service/watermark-service.js';
import type { JobRecord, WatermarkRecord } from '../state/state-store.js';

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
