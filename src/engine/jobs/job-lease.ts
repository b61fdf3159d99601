// Running a job under its lease: only one process works on a job at a time, a heartbeat keeps the lease alive, a
// process killed mid-job leaves a lease that goes stale so another one takes over, and progress is written where
// any watcher (in this process or another) can read it.
import { leavesJobQueued } from '../../core/errors.js';
import type { JobOutcome, JobProgress, JobRecord, JobWrite, StateStore } from '../state/state-store.js';
import type { ChangeFeed } from './change-feed.js';
import type { JobReporter } from './job-reporter.js';

/**
 * What leases need of the engine: its store, its name as a lease owner, its clock and its change notices. The engine
 * is one (it is built on jobs/, so jobs/ names no more of it).
 */
export interface JobEngine {
  readonly store: StateStore;
  readonly owner: string;
  readonly now: () => number;
  readonly changes: ChangeFeed;
}

/** A lease whose heartbeat is older than this belongs to a dead process and may be taken over. */
export const LEASE_STALE_MS = 20_000;
/**
 * A lease is renewed when nothing of it was written for this long, so a live one is renewed at least every
 * HEARTBEAT_MS + LEASE_TICK_MS (5 s): four times within LEASE_STALE_MS, so one write lost to a database that does not
 * answer at once still leaves it live.
 */
const HEARTBEAT_MS = 4_000;
const LEASE_TICK_MS = 1_000;
/**
 * Progress is written at most this often (an ffmpeg progress line arrives every ~0.5 s per process): often on a
 * database in this process (a SQLite file, where a write costs microseconds), seldom on a database server, where each
 * write is a transaction that every instance shares. Each write of the lease (its progress, a status the work writes
 * with it, its end) renews it and carries the progress reported since the last one, so progress thinned out here is
 * not lost: it is written with the lease's next write.
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
type LeaseTaken = 'at-once' | 'after-reset';

/** The lease as the work under it sees it: how it was taken, and its writes the work makes with writes of its own. */
export interface Lease {
  taken: LeaseTaken;
  /**
   * Runs `step`, a write of the work's own (a status), after the lease's writes so far, handing it the job's write to
   * make in the same transaction: the lease renewed, with the progress reported and not written yet. Its failure is
   * the caller's.
   */
  write(step: (job: JobWrite) => Promise<unknown>): Promise<void>;
  /**
   * The same for the work's last write, whose job write ends the lease as done (with `notice`, the end's change-bus
   * message, to send with it): the job is then over, and nothing of the lease is written after it.
   */
  end(step: (job: JobWrite, notice: string | undefined) => Promise<unknown>): Promise<void>;
}

/** True while some process holds a live lease on the job. */
export function isLeaseLive(job: JobRecord | undefined, now: number): boolean {
  return Boolean(job && job.status === 'running' && job.owner !== null && (job.heartbeat ?? 0) >= now - LEASE_STALE_MS);
}

/**
 * Takes the job's lease and runs `work` under it. Resolves with its result, or undefined when another process holds
 * a live lease (its progress shows in the store). The job ends done (unless the work ended it with a write of its
 * own), failed (work threw), or queued again when the work was interrupted (Ctrl-C, shutdown) or a dependency did not
 * answer, so it resumes later.
 */
export async function holdLease<T>(
  engine: JobEngine,
  kind: JobKind,
  targetId: string,
  work: (report: JobReporter, lease: Lease) => Promise<T>,
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
  const inTurn = (step: () => Promise<unknown>): Promise<unknown> => {
    const run = writes.then(step);
    writes = run.catch(() => undefined);
    return run;
  };
  // Taking the lease wrote its heartbeat.
  let renewed = engine.now();
  let unwritten: JobProgress | undefined;
  let ended = false;
  /** The job's part of a write made now: the lease renewed (or ended), with the progress not written yet. */
  const jobWrite = (end?: JobWrite['end']): JobWrite => {
    const now = engine.now();
    const progress = unwritten;
    unwritten = undefined;
    renewed = now;
    return { id, owner: engine.owner, now, ...(progress ? { progress } : {}), ...(end ? { end } : {}) };
  };
  /** Writes the progress not written yet, or renews the lease when there is none. */
  const flush = () => {
    renewed = engine.now();
    void inTurn(async () => {
      if (ended) return;
      const w = jobWrite();
      if (!w.progress) return engine.store.heartbeatJob(id, w.owner, w.now);
      await engine.store.setJobProgress(id, w.progress, w.now, w.owner);
      // Watchers elsewhere read progress on their next poll; a watermark turning PLAYABLE and the job's end are
      // announced to every process.
      engine.changes.progressed(topic);
    }).catch(() => undefined);
  };
  const heartbeat = setInterval(() => {
    if (engine.now() - renewed >= HEARTBEAT_MS) flush();
  }, LEASE_TICK_MS);
  heartbeat.unref();
  const progressEveryMs = engine.changes.crossProcess ? SERVER_PROGRESS_EVERY_MS : PROGRESS_EVERY_MS;
  const report: JobReporter = (done, total, stage) => {
    unwritten = { done, total, stage };
    if (engine.now() - renewed >= progressEveryMs) flush();
  };
  // The job's end is announced to every process by the statement that writes it.
  const notice = engine.changes.busMessage(topic);
  const lease: Lease = {
    taken,
    write: async (step) => {
      await inTurn(() => step(jobWrite()));
    },
    end: async (step) => {
      clearInterval(heartbeat);
      await inTurn(async () => {
        await step(jobWrite({ status: 'done' }), notice);
        ended = true;
      });
    },
  };
  const finish = (outcome: JobOutcome) =>
    inTurn(async () => {
      if (ended) return;
      const w = jobWrite();
      await engine.store.finishJob(id, w.owner, w.now, outcome, notice, w.progress);
    }).catch(() => undefined);
  try {
    const result = await work(report, lease);
    clearInterval(heartbeat);
    await finish({ status: 'done' });
    return result;
  } catch (error) {
    clearInterval(heartbeat);
    // Stopped on purpose, or a dependency away: queued again, to resume where it stopped.
    const interrupted = leavesJobQueued(error);
    await finish(interrupted ? { status: 'queued' } : { status: 'failed', error: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    clearInterval(heartbeat);
    engine.changes.notifyHere(topic);
  }
}
