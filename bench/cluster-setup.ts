// The cluster suite's options and its two setups: (a) serve rendering in its own process tree, (b) serve on a queue with
// wmark workers, Redis and a media store (s3rver behind a byte-counting proxy, or serve's media folder).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../harness/redis.js';
import { startS3, type TestS3 } from '../harness/s3.js';
import { connectRedis } from '../src/farm/redis-connection.js';
import { TASK_QUEUE } from '../src/farm/task-queue.js';
import { type Cleanup, ServeExited, type ServeProcess, startServe, stopWmark } from './cluster-processes.js';
import { BUCKET, PREFIX } from './cluster-report.js';
import { type Ingested, ingest } from './cluster-serve.js';
import type { FarmAssumptions } from './lib/cluster-figures.js';
import { type ByteMeter, startByteMeter, startWorkerProcess, type WorkerProcess } from './lib/farm-services.js';
import { numberOption, type SuiteContext, WMARK_BIN } from './lib/suite.js';
import type { SuiteBench } from './lib/suite-bench.js';

type Store = 's3' | 'folder';

export interface Options {
  store: Store;
  /** Encoder threads of (a), and worker processes (one task, one thread each) of (b): one machine of this size. */
  workers: number;
  seconds: number;
  quietWaitMs: number;
  jobTimeoutMs: number;
  assumptions: FarmAssumptions;
}

export function parseOptions(ctx: SuiteContext): Options {
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

export interface Farm {
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

/** What every part shares: the working folder, how to run wmark, the clip, and what stops every process started. */
export interface Bench extends SuiteBench<Options> {
  cleanup: Cleanup;
}

export async function startEmbedded(b: Bench): Promise<{ serve: ServeProcess; video: Ingested; commandLine: string }> {
  const dataDir = path.join(b.runDir, 'embedded');
  const extra = ['--workers', String(b.o.workers)];
  const serve = await startServe(b, '(a) embedded serve', dataDir, extra, b.env);
  const video = await ingest(b, serve, b.clip);
  return { serve, video, commandLine: `wmark serve --render full ${extra.join(' ')}` };
}

export async function startFarm(b: Bench): Promise<Farm> {
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
