// The job queue of a CLI run that returns before its work is done (--no-wait): each job runs in a detached
// `wmark job run <kind> <id>` process that outlives this one, logging to <data dir>/logs.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobId, LEASE_STALE_MS } from '../engine/job-lease.js';
import type { JobQueue, JobRef } from '../engine/job-queue.js';
import type { CliIO } from './io.js';

export class DetachedJobQueue implements JobQueue {
  /** When each job was last handed to a process: not again until that process had time to take its lease. */
  private readonly started = new Map<string, number>();

  constructor(
    private readonly options: { dataDir: string; configFile?: string; io: Pick<CliIO, 'env' | 'cwd'> },
  ) {}

  enqueue(job: JobRef): void {
    const id = jobId(job.kind, job.id);
    const last = this.started.get(id);
    if (last !== undefined && Date.now() - last < LEASE_STALE_MS) return;
    this.started.set(id, Date.now());
    const logs = path.join(this.options.dataDir, 'logs');
    mkdirSync(logs, { recursive: true });
    const log = openSync(path.join(logs, `job-${job.kind}-${job.id}.log`), 'a');
    const bin = fileURLToPath(new URL('../../bin/wmark.js', import.meta.url));
    const args = [bin, '--data-dir', this.options.dataDir, ...(this.options.configFile ? ['--config', this.options.configFile] : []), 'job', 'run', job.kind, job.id];
    spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log], env: { ...this.options.io.env } as NodeJS.ProcessEnv, cwd: this.options.io.cwd }).unref();
  }

  resume(): number {
    return 0;
  }

  async close(): Promise<void> {}
}
