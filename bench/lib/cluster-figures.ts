// The cluster suite's arithmetic, kept pure so it can be unit-tested: percentiles and spreads, how long a queued
// segment waited for a free worker versus for the queue itself, and the paper projection of a farm of N machines.

/** The p-th percentile (0-100) by linear interpolation between closest ranks; NaN for no finite values. */
export function percentile(values: number[], p: number): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  if (v.length === 1) return v[0]!;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (v.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return v[lo]! + (v[hi]! - v[lo]!) * (rank - lo);
}

/** min-max of the finite values, as text ("1.02-1.08"); "-" when there are none. */
export function spread(values: number[], digits = 2): string {
  const v = values.filter((x) => Number.isFinite(x));
  if (!v.length) return '-';
  return `${Math.min(...v).toFixed(digits)}-${Math.max(...v).toFixed(digits)}`;
}

/** "1.04 (target <= 1.10) OK": a ratio with its upper-bound target and verdict, as the other suites print them. */
export function ratioLine(ratio: number, target: number): { text: string; met: boolean } {
  const met = Number.isFinite(ratio) && ratio <= target;
  return { text: `${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} (target <= ${target.toFixed(2)}) ${met ? 'OK' : 'MISSED'}`, met };
}

/** One segment task as BullMQ kept it: when serve added it, when a worker took it and finished it, and which worker. */
export interface TaskTimes {
  /** job.timestamp: added to the queue (serve's clock). */
  enqueuedAt: number;
  /** job.processedOn: a worker moved it to active. */
  startedAt: number;
  /** job.finishedOn. */
  finishedAt: number;
  /** The worker that ran it (from the job's return value); tasks of one worker with concurrency 1 never overlap. */
  worker: string;
}

export interface QueueDelays {
  /** startedAt - enqueuedAt per task: the whole wait, including waiting for a worker to become free. */
  waitMs: number[];
  /**
   * The queue's own overhead per task: from the moment the task could have started (it was queued and its worker was
   * free: the later of enqueuedAt and that worker's previous finishedAt) until it started.
   */
  dispatchMs: number[];
  /** finishedAt - startedAt per task: a worker busy with it (fetch, encode, store). */
  busyMs: number[];
}

/**
 * Splits each task's wait into what the queue cost and what was only waiting for a busy worker. Assumes each worker
 * runs one task at a time (`wmark worker --concurrency 1`), so a worker's tasks follow one another.
 */
export function queueDelays(tasks: TaskTimes[]): QueueDelays {
  const byWorker = new Map<string, TaskTimes[]>();
  for (const t of tasks) byWorker.set(t.worker, [...(byWorker.get(t.worker) ?? []), t]);
  const freeSince = new Map<TaskTimes, number>();
  for (const list of byWorker.values()) {
    list.sort((a, b) => a.startedAt - b.startedAt);
    for (const [i, t] of list.entries()) freeSince.set(t, i === 0 ? -Infinity : list[i - 1]!.finishedAt);
  }
  return {
    waitMs: tasks.map((t) => t.startedAt - t.enqueuedAt),
    dispatchMs: tasks.map((t) => Math.max(0, t.startedAt - Math.max(t.enqueuedAt, freeSince.get(t)!))),
    busyMs: tasks.map((t) => t.finishedAt - t.startedAt),
  };
}

/** What one measured farm job costs, the inputs of the projection. */
export interface JobCosts {
  /** Worker-seconds busy per job (sum over its tasks of finishedAt - startedAt). */
  workerSecondsPerJob: number;
  /** Redis commands processed per job (while the job ran, everything included). */
  redisCommandsPerJob: number;
  /** Bytes read from plus written to the media store per job. */
  storeBytesPerJob: number;
  /** Bytes serve sends to play the job's output once, start to end. */
  egressBytesPerJob: number;
}

/** What one worker machine is, and what each shared resource is assumed to take. */
export interface FarmAssumptions {
  /** Workers (one task and one core each) per machine. */
  workersPerMachine: number;
  redisOpsPerS: number;
  /** serve's network egress, bytes/s. */
  serveEgressBytesPerS: number;
  /** The media store's throughput (GET + PUT), bytes/s. */
  storeBytesPerS: number;
}

interface ProjectionRow {
  machines: number;
  jobsPerHour: number;
  redisOpsPerS: number;
  /** Share of the stated capacity, 0-1+. */
  redisLoad: number;
  egressBytesPerS: number;
  egressLoad: number;
  storeBytesPerS: number;
  storeLoad: number;
}

type Resource = 'Redis operations/s' | "serve's egress" | 'store throughput';

export interface Projection {
  rows: ProjectionRow[];
  /** Machines at which each resource reaches its capacity (linear scaling), and the one reached first. */
  limits: Record<Resource, number>;
  first: { resource: Resource; machines: number };
}

/**
 * Jobs per hour and the load on the shared parts for farms of `machines` worker machines, scaling the encode
 * linearly: each machine keeps its workers busy, so a machine finishes workersPerMachine x 3600 / workerSecondsPerJob
 * jobs an hour, and every shared resource carries jobs/s x its cost per job.
 */
export function projectFarm(costs: JobCosts, a: FarmAssumptions, machines: number[]): Projection {
  const jobsPerSecondPerMachine = a.workersPerMachine / costs.workerSecondsPerJob;
  const rows = machines.map((n) => {
    const jobsPerS = n * jobsPerSecondPerMachine;
    const redisOpsPerS = jobsPerS * costs.redisCommandsPerJob;
    const egressBytesPerS = jobsPerS * costs.egressBytesPerJob;
    const storeBytesPerS = jobsPerS * costs.storeBytesPerJob;
    return {
      machines: n,
      jobsPerHour: jobsPerS * 3600,
      redisOpsPerS,
      redisLoad: redisOpsPerS / a.redisOpsPerS,
      egressBytesPerS,
      egressLoad: egressBytesPerS / a.serveEgressBytesPerS,
      storeBytesPerS,
      storeLoad: storeBytesPerS / a.storeBytesPerS,
    };
  });
  const machinesAt = (capacity: number, perJob: number) => (perJob > 0 ? capacity / (jobsPerSecondPerMachine * perJob) : Infinity);
  const limits: Record<Resource, number> = {
    'Redis operations/s': machinesAt(a.redisOpsPerS, costs.redisCommandsPerJob),
    "serve's egress": machinesAt(a.serveEgressBytesPerS, costs.egressBytesPerJob),
    'store throughput': machinesAt(a.storeBytesPerS, costs.storeBytesPerJob),
  };
  const [resource, at] = (Object.entries(limits) as [Resource, number][]).reduce((best, e) => (e[1] < best[1] ? e : best));
  return { rows, limits, first: { resource, machines: at } };
}

/** Bytes as MB (10^6) with one decimal; bytes/s as Mbit/s. */
export const mb = (bytes: number): string => (Number.isFinite(bytes) ? (bytes / 1e6).toFixed(1) : '-');
export const mbit = (bytesPerS: number): string => (Number.isFinite(bytesPerS) ? ((bytesPerS * 8) / 1e6).toFixed(1) : '-');
