// The cluster suite's runs, as it measures them, and its report: the rounds' table, the queue's and the store's costs,
// and the projection on paper to farms of 1-64 machines (pure: bench/cluster.ts runs the jobs).
import path from 'node:path';
import {
  type FarmAssumptions,
  type JobCosts,
  mb,
  mbit,
  percentile,
  projectFarm,
  queueDelays,
  ratioLine,
  spread,
  type TaskTimes,
} from './lib/cluster-figures.js';
import { median } from './lib/measure.js';
import type { MachineInfo } from './lib/suite.js';
import { fmt, formatMachine, table } from './lib/suite.js';
import type { SourceClip } from './lib/video.js';

export const BUCKET = 'bench';
export const PREFIX = 'cluster';
export const TARGET_RATIO = 1.1;
export const POLL_MS = 100;
const MACHINES = [1, 4, 16, 64];

export interface Run {
  kind: 'a' | 'b';
  round: number;
  watermarkId: string;
  answerS: number;
  wallS: number;
  /** CPU seconds: serve's process tree, the workers' trees (b), redis-server (b), this process (s3rver + proxy, b). */
  cpu: { serveS: number; workersS: number; redisS: number; benchS: number };
  /** Cores the rest of the machine used during the job (noise). */
  otherCores: number;
  /** Redis commands while the job ran: in (a) the idle farm's polling, in (b) the job's. */
  redisCommands: number;
  servedBytes: number;
}

export interface FarmRun extends Run {
  tasks: TaskTimes[];
  /**
   * The opening: the segments serve queues at once at BullMQ priority 1 (segment-farm.ts FARM_PRIORITY.now), taken by
   * the free workers in order; seconds from the first task's enqueue to its last's end.
   */
  opening: { tasks: number; seconds: number };
  failedTasks: number;
  notRendered: number;
  /** Bytes read from (GET) and written to (PUT) the store while the job ran, and how they were counted. */
  storeRead: number;
  storeWritten: number;
}

/** What the report reads of the suite's run: the machine, the clip and the options. */
export interface ReportBench {
  ctx: { machine: MachineInfo };
  o: { workers: number; quietWaitMs: number; assumptions: FarmAssumptions };
  clip: SourceClip;
}

/** What the report reads of the farm: its store, its ingested video and the command lines it ran. */
export interface ReportFarm {
  store: 's3' | 'folder';
  fallback?: string;
  video: { segments: number };
  commandLines: { serve: string; worker: string };
}

type Runs = { a: Run; b: FarmRun }[];

/** The figures of the runs: (b)/(a) per round and its median, the queue's delays, a job's costs and their projection. */
export function clusterFigures(o: ReportBench['o'], runs: Runs) {
  const ratios = runs.map((r) => r.b.wallS / r.a.wallS);
  const ratio = median(ratios);
  // Per round, so that tasks of one worker in different rounds are not taken for one another's neighbours.
  const delays = runs.map((r) => queueDelays(r.b.tasks));
  const busySPerJob = median(delays.map((d) => d.busyMs.reduce((a, x) => a + x, 0) / 1000));
  const storeBytes = median(runs.map((r) => r.b.storeRead + r.b.storeWritten));
  const costs: JobCosts = {
    workerSecondsPerJob: busySPerJob,
    redisCommandsPerJob: median(runs.map((r) => r.b.redisCommands)),
    storeBytesPerJob: storeBytes,
    egressBytesPerJob: median(runs.map((r) => r.b.servedBytes)),
  };
  return {
    ratios,
    ratio,
    verdictLine: ratioLine(ratio, TARGET_RATIO),
    dispatch: delays.flatMap((d) => d.dispatchMs),
    wait: delays.flatMap((d) => d.waitMs),
    busySPerJob,
    storeBytes,
    costs,
    projection: projectFarm(costs, o.assumptions, MACHINES),
    idleOpsPerS: median(runs.map((r) => r.a.redisCommands / r.a.wallS)),
    busyOpsPerS: median(runs.map((r) => r.b.redisCommands / r.b.wallS)),
  };
}
type Figures = ReturnType<typeof clusterFigures>;

/** The rounds' table rows: each round's (a) and (b), then the medians (percentiles pooled over all rounds' tasks). */
export function roundRows(runs: Runs, f: Figures): (string | number)[][] {
  const rows: (string | number)[][] = runs.map((r) => {
    const d = queueDelays(r.b.tasks);
    return [
      `${r.a.round}`,
      r.a.round % 2 === 1 ? 'a,b' : 'b,a',
      r.a.wallS,
      r.b.wallS,
      r.b.wallS / r.a.wallS,
      r.b.tasks.length,
      percentile(d.dispatchMs, 50),
      percentile(d.dispatchMs, 95),
      percentile(d.waitMs, 50),
      r.b.redisCommands,
      r.b.redisCommands / r.b.wallS,
      r.b.storeRead / 1e6,
      r.b.storeWritten / 1e6,
      Math.max(r.a.otherCores, r.b.otherCores),
    ];
  });
  rows.push([
    'median',
    '-',
    median(runs.map((r) => r.a.wallS)),
    median(runs.map((r) => r.b.wallS)),
    f.ratio,
    '-',
    percentile(f.dispatch, 50),
    percentile(f.dispatch, 95),
    percentile(f.wait, 50),
    f.costs.redisCommandsPerJob,
    f.busyOpsPerS,
    median(runs.map((r) => r.b.storeRead)) / 1e6,
    median(runs.map((r) => r.b.storeWritten)) / 1e6,
    '-',
  ]);
  return rows;
}

/** The projection on paper: its assumptions, a row per farm size, and what saturates first. */
function projectionLines(o: ReportBench['o'], runs: Runs, f: Figures): string[] {
  const { costs, busySPerJob, projection } = f;
  const a = o.assumptions;
  const projectionRows = projection.rows.map((p) => [
    p.machines,
    p.machines * a.workersPerMachine,
    p.jobsPerHour,
    p.redisOpsPerS,
    p.redisLoad * 100,
    (p.egressBytesPerS * 8) / 1e6,
    p.egressLoad * 100,
    (p.storeBytesPerS * 8) / 1e6,
    p.storeLoad * 100,
  ]);
  const limit = (m: number) => (Number.isFinite(m) ? `~${m >= 10 ? Math.round(m) : m.toFixed(1)} machines` : 'never');
  return [
    `-- projection, on paper, from the medians above: farms of N worker machines like this one (${a.workersPerMachine} cores, ${a.workersPerMachine} workers x 1 task x 1 thread) --`,
    `assumptions: the encode scales linearly and every worker is kept busy (enough jobs queued), so a machine does`,
    `  ${a.workersPerMachine} x 3600 / ${fmt(busySPerJob, 1)} worker-s = ${fmt((a.workersPerMachine * 3600) / busySPerJob, 1)} jobs/h (one job at a time instead: 3600 / ${fmt(median(runs.map((r) => r.b.wallS)), 1)} s = ${fmt(3600 / median(runs.map((r) => r.b.wallS)), 1)} jobs/h);`,
    `  Redis: ${fmt(costs.redisCommandsPerJob, 0)} commands per job against one Redis at ${fmt(a.redisOpsPerS, 0)} ops/s (--redis-ops; a single-threaded Redis does ~100k simple ops/s);`,
    `  serve's egress: each job's output (${mb(costs.egressBytesPerJob)} MB) streamed once through serve, against a ${mbit(a.serveEgressBytesPerS)} Mbit/s NIC (--egress-mbit);`,
    `  store: ${mb(costs.storeBytesPerJob)} MB GET+PUT per job against ${mbit(a.storeBytesPerS)} Mbit/s (--store-mbit; one NIC of an NFS/MinIO box; AWS S3 itself scales further);`,
    `  serve's own CPU (planning, playlists, answering) and ingests (which run on the workers too) are not projected.`,
    '',
    table(
      ['machines', 'workers', 'jobs/h', 'redis ops/s', 'redis load %', 'egress Mbit/s', 'egress load %', 'store Mbit/s', 'store load %'],
      projectionRows,
      [0, 0, 0, 0, 1, 1, 1, 1, 1],
    ),
    '',
    `saturates first: ${projection.first.resource}, at ${limit(projection.first.machines)} (${(Object.entries(projection.limits) as [string, number][]).map(([k, v]) => `${k}: ${limit(v)}`).join('; ')})`,
    '',
  ];
}

/** The setup's lines: the clip, the job, both command lines, the store and the rounds. */
function setupLines(b: ReportBench, farm: ReportFarm, embeddedLine: string, runs: Runs, ingestS: { a: number; b: number }): string[] {
  const { o } = b;
  return [
    '',
    `== bench cluster: embedded vs render farm (Redis + ${farm.store === 's3' ? 'S3' : 'a shared folder'} on loopback) ==`,
    formatMachine(b.ctx.machine),
    `clip:    ${path.relative(process.cwd(), b.clip.path)} (${b.clip.seconds} s ${b.clip.width}x${b.clip.height} ${b.clip.fps} fps, natural, with audio), ${farm.video.segments} working segments; ingest (untimed): (a) ${fmt(ingestS.a, 1)} s, (b) ${fmt(ingestS.b, 1)} s`,
    `job:     POST /2.0/watermark, one TEXT setting with a unique text, containers m3u8, --render full; wall = POST -> the signed playlist lists all ${farm.video.segments} segments with #EXT-X-ENDLIST (polled every ${POLL_MS} ms)`,
    `(a)      ${embeddedLine}`,
    `(b)      ${farm.commandLines.serve}`,
    `         + ${o.workers} x ${farm.commandLines.worker}`,
    `store:   ${farm.store === 's3' ? `s3rver 3.7.1 on loopback (bucket ${BUCKET}, prefix ${PREFIX}) behind a byte-counting TCP proxy` : `serve's media folder, shared by the workers as --media`}${farm.fallback ? `\n         NOTE: --store s3 asked for, but ${farm.fallback}` : ''}`,
    `rounds:  ${runs.length}, alternating which of (a) and (b) goes first; each job starts with serve and workers idle and the machine quiet (up to ${o.quietWaitMs / 1000} s)`,
    '',
  ];
}

/** The figures' lines under the table: the wall ratio, the queue's overhead, the store's bytes, Redis, CPU. */
function costLines(b: ReportBench, farm: ReportFarm, runs: Runs, f: Figures): string[] {
  const { o } = b;
  const { costs, dispatch, wait, busySPerJob, storeBytes, verdictLine, ratios, idleOpsPerS, busyOpsPerS } = f;
  const segments = farm.video.segments;
  const storeHow =
    farm.store === 's3'
      ? 'bytes through a TCP proxy in front of s3rver, headers included (serve and workers)'
      : 'sizes of the working segments the tasks read + the segments they wrote';
  const cpuA = median(runs.map((r) => r.a.cpu.serveS));
  const cpuB = median(runs.map((r) => r.b.cpu.serveS + r.b.cpu.workersS));
  const allTasks = runs.flatMap((r) => r.b.tasks);
  return [
    `wall (b)/(a), median of rounds:     ${verdictLine.text}   spread ${spread(ratios)} (per round ${ratios.map((r) => fmt(r)).join(' ')})`,
    `wall time, median:                  (a) ${fmt(median(runs.map((r) => r.a.wallS)))} s, (b) ${fmt(median(runs.map((r) => r.b.wallS)))} s; to the first READY answer (a) ${fmt(median(runs.map((r) => r.a.answerS)))} s, (b) ${fmt(median(runs.map((r) => r.b.answerS)))} s`,
    `(b)'s opening:                      ${median(runs.map((r) => r.b.opening.tasks))} segments at priority 1, queued at once for the free workers: ${fmt(median(runs.map((r) => r.b.opening.seconds)))} s from the first's enqueue to the last's end (in (a) they render one after another, each with both threads)`,
    `queue overhead per segment:         enqueue -> a worker starts it, ${dispatch.length} tasks: median ${fmt(percentile(dispatch, 50), 1)} ms, p95 ${fmt(percentile(dispatch, 95), 1)} ms, max ${fmt(Math.max(...dispatch), 1)} ms`,
    `                                    (whole wait incl. a busy worker: median ${fmt(percentile(wait, 50), 0)} ms, p95 ${fmt(percentile(wait, 95), 0)} ms)`,
    `bytes through the store per job:    ${mb(storeBytes)} MB (read ${mb(median(runs.map((r) => r.b.storeRead)))} MB, written ${mb(median(runs.map((r) => r.b.storeWritten)))} MB; ${storeHow})`,
    `Redis:                              ${fmt(costs.redisCommandsPerJob, 0)} commands per job (${fmt(costs.redisCommandsPerJob / segments, 1)} per segment), ${fmt(busyOpsPerS, 1)} ops/s while a job ran; idle farm (serve + ${o.workers} waiting workers) ${fmt(idleOpsPerS, 1)} ops/s`,
    `worker time per job:                ${fmt(busySPerJob, 1)} worker-seconds busy (sum over tasks of finish - start), ${allTasks.length ? fmt((busySPerJob * 1000) / segments, 0) : '-'} ms per segment`,
    `CPU per job, median:                (a) serve tree ${fmt(cpuA, 1)} s; (b) serve ${fmt(median(runs.map((r) => r.b.cpu.serveS)), 1)} s + workers ${fmt(median(runs.map((r) => r.b.cpu.workersS)), 1)} s = ${fmt(cpuB, 1)} s (${fmt(cpuB / cpuA)}x), redis-server ${fmt(median(runs.map((r) => r.b.cpu.redisS)), 2)} s, this process (polling${farm.store === 's3' ? ', s3rver, proxy' : ''}) ${fmt(median(runs.map((r) => r.b.cpu.benchS)), 1)} s`,
    `output played once through serve:   ${mb(costs.egressBytesPerJob)} MB per job ((a) ${mb(median(runs.map((r) => r.a.servedBytes)))} MB)`,
    ...(runs.some((r) => r.b.failedTasks || r.b.notRendered)
      ? [
          `note: ${runs.reduce((x, r) => x + r.b.failedTasks, 0)} failed task tries, ${runs.reduce((x, r) => x + r.b.notRendered, 0)} tasks found their output already there`,
        ]
      : []),
  ];
}

export function report(b: ReportBench, farm: ReportFarm, embeddedLine: string, runs: Runs, ingestS: { a: number; b: number }) {
  const f = clusterFigures(b.o, runs);
  const lines = [
    ...setupLines(b, farm, embeddedLine, runs, ingestS),
    table(
      [
        'round',
        'order',
        '(a) wall s',
        '(b) wall s',
        '(b)/(a)',
        'tasks',
        'dispatch p50 ms',
        'dispatch p95 ms',
        'wait p50 ms',
        'redis cmds',
        'redis ops/s',
        'store read MB',
        'store written MB',
        'other load',
      ],
      roundRows(runs, f),
      [undefined, undefined, 2, 2, 2, 0, 1, 1, 0, 0, 1, 1, 1, 2],
    ),
    '',
    `(dispatch = a task's start minus the moment it could have started: the later of its enqueue and its worker's previous finish;`,
    ` wait = start minus enqueue, including waiting for a busy worker. From BullMQ's job.timestamp/processedOn/finishedOn, read after`,
    ` each job from the completed jobs, which task-queue.ts keeps for an hour; the median row's percentiles pool all rounds' tasks.`,
    ` store MB = 10^6 bytes. other load = cores used by the rest of the machine during the job: noise.)`,
    '',
    ...costLines(b, farm, runs, f),
    '',
    ...projectionLines(b.o, runs, f),
  ];
  const { ratio, verdictLine, ratios, projection, costs, dispatch, wait, idleOpsPerS, busyOpsPerS } = f;
  return { lines, ratio, met: verdictLine.met, ratios, projection, costs, dispatch, wait, idleOpsPerS, busyOpsPerS };
}
