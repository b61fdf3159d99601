// Running a job under its lease: only one process works on a job at a time, a heartbeat keeps the lease alive, a
// process killed mid-job leaves a lease that goes stale so another one takes over, and progress is written where
// any watcher (in this process or another) can read it.
import { leavesJobQueued } from '../../core/errors.js';
import type { Engine } from '../engine.js';
import type { JobRecord } from '../state/state-store.js';
import type { JobReporter } from './job-reporter.js';

/** A lease whose heartbeat is older than this belongs to a dead process and may be taken over. */
export const LEASE_STALE_MS = 20_000;
const HEARTBEAT_MS = 4_000;
/**
 * Progress is written at most this often (an ffmpeg progress line arrives every ~0.5 s per process): often on a
 * database in this process (a SQLite file, where a write costs microseconds), seldom on a database server, where each
 * write is a transaction that every instance shares. A progress write renews the lease too, so a heartbeat is written
 * only when no progress was for HEARTBEAT_MS.
 */
const PROGRESS_EVERY_MS = 200;
const SERVER_PROGRESS_EVERY_MS = HEARTBEAT_MS;

export type JobKind = JobRecord['kind'];

export const jobId = (kind: JobKind, targetId: string) => `${kind}:${targetId}`;
export const topicOf = (kind: JobKind, targetId: string) => (kind === 'ingest' ? (`video:${targetId}` as const) : (`watermark:${targetId}` as const));

/**
 * How the lease was taken: at once (the job row was there, not done, and nobody held it), or only after the row was
 * made or a finished job was queued again (another process may have finished the target meanwhile).
 */
export type LeaseTaken = 'at-once' | 'after-reset';

/** True while some process holds a live lease on the job. */
export function isLeaseLive(job: JobRecord | undefined, now: number): boolean {
  return Boolean(job && job.status === 'running' && job.owner !== null && (job.heartbeat ?? 0) >= now - LEASE_STALE_MS);
}

/**
 * Takes the job's lease and runs `work` under it. Resolves with its result, or undefined when another process holds
 * a live lease (its progress shows in the store). The job ends done, failed (work threw), or queued again when the
 * work was interrupted (Ctrl-C, shutdown) or a dependency did not answer, so it resumes later.
 */
export async function holdLease<T>(
  engine: Engine,
  kind: JobKind,
  targetId: string,
  work: (report: JobReporter, taken: LeaseTaken) => Promise<T>,
): Promise<T | undefined> {
  const id = jobId(kind, targetId);
  const topic = topicOf(kind, targetId);
  const acquire = () => engine.store.acquireJob(id, engine.owner, engine.now(), LEASE_STALE_MS);
  // Usually the job row is there, queued, and taking the lease is the one statement this needs.
  let taken: LeaseTaken = 'at-once';
  if (!(await acquire())) {
    taken = 'after-reset';
    const job = await engine.store.ensureJob(kind, targetId, engine.now());
    // A finished job asked to run again means more work was asked for since (e.g. an mp4 added later).
    if (job.status === 'done' || job.status === 'failed') await engine.store.resetJob(id, engine.now());
    if (!(await acquire())) return undefined;
  }
  // Store writes of this lease run one after another, in the order they were asked for: a progress report can
  // never land after the job's end, whatever database is behind the store.
  let writes: Promise<unknown> = Promise.resolve();
  const write = (step: () => Promise<unknown>): Promise<unknown> => (writes = writes.then(step).catch(() => undefined));
  let renewed = engine.now();
  const heartbeat = setInterval(() => {
    if (engine.now() - renewed < HEARTBEAT_MS) return;
    renewed = engine.now();
    void write(() => engine.store.heartbeatJob(id, engine.owner, engine.now()));
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const progressEveryMs = engine.changes.crossProcess ? SERVER_PROGRESS_EVERY_MS : PROGRESS_EVERY_MS;
  let lastWrite = 0;
  const report: JobReporter = (done, total, stage) => {
    const now = engine.now();
    if (done < total && now - lastWrite < progressEveryMs) return;
    lastWrite = now;
    void write(async () => {
      await engine.store.setJobProgress(id, { done, total, stage }, now, engine.owner);
      renewed = now;
      // Watchers elsewhere read progress on their next poll; a watermark turning PLAYABLE and the job's end are
      // announced to every process.
      engine.changes.progressed(topic);
    });
  };
  // The job's end is announced to every process by the statement that writes it.
  const notice = engine.changes.busMessage(topic);
  try {
    const result = await work(report, taken);
    clearInterval(heartbeat);
    await write(() => engine.store.finishJob(id, engine.owner, engine.now(), { status: 'done' }, notice));
    return result;
  } catch (error) {
    clearInterval(heartbeat);
    // Stopped on purpose, or a dependency away: queued again, to resume where it stopped.
    const interrupted = leavesJobQueued(error);
    await write(() =>
      engine.store.finishJob(
        id,
        engine.owner,
        engine.now(),
        interrupted ? { status: 'queued' } : { status: 'failed', error: error instanceof Error ? error.message : String(error) },
        notice,
      ),
    );
    throw error;
  } finally {
    clearInterval(heartbeat);
    engine.changes.notifyHere(topic);
  }
}
