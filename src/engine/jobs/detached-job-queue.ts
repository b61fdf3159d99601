// The job queue of a CLI run that returns before its work is done (--no-wait): each job runs in a detached
// `wmark job run <kind> <id>` process that outlives this one, logging to <data dir>/logs.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_FILES } from '../../package-root.js';
import { dataLayout } from '../data-folder/layout.js';
import { type JobEngine, jobId, LEASE_STALE_MS } from './job-lease.js';
import type { JobQueue, JobRef } from './job-queue.js';

export interface DetachedQueueOptions {
  dataDir: string;
  configFile?: string;
  database?: string | undefined;
  /** The environment and working directory the detached process starts in: the command's own. */
  io: { env: Readonly<Record<string, string | undefined>>; cwd: string };
}

export class DetachedJobQueue implements JobQueue {
  /** When each job was last handed to a process: not again until that process had time to take its lease. */
  private readonly started = new Map<string, number>();

  /** `now`: the engine's clock. */
  constructor(
    private readonly options: DetachedQueueOptions,
    private readonly now: () => number,
  ) {}

  enqueue(job: JobRef): void {
    const id = jobId(job.kind, job.id);
    const last = this.started.get(id);
    const now = this.now();
    if (last !== undefined && now - last < LEASE_STALE_MS) return;
    this.started.set(id, now);
    const logs = dataLayout(this.options.dataDir).logs;
    mkdirSync(logs, { recursive: true });
    const log = openSync(path.join(logs, `job-${job.kind}-${job.id}.log`), 'a');
    const args = [
      PACKAGE_FILES.bin,
      '--data-dir',
      this.options.dataDir,
      ...(this.options.configFile ? ['--config', this.options.configFile] : []),
      'job',
      'run',
      job.kind,
      job.id,
    ];
    spawn(process.execPath, args, {
      detached: true,
      stdio: ['ignore', log, log],
      // The state database by env, not argv: its URL carries a password that `ps` would show.
      env: { ...this.options.io.env, ...(this.options.database ? { WMARK_DB_URL: this.options.database } : {}) } as NodeJS.ProcessEnv,
      cwd: this.options.io.cwd,
    }).unref();
  }

  async resume(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {}
}

/**
 * --no-wait for watermarks: the job starts in this process, so its first segments cost no second process start, and
 * is handed to a detached `wmark job run` when the command ends; that process resumes it where this one stopped
 * (finished segments are kept). Ingest jobs go to the detached process at once: they have no part worth starting here.
 */
export class HandOffJobQueue implements JobQueue {
  private readonly later: DetachedJobQueue;
  private readonly started = new Map<string, JobRef>();

  /** `here` runs the jobs while the command lasts (one at a time: each spreads its segments over every worker). */
  constructor(
    private readonly engine: Pick<JobEngine, 'store' | 'now'>,
    private readonly here: JobQueue,
    options: DetachedQueueOptions,
  ) {
    this.later = new DetachedJobQueue(options, engine.now);
  }

  enqueue(job: JobRef, options?: { immediate?: boolean }): void {
    if (job.kind === 'ingest') {
      this.later.enqueue(job);
      return;
    }
    this.started.set(jobId(job.kind, job.id), job);
    this.here.enqueue(job, options);
  }

  async resume(): Promise<number> {
    return 0;
  }

  /** Stops the jobs running here (they stay queued) and hands every unfinished one to a detached process. */
  async close(): Promise<void> {
    await this.here.close();
    for (const job of this.started.values()) {
      const record = await this.engine.store.getJob(jobId(job.kind, job.id));
      if (record?.status === 'queued' || record?.status === 'running') this.later.enqueue(job);
    }
  }
}
