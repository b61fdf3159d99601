// A render farm whose dependencies fail mid-load, one table row a dependency, with real processes: a private
// redis-server, an S3-protocol server (s3rver) on loopback, `wmark serve --queue` (with `--media s3://…` where the row
// needs the bucket) and two `wmark worker`s. The queue's Redis is SIGKILLed and restarted empty; the media store stops
// answering and comes back. For each: while it is away no request hangs and none takes more than 5 s; what needs it is
// 503 with its code and Retry-After, the rest answers as usual; /readyz flips both ways with no restart; each side logs
// the loss once and the return once; every job started before ends READY with segments that decode; and the requests
// that got 503 succeed when sent again. Then serve and workers stop within their bound on SIGTERM while it is away, and
// the job cut off resumes with nothing lost.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWmark } from '../../harness/cli-helpers.js';
import { natural } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { call, freePort, ingestOverHttp, waitFor } from '../../harness/serve-helpers.js';
import {
  answered,
  askForWork,
  busyFarm,
  everyJobDecodes,
  expectOutageAnswers,
  expectQuietReconnects,
  type FaultFarm,
  faultFarm,
  readyAndDecodes,
  type Served,
  startJob,
  stopTimed,
} from '../helpers/fault-farm.js';
import { finishedRenders, type Load, startedBetween, startedRenders, summary } from '../helpers/fault-load.js';

const BUCKET = 'wmark-faults';
let redis: TestRedis;
let s3: TestS3;
let source: string;
const loads: Load[] = [];

/** One dependency that fails: how, what serve then answers, and what the recovery must show. */
interface Dependency {
  /** The suite's name: what fails and how. */
  title: string;
  label: string;
  /** As /readyz and the logs name it, and its URL's scheme. */
  name: 'queue' | 'media store';
  scheme: 'redis' | 's3';
  code: 'QUEUE_UNAVAILABLE' | 'MEDIA_STORE_UNAVAILABLE';
  farm(): FaultFarm;
  fail(): Promise<void>;
  restore(): Promise<void>;
  /** How long it stays away. */
  awayMs: number;
  /** Besides /readyz and new work: what lives only in it, so is 503 too while it is away. */
  alsoUnavailable: string[];
  /** /readyz's dependencies once it is back. */
  dependencies(): unknown[];
  /** Segment renders the whole test makes: the 5 jobs' segments, plus those whose upload the outage cut off. */
  renders(segments: number): { atLeast: number; atMost: number };
  /** How long the new watermark asked for while it was away may take once it is back. */
  resentWithinMs: number;
  /** The CLI's remote mode, asked while it is away, sends its request again by itself (the queue's 503 case). */
  cliResends: boolean;
  /** A worker asked twice to stop leaves at once, and the one that stops with a task in hand says it hands it back. */
  stopDetails: boolean;
}

const DEPENDENCIES: Dependency[] = [
  {
    title: 'its Redis is SIGKILLed mid-load',
    label: 'fault-redis',
    name: 'queue',
    scheme: 'redis',
    code: 'QUEUE_UNAVAILABLE',
    farm: () => queueFarm,
    fail: () => redis.kill(),
    restore: () => redis.restart(),
    awayMs: 7_000,
    alsoUnavailable: [],
    dependencies: () => [{ name: 'queue', up: true, location: redis.url }],
    renders: (segments) => ({ atLeast: segments * 5, atMost: segments * 5 }),
    resentWithinMs: 60_000,
    cliResends: true,
    stopDetails: true,
  },
  {
    title: 'its media store (s3rver) stops mid-load',
    label: 'fault-s3',
    name: 'media store',
    scheme: 's3',
    code: 'MEDIA_STORE_UNAVAILABLE',
    farm: () => bucketFarm,
    fail: () => s3.halt(),
    restore: () => s3.restart(),
    awayMs: 8_000,
    // The media lives in the bucket only: while it is away, so are they (503, never a 404 or a cut file).
    alsoUnavailable: ['playlist', 'segment'],
    dependencies: () => [
      { name: 'queue', up: true, location: redis.url },
      { name: 'media', up: true, location: `s3://${BUCKET}/farm/` },
    ],
    // A segment whose upload the outage cut off is rendered again (one per worker at most); no other is.
    renders: (segments) => ({ atLeast: segments * 4, atMost: segments * 4 + 2 }),
    // An ingest accepted in the moment before the bucket was known to be away waited for it.
    resentWithinMs: 90_000,
    cliResends: false,
    stopDetails: false,
  },
];

let queueFarm: FaultFarm;
let bucketFarm: FaultFarm;

beforeAll(async () => {
  [redis, s3, source] = await Promise.all([startRedis(), startS3({ buckets: [BUCKET] }), natural(8)]);
  queueFarm = faultFarm({ queue: () => redis.url });
  bucketFarm = faultFarm({ queue: () => redis.url, bucket: { media: `s3://${BUCKET}/farm`, endpoint: s3.endpoint, env: s3.env } });
});
afterEach(async () => {
  await Promise.all(loads.splice(0).map((l) => l.stop()));
  await Promise.all([queueFarm.cleanup(), bucketFarm.cleanup()]);
  // A test that failed with the bucket away leaves the next one a bucket.
  if ((await fetch(s3.endpoint).catch(() => undefined)) === undefined) await s3.restart();
  // Each test starts on an empty queue (an empty Redis, up): one that failed left jobs behind, and perhaps Redis down,
  // and its jobs would keep the next test's workers busy.
  await redis.restart();
});
afterAll(async () => {
  await s3?.stop();
  await redis?.stop();
  queueFarm?.dispose();
  bucketFarm?.dispose();
});

/** `wmark watermark --remote` started now against `s`, to finish once the dependency is back. */
function remoteCli(farm: FaultFarm, s: Served) {
  const cliHome = farm.newDir('fault-cli');
  return startWmark(['--json', 'watermark', '--remote', s.base, '--key', 'fault-clip', '--text', 'retried by the CLI', '--containers', 'm3u8'], {
    env: {
      WMARK_CLIENT_ID: s.credentials.clientId,
      WMARK_API_KEY: s.credentials.apiKey,
      WMARK_CONFIG_DIR: path.join(cliHome, 'config'),
      WMARK_HOME: cliHome,
    },
  });
}

describe.each(DEPENDENCIES)('a render farm whose $title', (dep) => {
  it(`answers every request within 5 s while the ${dep.name} is away, flips /readyz both ways, and finishes every job started before`, async () => {
    const farm = dep.farm();
    const { s, workers, segments, jobs, load, rendered } = await busyFarm(farm, dep.label, source);
    loads.push(load);

    const failedAt = Date.now();
    await dep.fail();
    // Work asked for from now on needs the dependency: the same two requests, sent again and again until they succeed.
    const asking = askForWork(s, 'fault-clip', source, `asked for while the ${dep.name} is away`);
    loads.push(asking);
    const notReady = await answered(load, 'readyz', failedAt, 503, '/readyz: 503', 10_000);
    expect(notReady.code).toBe(dep.code);
    expect(notReady.start - failedAt).toBeLessThan(5_000);
    const cli = dep.cliResends ? remoteCli(farm, s) : undefined;
    await new Promise((r) => setTimeout(r, dep.awayMs));
    const restoredAt = Date.now();
    await dep.restore();
    await answered(load, 'readyz', restoredAt, 200, '/readyz: 200 again');
    // Sent again, both succeed: the ingest is accepted, and the watermark the 2.0 request had recorded before its 503
    // starts its job and plays.
    await answered(asking, 'new watermark 2.0', restoredAt, 200, 'the 2.0 request to succeed', dep.resentWithinMs);
    await answered(asking, 'ingest', restoredAt, 200, 'the ingest to be accepted', 60_000);
    await Promise.all([load.stop(), asking.stop()]);

    // From the moment /readyz said so until it was back, and before /readyz said so too: nothing waited on it. What
    // needs it is 503 with its code; the rest answers as usual.
    const all = [...load.samples, ...asking.samples];
    const unavailable = { status: 503, code: dep.code };
    const ok = { status: 200 };
    const answers: Record<string, { status: number; code?: string }> = {
      readyz: unavailable,
      'new watermark 2.0': unavailable,
      ingest: unavailable,
      healthz: ok,
      token: ok,
      videos: ok,
      'status link': ok,
      playlist: ok,
      segment: ok,
    };
    for (const kind of dep.alsoUnavailable) answers[kind] = unavailable;
    expectOutageAnswers(all, notReady.start, restoredAt, answers);
    expect(Math.max(...startedBetween(all, failedAt, restoredAt).map((x) => x.ms)), JSON.stringify(summary(all))).toBeLessThanOrEqual(5_000);
    const readyz = await call(s.base, 'GET', '/readyz');
    expect(readyz.status).toBe(200);
    expect(readyz.json).toEqual({ ready: true, dependencies: dep.dependencies() });

    if (cli) {
      // The CLI got its watermark once the dependency was back.
      const done = await cli.done;
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'READY' });
    }
    // Every job started before the fault ends READY and every segment decodes; none was rendered more often than the
    // row allows (nor were the watermarks asked for during the fault).
    expect(await everyJobDecodes(farm, s, jobs, rendered, dep.renders(segments))).toBe(segments * 3);
    expectQuietReconnects([...workers.map((w) => w.stderr()), s.proc.stderr()], dep.name, dep.scheme);
  });

  it(`serve and workers stop within their bound on SIGTERM while the ${dep.name} is away; the job cut off resumes`, async () => {
    const farm = dep.farm();
    const dir = farm.newDir(`${dep.label}-stop`);
    const port = await freePort();
    const s = await farm.serve(dir, ['--shutdown-timeout', '3'], port);
    // Workers that each take a segment and take long over it; one more on another Redis database, with nothing to do.
    const busy = await farm.worker(dir, 'busy', 30, ['--shutdown-timeout', '2']);
    const stubborn = dep.stopDetails ? await farm.worker(dir, 'stubborn', 30) : undefined;
    const idle = await farm.worker(dir, 'idle', 0, [], `${redis.url}/1`);
    const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
    const job = await startJob(s, 'fault-clip', 'cut off mid-render');
    const rendering = [busy, ...(stubborn ? [stubborn] : [])];
    await waitFor(() => (rendering.every((w) => startedRenders(w.log) > 0) ? true : undefined), 'the workers to render', 60_000, 50);

    await dep.fail();
    await new Promise((r) => setTimeout(r, 500));
    // Idle: nothing in hand, so it does not wait for the dependency at all.
    expect(await stopTimed((sig) => idle.child.kill(sig), idle.done)).toBeLessThan(3_000);
    expect((await idle.done).code).toBe(0);
    // A task in hand: its 2 s, then it is stopped and the worker leaves.
    expect(await stopTimed((sig) => busy.child.kill(sig), busy.done)).toBeLessThan(2_000 + 3_000);
    if (stubborn) {
      expect(busy.stderr()).toMatch(/stopping 1 task\(s\) still running: they go back to the queue/);
      // Asked twice, a worker leaves at once, whatever it waits for.
      expect(await stopTimed((sig) => stubborn.child.kill(sig), stubborn.done, 2)).toBeLessThan(1_500);
      expect((await stubborn.done).code).toBe(130);
    } else expect((await busy.done).code).toBe(0);
    // serve: its requests in flight get 3 s; nothing waits for the dependency beyond that.
    expect(await stopTimed((sig) => s.proc.kill(sig), s.proc.exited)).toBeLessThan(3_000 + 3_000);
    expect(await s.proc.exited).toBe(0);

    // Back (Redis empty), a new serve and a worker: the job cut off resumes and ends READY, each segment rendered once.
    await dep.restore();
    const again = await farm.serve(dir, [], port);
    const rescuer = await farm.worker(dir, 'rescuer', 0);
    expect(await readyAndDecodes(again, job.href, farm.newDir(`${dep.label}-stop-fetched`))).toBe(video.segments);
    expect(rendering.reduce((n, w) => n + finishedRenders(w.log), 0)).toBe(0);
    expect(finishedRenders(rescuer.log)).toBe(video.segments);
  });
});

describe('a render farm whose Redis is up', () => {
  it('hands the task a stopping worker could not finish back to the queue at once, not after its lock expires', async () => {
    const dir = queueFarm.newDir('fault-redis-handback');
    const s = await queueFarm.serve(dir);
    // The default 30 s lock: a task left to expire would wait that long for another worker.
    const slow = await queueFarm.worker(dir, 'slow', 30, ['--shutdown-timeout', '1', '--lock-timeout', '30']);
    const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
    const job = await startJob(s, 'fault-clip', 'handed back');
    await waitFor(() => (startedRenders(slow.log) > 0 ? true : undefined), 'the slow worker to start a render', 60_000, 50);
    const other = await queueFarm.worker(dir, 'other', 0);
    expect(await stopTimed((sig) => slow.child.kill(sig), slow.done)).toBeLessThan(1_000 + 3_000);
    const stoppedAt = Date.now();
    expect(await readyAndDecodes(s, job.href, queueFarm.newDir('fault-redis-handback-fetched'))).toBe(video.segments);
    expect(Date.now() - stoppedAt).toBeLessThan(25_000);
    expect(finishedRenders(slow.log)).toBe(0);
    expect(finishedRenders(other.log)).toBe(video.segments);
  });
});
