// Suite `cluster` (issue 11 item 6): what the render farm's queue and store cost. The same full TEXT watermark (m3u8,
// --render full) of the 60 s 720p clip, in one run, alternating for N rounds:
//   (a) embedded: `wmark serve --render full --workers 2`, the encodes in serve's own process tree;
//   (b) farm: `wmark serve --queue redis://... --render full` (renders nothing itself) and 2 `wmark worker`s with one
//       task and one ffmpeg thread each (the same 2 cores as (a)), through a redis-server and a media store on loopback:
//       s3rver behind a byte-counting proxy (--store s3, the default), or serve's media folder (--store folder).
// Reports each round's wall time (POST -> the playlist lists every segment with #EXT-X-ENDLIST), (b)/(a) against
// <= 1.10, the queue's overhead per segment from BullMQ's job timestamps, Redis commands per job, the bytes moved
// through the store per job, and a projection on paper of farms of 1, 4, 16 and 64 such machines.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../harness/redis.js';
import { startS3, type TestS3 } from '../harness/s3.js';
import { stopProcess } from '../harness/stop-process.js';
import { connectRedis } from '../src/farm/redis-connection.js';
import { TASK_QUEUE } from '../src/farm/task-queue.js';
import {
  type FarmAssumptions,
  type JobCosts,
  mb,
  mbit,
  type Projection,
  percentile,
  projectFarm,
  queueDelays,
  ratioLine,
  spread,
  type TaskTimes,
} from './lib/cluster-figures.js';
import { type ByteMeter, redisCommands, startByteMeter, startWorkerProcess, type WorkerProcess } from './lib/farm-services.js';
import { machineBusySeconds, median, settle, waitForQuiet } from './lib/measure.js';
import { descendants, waitForIdle } from './lib/server-process.js';
import { fmt, formatMachine, numberOption, OUT_DIR, type Suite, type SuiteContext, table, WMARK_BIN, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { type SourceClip, sourceClip } from './lib/video.js';
import { PLACEMENT } from './text-job.js';

const KEY = 'bench-cluster';
const BUCKET = 'bench';
const PREFIX = 'cluster';
const TARGET_RATIO = 1.1;
const POLL_MS = 100;
const MACHINES = [1, 4, 16, 64];
const CLK_TCK = 100; // USER_HZ on Linux: /proc/<pid>/stat times are in 1/100 s

type Store = 's3' | 'folder';

interface Options {
  store: Store;
  /** Encoder threads of (a), and worker processes (one task, one thread each) of (b): one machine of this size. */
  workers: number;
  seconds: number;
  quietWaitMs: number;
  jobTimeoutMs: number;
  assumptions: FarmAssumptions;
}

function parseOptions(ctx: SuiteContext): Options {
  const opt = ctx.args.options;
  const store = opt.store === undefined ? 's3' : opt.store;
  if (store !== 's3' && store !== 'folder') throw new Error(`--store: expected s3 or folder, got ${String(store)}`);
  const workers = numberOption(opt.workers, 2, 'workers');
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers: expected a positive whole number, got ${String(opt.workers)}`);
  return {
    store,
    workers,
    seconds: numberOption(opt.seconds, 60, 'seconds'),
    quietWaitMs: numberOption(opt['quiet-wait'], 10, 'quiet-wait') * 1000,
    jobTimeoutMs: numberOption(opt['job-timeout'], 900, 'job-timeout') * 1000,
    assumptions: {
      workersPerMachine: workers,
      redisOpsPerS: numberOption(opt['redis-ops'], 100_000, 'redis-ops'),
      serveEgressBytesPerS: (numberOption(opt['egress-mbit'], 1000, 'egress-mbit') * 1e6) / 8,
      storeBytesPerS: (numberOption(opt['store-mbit'], 1000, 'store-mbit') * 1e6) / 8,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Processes, and stopping every one of them whatever happens (failure, Ctrl-C, SIGTERM).

/** Things to stop, newest first; each runs once. */
class Cleanup {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];
  readonly processes = new Set<ChildProcess>();

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  track(proc: ChildProcess): void {
    this.processes.add(proc);
  }

  async run(log: (m: string) => void): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      await step.run().catch((error: unknown) => log(`cleanup: ${step.name}: ${(error as Error).message}`));
    }
    this.killAll();
  }

  /** Last resort (also on process exit): SIGKILL whatever still lives, with its ffmpegs. */
  killAll(): void {
    for (const p of this.processes) {
      if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) continue;
      for (const d of descendants(p.pid)) {
        try {
          process.kill(d, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      p.kill('SIGKILL');
    }
  }
}

/** Stops a wmark process (SIGTERM, SIGKILL after the grace), then any ffmpeg it left behind. */
async function stopWmark(proc: ChildProcess, graceMs: number): Promise<void> {
  const kids = proc.pid !== undefined ? descendants(proc.pid) : [];
  await stopProcess(proc, { graceMs });
  for (const d of kids) {
    try {
      process.kill(d, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

interface ServeProcess {
  label: string;
  proc: ChildProcess;
  url: string;
  dataDir: string;
  headers: Record<string, string>;
  stderr: () => string;
}

/** serve ended before it printed its URL (e.g. a flag this build does not know). */
class ServeExited extends Error {
  constructor(
    readonly code: number | null,
    readonly stderrText: string,
  ) {
    super(`wmark serve exited with code ${code} before printing its URL\n${stderrText.slice(-3000)}`);
  }
}

/** `wmark serve --render full` on a fresh data folder; resolves with its URL and the credential it created. */
async function startServe(b: Bench, label: string, dataDir: string, extra: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const args = [WMARK_BIN, '--data-dir', dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0', '--render', 'full', ...extra];
  const proc = spawn(process.execPath, args, { cwd: b.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  b.cleanup.track(proc);
  b.cleanup.add(label, () => stopWmark(proc, 10_000));
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString('utf8')).slice(-50_000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no URL on stdout within 60 s\n${err.slice(-3000)}`)), 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const parsed = JSON.parse(line) as { url?: string; error?: { code: string; message: string } };
      // With --json a usage error (an unknown flag) is a JSON line on stdout; the exit follows.
      if (parsed.url) resolve(parsed.url);
      else if (parsed.error) err = `${parsed.error.code}: ${parsed.error.message}\n${err}`;
    });
    proc.once('error', reject);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new ServeExited(code, err));
    });
  });
  proc.stdout!.resume();
  const clientId = /client id:\s+(wmc_\S+)/.exec(err)?.[1];
  const apiKey = /API key:\s+(wmk_\S+)/.exec(err)?.[1];
  if (!clientId || !apiKey) throw new Error(`${label}: no credential in its first start's output\n${err.slice(-2000)}`);
  return { label, proc, url: url.replace(/\/+$/, ''), dataDir, headers: { 'x-api-client-id': clientId, 'x-api-key': apiKey }, stderr: () => err };
}

// ---------------------------------------------------------------------------------------------------------------
// Talking to serve.

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`HTTP ${res.status}: not JSON: ${text.slice(0, 500)}`);
  }
}

interface Ingested {
  id: string;
  segments: number;
  wallS: number;
}

/** POST /2.0/videos with the clip's path (serve runs on this machine), then waits for INGESTED. */
async function ingest(b: Bench, serve: ServeProcess, clip: SourceClip): Promise<Ingested> {
  b.ctx.log(`${serve.label}: ingesting ${path.basename(clip.path)} ...`);
  const t0 = performance.now();
  const res = await fetch(`${serve.url}/2.0/videos`, {
    method: 'POST',
    headers: { ...serve.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ sourceUrl: clip.path, key: KEY }),
  });
  const created = await json(res);
  if (res.status !== 201 && res.status !== 200) throw new Error(`${serve.label}: POST /2.0/videos answered ${res.status}: ${JSON.stringify(created)}`);
  for (;;) {
    const video = await json(await fetch(`${serve.url}/2.0/videos/${String(created.id)}`, { headers: serve.headers }));
    if (video.status === 'INGESTED') {
      const wallS = (performance.now() - t0) / 1000;
      b.ctx.log(`  ${String(video.segments)} segments, ${fmt(wallS, 1)} s`);
      return { id: String(video.id), segments: Number(video.segments), wallS };
    }
    if (String(video.status).startsWith('FAILED')) throw new Error(`${serve.label}: ingest failed: ${JSON.stringify(video)}`);
    if (performance.now() - t0 > 20 * 60_000) throw new Error(`${serve.label}: ingest not done after 20 minutes`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface JobTiming {
  watermarkId: string;
  /** POST -> the 2.0 answer (READY: the opening plays). */
  answerS: number;
  /** POST -> the signed playlist lists every segment and ends (#EXT-X-ENDLIST): every segment rendered. */
  wallS: number;
  m3u8: string;
}

const countOf = (text: string, needle: string) => text.split(needle).length - 1;

/** Asks for a new TEXT watermark (m3u8 only) and waits until its playlist lists all `segments` and is ended. */
async function watermarkJob(b: Bench, serve: ServeProcess, segments: number, text: string): Promise<JobTiming> {
  const body = JSON.stringify({ key: KEY, settings: [{ type: 'TEXT', content: text, ...PLACEMENT }], containers: ['m3u8'] });
  const t0 = performance.now();
  let answer: Record<string, unknown>;
  for (;;) {
    const res = await fetch(`${serve.url}/2.0/watermark`, { method: 'POST', headers: { ...serve.headers, 'content-type': 'application/json' }, body });
    answer = await json(res);
    // 503 NOT_READY_YET: not playable within 2 minutes; the same request joins the same job.
    if (res.status === 503) continue;
    if ((res.status !== 201 && res.status !== 200) || answer.status !== 'READY')
      throw new Error(`${serve.label}: POST /2.0/watermark answered ${res.status}: ${JSON.stringify(answer)}`);
    break;
  }
  const answerS = (performance.now() - t0) / 1000;
  const m3u8 = String((answer.containers as { m3u8?: string } | undefined)?.m3u8);
  for (;;) {
    const res = await fetch(m3u8);
    const playlist = await res.text();
    if (res.ok && playlist.includes('#EXT-X-ENDLIST') && countOf(playlist, '#EXTINF') === segments) break;
    if (performance.now() - t0 > b.o.jobTimeoutMs)
      throw new Error(
        `${serve.label}: the playlist did not list ${segments} segments within ${b.o.jobTimeoutMs / 1000} s (HTTP ${res.status}, ${countOf(playlist, '#EXTINF')} listed)`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return { watermarkId: String(answer.id), answerS, wallS: (performance.now() - t0) / 1000, m3u8 };
}

/** Plays the whole output through serve once, as a viewer's player would fetch it: bytes of every segment. */
async function servedBytes(m3u8: string): Promise<number> {
  const playlist = await (await fetch(m3u8)).text();
  let bytes = 0;
  for (const uri of playlist.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) {
    const res = await fetch(new URL(uri.trim(), m3u8));
    if (!res.ok) throw new Error(`GET ${uri}: HTTP ${res.status}`);
    bytes += (await res.arrayBuffer()).byteLength;
  }
  return bytes;
}

/** CPU seconds of a process and of its children it has waited for (ffmpeg runs), from /proc; NaN elsewhere. */
function treeCpuS(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: utime, stime, cutime, cstime are fields 14-17 (indexes 11-14 from the state field).
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The two setups.

interface Farm {
  serve: ServeProcess;
  workers: WorkerProcess[];
  redis: TestRedis;
  client: Redis;
  queue: Queue;
  store: Store;
  /** Why the store is not the one asked for (serve could not use s3). */
  fallback?: string;
  meter?: ByteMeter;
  s3?: TestS3;
  /** Where serve keeps its media in folder mode (the workers' --media). */
  mediaDir: string;
  video: Ingested;
  commandLines: { serve: string; worker: string };
}

interface Bench {
  ctx: SuiteContext;
  o: Options;
  runDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  clip: SourceClip;
  cleanup: Cleanup;
}

async function startEmbedded(b: Bench): Promise<{ serve: ServeProcess; video: Ingested; commandLine: string }> {
  const dataDir = path.join(b.runDir, 'embedded');
  const extra = ['--workers', String(b.o.workers)];
  const serve = await startServe(b, '(a) embedded serve', dataDir, extra, b.env);
  const video = await ingest(b, serve, b.clip);
  return { serve, video, commandLine: `wmark serve --render full ${extra.join(' ')}` };
}

async function startFarm(b: Bench): Promise<Farm> {
  const { log } = b.ctx;
  const dataDir = path.join(b.runDir, 'farm');
  const mediaDir = path.join(dataDir, 'media');
  log('(b) starting redis-server on loopback ...');
  const redis = await startRedis();
  if (redis.process) b.cleanup.track(redis.process);
  b.cleanup.add('redis-server', () => redis.stop());
  const client = await connectRedis(redis.url, { name: 'bench-cluster' });
  b.cleanup.add('redis client', async () => void client.disconnect());
  const queue = new Queue(TASK_QUEUE, { connection: client });
  queue.on('error', () => undefined);
  b.cleanup.add('queue reader', () => queue.close().catch(() => undefined));

  let store: Store = b.o.store;
  let fallback: string | undefined;
  let serve: ServeProcess | undefined;
  let meter: ByteMeter | undefined;
  let s3: TestS3 | undefined;
  let storeArgs: string[] = [];
  let storeEnv: Record<string, string> = {};
  const serveArgs = ['--queue', redis.url];
  if (store === 's3') {
    log('(b) starting s3rver and a byte-counting proxy in front of it on loopback ...');
    s3 = await startS3({ buckets: [BUCKET] });
    b.cleanup.add('s3rver', async () => s3?.stop());
    const endpoint = new URL(s3.endpoint);
    meter = await startByteMeter({ host: endpoint.hostname, port: Number(endpoint.port) });
    b.cleanup.add('byte meter', async () => meter?.close());
    storeArgs = ['--media', `s3://${BUCKET}/${PREFIX}`, '--s3-endpoint', meter.endpoint];
    storeEnv = s3.env;
    try {
      serve = await startServe(b, '(b) farm serve', dataDir, [...serveArgs, ...storeArgs], { ...b.env, ...storeEnv });
    } catch (error) {
      if (!(error instanceof ServeExited)) throw error;
      const why = error.stderrText.split('\n').find((l) => l.trim()) ?? `exit code ${error.code}`;
      fallback = `serve in this build cannot use --media s3:// (it exited with code ${error.code}: ${why.trim()}); measured with --store folder instead`;
      log(`NOTE: ${fallback}`);
      store = 'folder';
      // Nothing goes through them now: stopped, so that no byte count is taken from them.
      await meter.close();
      await s3.stop();
      meter = undefined;
      s3 = undefined;
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (store === 'folder') {
    storeArgs = ['--media', mediaDir];
    storeEnv = {};
    serve = await startServe(b, '(b) farm serve', dataDir, serveArgs, b.env);
  }
  const workerArgs = ['worker', '--queue', redis.url, ...storeArgs, '--concurrency', '1', '--threads', '1'];
  log(`(b) starting ${b.o.workers} wmark worker(s): ${workerArgs.join(' ')} ...`);
  const workers: WorkerProcess[] = [];
  for (let i = 0; i < b.o.workers; i++) {
    const w = await startWorkerProcess([WMARK_BIN, '--json', ...workerArgs], { cwd: b.cwd, env: { ...b.env, ...storeEnv }, track: (p) => b.cleanup.track(p) });
    b.cleanup.add(`worker ${w.id}`, () => stopWmark(w.proc, 5_000));
    workers.push(w);
  }
  // After the workers: on a farm, the ingest transcode runs on them too.
  const video = await ingest(b, serve!, b.clip);
  return {
    serve: serve!,
    workers,
    redis,
    client,
    queue,
    store,
    fallback,
    meter,
    s3,
    mediaDir,
    video,
    commandLines: {
      serve: ['wmark serve --render full', ...serveArgs, ...(store === 's3' ? storeArgs : [])].join(' '),
      worker: `wmark ${workerArgs.join(' ')}`,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// One timed job of each kind.

interface Run {
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

interface FarmRun extends Run {
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

/** A finished task's return value (SegmentJobResult), whether BullMQ handed it over parsed or as JSON text. */
function resultOf(value: unknown): { worker?: string; rendered?: boolean } {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as { worker?: string; rendered?: boolean };
    } catch {
      return {};
    }
  }
  return (value ?? {}) as { worker?: string; rendered?: boolean };
}

/** Before a timed job: no ffmpeg left under serve or the workers, dirty pages flushed, the machine quiet. */
async function calm(b: Bench, pids: number[]): Promise<void> {
  for (const pid of pids) {
    const idle = await waitForIdle(pid, { quietMs: 1000, maxMs: 120_000 });
    if (!idle.idle) b.ctx.log(`  still rendering after ${fmt(idle.waitedMs / 1000, 0)} s (${idle.running.join('; ')}); measuring anyway`);
  }
  settle();
  if (b.o.quietWaitMs > 0) await waitForQuiet(0.3, b.o.quietWaitMs, b.ctx.log);
}

const viewerText = (label: string) => `cluster ${label} viewer-${randomBytes(4).toString('hex')}@example.com`;

async function timedJob(b: Bench, kind: 'a' | 'b', round: number, serve: ServeProcess, segments: number, farm: Farm): Promise<Run | FarmRun> {
  const workerPids = farm.workers.map((w) => w.proc.pid!);
  const cpu0 = { serve: treeCpuS(serve.proc.pid), workers: workerPids.map(treeCpuS), redis: treeCpuS(farm.redis.process?.pid), bench: process.cpuUsage() };
  const busy0 = machineBusySeconds();
  const redis0 = await redisCommands(farm.client);
  const bytes0 = farm.meter?.counts();
  const job = await watermarkJob(b, serve, segments, viewerText(`${kind}${round}`));
  const redis1 = await redisCommands(farm.client);
  const bytes1 = farm.meter?.counts();
  const busy = machineBusySeconds() - busy0;
  const benchCpu = process.cpuUsage(cpu0.bench);
  const cpu = {
    serveS: treeCpuS(serve.proc.pid) - cpu0.serve,
    workersS: kind === 'b' ? workerPids.reduce((a, pid, i) => a + treeCpuS(pid) - cpu0.workers[i]!, 0) : 0,
    redisS: treeCpuS(farm.redis.process?.pid) - cpu0.redis,
    benchS: (benchCpu.user + benchCpu.system) / 1e6,
  };
  const own = cpu.serveS + cpu.workersS + cpu.redisS + cpu.benchS;
  const run: Run = {
    kind,
    round,
    watermarkId: job.watermarkId,
    answerS: job.answerS,
    wallS: job.wallS,
    cpu,
    otherCores: Math.max(0, busy - own) / job.wallS,
    // Less the INFO call that read the counter the second time.
    redisCommands: redis1 - redis0 - 1,
    servedBytes: await servedBytes(job.m3u8),
  };
  if (kind === 'a') return run;

  // The job's segment tasks as BullMQ kept them (completed jobs stay an hour: task-queue.ts removeOnComplete).
  const jobs = (await farm.queue.getJobs(['completed', 'failed'], 0, -1, true)).filter((j) => String(j.data?.output).includes(`/${job.watermarkId}/`));
  const completed = jobs.filter((j) => j.finishedOn && !j.failedReason);
  const tasks: TaskTimes[] = completed.map((j) => ({
    enqueuedAt: j.timestamp,
    startedAt: j.processedOn!,
    finishedAt: j.finishedOn!,
    worker: String(resultOf(j.returnvalue).worker ?? 'unknown'),
  }));
  const first = Math.min(...completed.map((j) => j.timestamp));
  const urgent = completed.filter((j) => j.opts.priority === 1);
  const opening = { tasks: urgent.length, seconds: urgent.length ? (Math.max(...urgent.map((j) => j.finishedOn!)) - first) / 1000 : 0 };
  const notRendered = completed.filter((j) => resultOf(j.returnvalue).rendered === false).length;
  let storeRead: number;
  let storeWritten: number;
  if (bytes0 && bytes1) {
    // Through the proxy: requests (PUT bodies) up, answers (GET bodies) down, headers included, serve's calls too.
    storeWritten = bytes1.up - bytes0.up;
    storeRead = bytes1.down - bytes0.down;
  } else {
    // A shared folder: each task reads its working segment and writes its output.
    const size = (key: string) => (existsSync(path.join(farm.mediaDir, key)) ? statSync(path.join(farm.mediaDir, key)).size : NaN);
    storeRead = completed.reduce((a, j) => a + size(String(j.data.input)), 0);
    storeWritten = completed.reduce((a, j) => a + size(String(j.data.output)), 0);
  }
  if (tasks.length !== segments) b.ctx.log(`  note: found ${tasks.length} completed segment tasks for ${segments} segments`);
  return { ...run, tasks, opening, failedTasks: jobs.length - completed.length, notRendered, storeRead, storeWritten };
}

// ---------------------------------------------------------------------------------------------------------------
// The report.

function report(b: Bench, farm: Farm, embeddedLine: string, runs: { a: Run; b: FarmRun }[], ingestS: { a: number; b: number }) {
  const { o } = b;
  const ratios = runs.map((r) => r.b.wallS / r.a.wallS);
  const ratio = median(ratios);
  const verdictLine = ratioLine(ratio, TARGET_RATIO);
  const allTasks = runs.flatMap((r) => r.b.tasks);
  // Per round, so that tasks of one worker in different rounds are not taken for one another's neighbours.
  const delays = runs.map((r) => queueDelays(r.b.tasks));
  const dispatch = delays.flatMap((d) => d.dispatchMs);
  const wait = delays.flatMap((d) => d.waitMs);
  const busySPerJob = median(delays.map((d) => d.busyMs.reduce((a, x) => a + x, 0) / 1000));
  const segments = farm.video.segments;
  const storeBytes = median(runs.map((r) => r.b.storeRead + r.b.storeWritten));
  const costs: JobCosts = {
    workerSecondsPerJob: busySPerJob,
    redisCommandsPerJob: median(runs.map((r) => r.b.redisCommands)),
    storeBytesPerJob: storeBytes,
    egressBytesPerJob: median(runs.map((r) => r.b.servedBytes)),
  };
  const projection = projectFarm(costs, o.assumptions, MACHINES);
  const idleOpsPerS = median(runs.map((r) => r.a.redisCommands / r.a.wallS));
  const busyOpsPerS = median(runs.map((r) => r.b.redisCommands / r.b.wallS));
  const storeHow =
    farm.store === 's3'
      ? 'bytes through a TCP proxy in front of s3rver, headers included (serve and workers)'
      : 'sizes of the working segments the tasks read + the segments they wrote';

  const rows: (string | number)[][] = [];
  for (const r of runs) {
    const d = queueDelays(r.b.tasks);
    const order = r.a.round % 2 === 1 ? 'a,b' : 'b,a';
    rows.push([
      `${r.a.round}`,
      order,
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
    ]);
  }
  rows.push([
    'median',
    '-',
    median(runs.map((r) => r.a.wallS)),
    median(runs.map((r) => r.b.wallS)),
    ratio,
    '-',
    percentile(dispatch, 50),
    percentile(dispatch, 95),
    percentile(wait, 50),
    costs.redisCommandsPerJob,
    busyOpsPerS,
    median(runs.map((r) => r.b.storeRead)) / 1e6,
    median(runs.map((r) => r.b.storeWritten)) / 1e6,
    '-',
  ]);

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
  const cpuA = median(runs.map((r) => r.a.cpu.serveS));
  const cpuB = median(runs.map((r) => r.b.cpu.serveS + r.b.cpu.workersS));

  const lines = [
    '',
    `== bench cluster: issue 11 item 6, embedded vs render farm (Redis + ${farm.store === 's3' ? 'S3' : 'a shared folder'} on loopback) ==`,
    formatMachine(b.ctx.machine),
    `clip:    ${path.relative(process.cwd(), b.clip.path)} (${b.clip.seconds} s ${b.clip.width}x${b.clip.height} ${b.clip.fps} fps, natural, with audio), ${segments} working segments; ingest (untimed): (a) ${fmt(ingestS.a, 1)} s, (b) ${fmt(ingestS.b, 1)} s`,
    `job:     POST /2.0/watermark, one TEXT setting with a unique text, containers m3u8, --render full; wall = POST -> the signed playlist lists all ${segments} segments with #EXT-X-ENDLIST (polled every ${POLL_MS} ms)`,
    `(a)      ${embeddedLine}`,
    `(b)      ${farm.commandLines.serve}`,
    `         + ${o.workers} x ${farm.commandLines.worker}`,
    `store:   ${farm.store === 's3' ? `s3rver 3.7.1 on loopback (bucket ${BUCKET}, prefix ${PREFIX}) behind a byte-counting TCP proxy` : `serve's media folder, shared by the workers as --media`}${farm.fallback ? `\n         NOTE: --store s3 asked for, but ${farm.fallback}` : ''}`,
    `rounds:  ${runs.length}, alternating which of (a) and (b) goes first; each job starts with serve and workers idle and the machine quiet (up to ${o.quietWaitMs / 1000} s)`,
    '',
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
      rows,
      [undefined, undefined, 2, 2, 2, 0, 1, 1, 0, 0, 1, 1, 1, 2],
    ),
    '',
    `(dispatch = a task's start minus the moment it could have started: the later of its enqueue and its worker's previous finish;`,
    ` wait = start minus enqueue, including waiting for a busy worker. From BullMQ's job.timestamp/processedOn/finishedOn, read after`,
    ` each job from the completed jobs, which task-queue.ts keeps for an hour; the median row's percentiles pool all rounds' tasks.`,
    ` store MB = 10^6 bytes. other load = cores used by the rest of the machine during the job: noise.)`,
    '',
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
    '',
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
  return { lines, ratio, met: verdictLine.met, ratios, projection, costs, dispatch, wait, idleOpsPerS, busyOpsPerS };
}

// ---------------------------------------------------------------------------------------------------------------

export const suite: Suite = {
  name: 'cluster',
  description:
    'issue 11 item 6: a full TEXT watermark embedded (2 threads) vs serve --queue + 2 wmark workers through Redis and a store on loopback; projection for 1-64 machines',
  async run(ctx: SuiteContext) {
    const o = parseOptions(ctx);
    const runDir = path.join(OUT_DIR, 'cluster-run');
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true });
    const { cwd, env } = await wmarkEnvironment(ctx, 'bench-cluster-cwd-');
    warnIfDistStale(ctx.log);
    const cleanup = new Cleanup();
    // The first step added is the last one run: the folders go once nothing runs in them, on an interrupt too.
    cleanup.add('working folders', async () => {
      await rm(cwd, { recursive: true, force: true });
      if (!ctx.args.keep) await rm(runDir, { recursive: true, force: true });
      else ctx.log(`kept working files in ${runDir}`);
    });
    const exitKill = () => cleanup.killAll();
    process.on('exit', exitKill);
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      ctx.log(`${signal}: stopping serve, workers, redis-server and the store ...`);
      void cleanup.run(ctx.log).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const clip = await sourceClip(ctx.tools, { width: 1280, height: 720, seconds: o.seconds, fps: 30, audio: true }, ctx.log);
      const b: Bench = { ctx, o, runDir, cwd, env, clip, cleanup };
      const farm = await startFarm(b);
      const embedded = await startEmbedded(b);
      if (embedded.video.segments !== farm.video.segments) throw new Error(`(a) has ${embedded.video.segments} segments, (b) ${farm.video.segments}`);
      const pids = [embedded.serve.proc.pid!, farm.serve.proc.pid!, ...farm.workers.map((w) => w.proc.pid!)];
      const runs: { a: Run; b: FarmRun }[] = [];
      for (let r = 1; r <= ctx.args.rounds; r++) {
        const order: ('a' | 'b')[] = r % 2 === 1 ? ['a', 'b'] : ['b', 'a'];
        const got: Partial<{ a: Run; b: FarmRun }> = {};
        for (const kind of order) {
          await calm(b, pids);
          ctx.log(`round ${r}/${ctx.args.rounds}: (${kind}) ${kind === 'a' ? 'embedded' : `farm, ${o.workers} workers, store ${farm.store}`} ...`);
          const run = await timedJob(b, kind, r, kind === 'a' ? embedded.serve : farm.serve, farm.video.segments, farm);
          ctx.log(
            `  ${fmt(run.wallS)} s (READY answer after ${fmt(run.answerS)} s)${kind === 'b' ? `, ${(run as FarmRun).tasks.length} tasks, ${run.redisCommands} Redis commands, store ${mb((run as FarmRun).storeRead)} MB read / ${mb((run as FarmRun).storeWritten)} MB written` : ''}`,
          );
          if (kind === 'a') got.a = run;
          else got.b = run as FarmRun;
        }
        runs.push({ a: got.a!, b: got.b! });
      }
      const rep = report(b, farm, embedded.commandLine, runs, { a: embedded.video.wallS, b: farm.video.wallS });
      process.stdout.write(`${rep.lines.join('\n')}\n`);
      return {
        suite: 'cluster',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: o,
        store: farm.store,
        fallback: farm.fallback ?? null,
        clip,
        segments: farm.video.segments,
        commandLines: { embedded: embedded.commandLine, ...farm.commandLines },
        ratio: { median: rep.ratio, target: TARGET_RATIO, met: rep.met, perRound: rep.ratios },
        queueOverheadMs: {
          dispatchP50: percentile(rep.dispatch, 50),
          dispatchP95: percentile(rep.dispatch, 95),
          waitP50: percentile(rep.wait, 50),
          waitP95: percentile(rep.wait, 95),
        },
        redis: { idleOpsPerS: rep.idleOpsPerS, busyOpsPerS: rep.busyOpsPerS },
        costs: rep.costs,
        projection: rep.projection satisfies Projection,
        runs,
      };
    } finally {
      // Interrupted: the signal handler stops everything and exits (130/143); whatever failed here meanwhile (a request
      // to a serve it stopped) is not worth reporting.
      if (stopping) await new Promise(() => undefined);
      await cleanup.run(ctx.log);
      process.off('exit', exitKill);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
