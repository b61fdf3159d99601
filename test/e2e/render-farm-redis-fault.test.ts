// A render farm whose Redis is SIGKILLed mid-load and restarted empty, with real processes: a private redis-server,
// `wmark serve --queue` and two `wmark worker`s on its media folder (the shared-mount case). While Redis is down no
// request hangs and none takes more than 5 s; what needs the queue is 503 QUEUE_UNAVAILABLE with Retry-After, the rest
// answers as usual; /readyz flips both ways with no restart; each side logs the loss once and the return once; every
// job started before ends READY with segments that decode, each rendered once; and a request that got 503 succeeds
// when sent again (the CLI's remote mode does so by itself). Then: serve and workers stop within their bound on
// SIGTERM while Redis is down, a second SIGTERM stops at once, and the job cut off resumes with nothing lost.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWmark } from '../../harness/cli-helpers.js';
import { natural } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { call, freePort, ingestOverHttp, waitFor } from '../../harness/serve-helpers.js';
import {
  answered,
  askForWork,
  busyFarm,
  everyJobDecodes,
  expectOutageAnswers,
  expectQuietReconnects,
  faultFarm,
  readyAndDecodes,
  startJob,
  stopTimed,
} from '../helpers/fault-farm.js';
import { finishedRenders, type Load, startedRenders } from '../helpers/fault-load.js';

let redis: TestRedis;
let source: string;
const farm = faultFarm({ queue: () => redis.url });
const loads: Load[] = [];

beforeAll(async () => {
  [redis, source] = await Promise.all([startRedis(), natural(8)]);
});
afterEach(async () => {
  await Promise.all(loads.splice(0).map((l) => l.stop()));
  await farm.cleanup();
  // Each test starts on an empty queue (an empty Redis, up): one that failed left jobs behind, and perhaps Redis down,
  // and its jobs would keep the next test's workers busy.
  await redis.restart();
});
afterAll(async () => {
  await redis?.stop();
  farm.dispose();
});

describe('a render farm whose Redis is SIGKILLed mid-load', () => {
  it('answers every request within 5 s while Redis is down, flips /readyz both ways, and finishes every job started before', async () => {
    const { s, workers, segments, jobs, load, rendered } = await busyFarm(farm, 'fault-redis', source);
    loads.push(load);

    const killedAt = Date.now();
    await redis.kill();
    // Work asked for from now on needs the queue: the same two requests, sent again and again until they succeed.
    const asking = askForWork(s, 'fault-clip', source, 'asked for while Redis is down');
    loads.push(asking);
    const notReady = await answered(load, 'readyz', killedAt, 503, '/readyz: 503', 10_000);
    expect(notReady.code).toBe('QUEUE_UNAVAILABLE');
    expect(notReady.start - killedAt).toBeLessThan(5_000);
    // The CLI's remote mode, asked while Redis is down, sends its request again by itself until it is back.
    const cliHome = farm.newDir('fault-cli');
    const cli = startWmark(['--json', 'watermark', '--remote', s.base, '--key', 'fault-clip', '--text', 'retried by the CLI', '--containers', 'm3u8'], {
      env: {
        WMARK_CLIENT_ID: s.credentials.clientId,
        WMARK_API_KEY: s.credentials.apiKey,
        WMARK_CONFIG_DIR: path.join(cliHome, 'config'),
        WMARK_HOME: cliHome,
      },
    });
    await new Promise((r) => setTimeout(r, 7_000));
    const restartedAt = Date.now();
    await redis.restart();
    await answered(load, 'readyz', restartedAt, 200, '/readyz: 200 again');
    // Sent again, both succeed: the ingest is accepted, and the watermark the 2.0 request had recorded before its 503
    // starts its job and plays.
    await answered(asking, 'new watermark 2.0', restartedAt, 200, 'the 2.0 request to succeed', 60_000);
    await answered(asking, 'ingest', restartedAt, 200, 'the ingest to be accepted', 60_000);
    await Promise.all([load.stop(), asking.stop()]);

    // What needs the queue is 503 QUEUE_UNAVAILABLE; the rest, the media already made included, answers as usual.
    const unavailable = { status: 503, code: 'QUEUE_UNAVAILABLE' };
    const ok = { status: 200 };
    expectOutageAnswers([...load.samples, ...asking.samples], notReady.start, restartedAt, {
      readyz: unavailable,
      'new watermark 2.0': unavailable,
      ingest: unavailable,
      healthz: ok,
      token: ok,
      videos: ok,
      'status link': ok,
      playlist: ok,
      segment: ok,
    });
    const readyz = await call(s.base, 'GET', '/readyz');
    expect(readyz.status).toBe(200);
    expect(readyz.json).toEqual({ ready: true, dependencies: [{ name: 'queue', up: true, location: redis.url }] });

    // The CLI got its watermark once the queue was back.
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'READY' });

    // Every job started before the fault ends READY, every segment decodes, and none was rendered twice (nor were the
    // watermarks asked for during the fault, by the 2.0 loop and the CLI).
    expect(await everyJobDecodes(farm, s, jobs, rendered, { atLeast: segments * 5, atMost: segments * 5 })).toBe(segments * 3);
    expectQuietReconnects([...workers.map((w) => w.stderr()), s.proc.stderr()], 'queue', 'redis');
  });

  it('serve and workers stop within their bound on SIGTERM while Redis is down; a second SIGTERM stops at once; the job cut off resumes', async () => {
    const dir = farm.newDir('fault-redis-stop');
    const port = await freePort();
    const s = await farm.serve(dir, ['--shutdown-timeout', '3'], port);
    // Two workers that each take a segment and take long over it; one more on another Redis database, with nothing to do.
    const busy = await farm.worker(dir, 'busy', 30, ['--shutdown-timeout', '2']);
    const stubborn = await farm.worker(dir, 'stubborn', 30);
    const idle = await farm.worker(dir, 'idle', 0, [], `${redis.url}/1`);
    const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
    const job = await startJob(s, 'fault-clip', 'cut off mid-render');
    await waitFor(() => (startedRenders(busy.log) > 0 && startedRenders(stubborn.log) > 0 ? true : undefined), 'both workers to render', 60_000, 50);

    await redis.kill();
    await new Promise((r) => setTimeout(r, 500));
    // Idle: nothing in hand, so it does not wait for Redis at all.
    expect(await stopTimed((sig) => idle.child.kill(sig), idle.done)).toBeLessThan(3_000);
    expect((await idle.done).code).toBe(0);
    // A task in hand: its 2 s, then it is stopped and the worker leaves.
    expect(await stopTimed((sig) => busy.child.kill(sig), busy.done)).toBeLessThan(2_000 + 3_000);
    expect(busy.stderr()).toMatch(/stopping 1 task\(s\) still running: they go back to the queue/);
    // Asked twice, a worker leaves at once, whatever it waits for.
    expect(await stopTimed((sig) => stubborn.child.kill(sig), stubborn.done, 2)).toBeLessThan(1_500);
    expect((await stubborn.done).code).toBe(130);
    // serve: its requests in flight get 3 s; nothing waits for Redis beyond that.
    expect(await stopTimed((sig) => s.proc.kill(sig), s.proc.exited)).toBeLessThan(3_000 + 3_000);
    expect(await s.proc.exited).toBe(0);

    // Redis back (empty), a new serve and a worker: the job cut off resumes and ends READY, each segment rendered once.
    await redis.restart();
    const again = await farm.serve(dir, [], port);
    const rescuer = await farm.worker(dir, 'rescuer', 0);
    expect(await readyAndDecodes(again, job.href, farm.newDir('fault-redis-stop-fetched'))).toBe(video.segments);
    expect(finishedRenders(busy.log) + finishedRenders(stubborn.log)).toBe(0);
    expect(finishedRenders(rescuer.log)).toBe(video.segments);
  });

  it('with Redis up, the task a stopping worker could not finish goes back to the queue at once, not after its lock expires', async () => {
    const dir = farm.newDir('fault-redis-handback');
    const s = await farm.serve(dir);
    // The default 30 s lock: a task left to expire would wait that long for another worker.
    const slow = await farm.worker(dir, 'slow', 30, ['--shutdown-timeout', '1', '--lock-timeout', '30']);
    const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
    const job = await startJob(s, 'fault-clip', 'handed back');
    await waitFor(() => (startedRenders(slow.log) > 0 ? true : undefined), 'the slow worker to start a render', 60_000, 50);
    const other = await farm.worker(dir, 'other', 0);
    expect(await stopTimed((sig) => slow.child.kill(sig), slow.done)).toBeLessThan(1_000 + 3_000);
    const stoppedAt = Date.now();
    expect(await readyAndDecodes(s, job.href, farm.newDir('fault-redis-handback-fetched'))).toBe(video.segments);
    expect(Date.now() - stoppedAt).toBeLessThan(25_000);
    expect(finishedRenders(slow.log)).toBe(0);
    expect(finishedRenders(other.log)).toBe(video.segments);
  });
});
