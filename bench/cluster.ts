// Suite `cluster`: what the render farm's queue and store cost. The same full TEXT watermark (m3u8,
// --render full) of the 60 s 720p clip, in one run, alternating for N rounds:
//   (a) embedded: `wmark serve --render full --workers 2`, the encodes in serve's own process tree;
//   (b) farm: `wmark serve --queue redis://... --render full` (renders nothing itself) and 2 `wmark worker`s with one
//       task and one ffmpeg thread each (the same 2 cores as (a)), through a redis-server and a media store on loopback:
//       s3rver behind a byte-counting proxy (--store s3, the default), or serve's media folder (--store folder).
// Reports each round's wall time (POST -> the playlist lists every segment with #EXT-X-ENDLIST), (b)/(a) against
// <= 1.10, the queue's overhead per segment from BullMQ's job timestamps, Redis commands per job, the bytes moved
// through the store per job, and a projection on paper of farms of 1, 4, 16 and 64 such machines.

import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Cleanup, type ServeProcess } from './cluster-processes.js';
import { type FarmRun, type Run, report, TARGET_RATIO } from './cluster-report.js';
import { servedBytes, watermarkJob } from './cluster-serve.js';
import { type Bench, type Farm, parseOptions, startEmbedded, startFarm } from './cluster-setup.js';
import { mb, type Projection, percentile, type TaskTimes } from './lib/cluster-figures.js';
import { redisCommands } from './lib/farm-services.js';
import { machineBusySeconds, settle, waitForQuiet } from './lib/measure.js';
import { processCpuSeconds } from './lib/process-cpu.js';
import { waitForIdle } from './lib/server-process.js';
import { fmt, OUT_DIR, type Suite, type SuiteContext, warnIfDistStale, wmarkEnvironment } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

/** CPU seconds of a process and of its children it has waited for (ffmpeg runs), from /proc; NaN elsewhere. */
function treeCpuS(pid: number | undefined): number {
  const cpu = processCpuSeconds(pid);
  return cpu.user + cpu.sys + cpu.children;
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
    'a full TEXT watermark embedded (2 threads) vs serve --queue + 2 wmark workers through Redis and a store on loopback; projection for 1-64 machines',
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
