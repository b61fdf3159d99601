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
import { BUCKET, type FarmRun, POLL_MS, PREFIX, type Run, report, TARGET_RATIO } from './cluster-report.js';
import { type FarmAssumptions, mb, type Projection, percentile, type TaskTimes } from './lib/cluster-figures.js';
import { type ByteMeter, redisCommands, startByteMeter, startWorkerProcess, type WorkerProcess } from './lib/farm-services.js';
import { machineBusySeconds, settle, waitForQuiet } from './lib/measure.js';
import { descendants, waitForIdle } from './lib/server-process.js';
import { fmt, numberOption, OUT_DIR, type Suite, type SuiteContext, WMARK_BIN, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { type SourceClip, sourceClip } from './lib/video.js';
import { PLACEMENT } from './text-job.js';

const KEY = 'bench-cluster';
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
