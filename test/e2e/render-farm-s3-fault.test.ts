// A render farm whose media store stops mid-load and comes back, with real processes: a private redis-server, an
// S3-protocol server (s3rver) on loopback, `wmark serve --queue --media s3://…` and two `wmark worker`s sharing only
// the bucket. While the bucket does not answer no request hangs and none takes more than 5 s: what needs the store
// (new work, and the media that lives only there) is 503 MEDIA_STORE_UNAVAILABLE with Retry-After, the rest answers as
// usual; /readyz flips both ways with no restart; each side logs the loss once and the return once; every job started
// before ends READY with segments that decode; and the requests that got 503 succeed when sent again. Then: serve and
// workers stop within their bound on SIGTERM while the bucket is away, and the job cut off resumes with nothing lost.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
  faultFarm,
  readyAndDecodes,
  startJob,
  stopTimed,
} from '../helpers/fault-farm.js';
import { finishedRenders, type Load, startedBetween, startedRenders, summary } from '../helpers/fault-load.js';

const BUCKET = 'wmark-faults';
let redis: TestRedis;
let s3: TestS3;
let source: string;
let farm: ReturnType<typeof faultFarm>;
const loads: Load[] = [];

beforeAll(async () => {
  [redis, s3, source] = await Promise.all([startRedis(), startS3({ buckets: [BUCKET] }), natural(8)]);
  farm = faultFarm({ queue: () => redis.url, bucket: { media: `s3://${BUCKET}/farm`, endpoint: s3.endpoint, env: s3.env } });
});
afterEach(async () => {
  await Promise.all(loads.splice(0).map((l) => l.stop()));
  await farm.cleanup();
  // A test that failed with the bucket away leaves the next one a bucket.
  if ((await fetch(s3.endpoint).catch(() => undefined)) === undefined) await s3.restart();
  // Each test starts on an empty queue: one that failed left jobs behind that would keep the next one's workers busy.
  await redis.restart();
});
afterAll(async () => {
  await s3?.stop();
  await redis?.stop();
  farm?.dispose();
});

describe('a render farm whose media store (s3rver) stops mid-load', () => {
  it('answers every request within 5 s while the bucket is away, flips /readyz both ways, and finishes every job started before', async () => {
    const { s, workers, segments, jobs, load, rendered } = await busyFarm(farm, 'fault-s3', source);
    loads.push(load);

    const haltedAt = Date.now();
    await s3.halt();
    // Work asked for from now on needs the store: the same two requests, sent again and again until they succeed.
    const asking = askForWork(s, 'fault-clip', source, 'asked for while the bucket is away');
    loads.push(asking);
    const notReady = await answered(load, 'readyz', haltedAt, 503, '/readyz: 503', 10_000);
    expect(notReady.code).toBe('MEDIA_STORE_UNAVAILABLE');
    expect(notReady.start - haltedAt).toBeLessThan(5_000);
    await new Promise((r) => setTimeout(r, 8_000));
    const restartedAt = Date.now();
    await s3.restart();
    await answered(load, 'readyz', restartedAt, 200, '/readyz: 200 again');
    // Sent again, both succeed (an ingest accepted in the moment before the bucket was known to be away waited for it).
    await answered(asking, 'new watermark 2.0', restartedAt, 200, 'the 2.0 request to succeed', 90_000);
    await answered(asking, 'ingest', restartedAt, 200, 'the ingest to be accepted', 60_000);
    await Promise.all([load.stop(), asking.stop()]);

    // From the moment /readyz said so until the bucket was back, and before /readyz said so too: nothing waited on
    // the dead bucket. The media lives in the bucket only: while it is away, so are they (503, never a 404 or a cut file).
    const all = [...load.samples, ...asking.samples];
    const unavailable = { status: 503, code: 'MEDIA_STORE_UNAVAILABLE' };
    const ok = { status: 200 };
    expectOutageAnswers(all, notReady.start, restartedAt, {
      readyz: unavailable,
      'new watermark 2.0': unavailable,
      ingest: unavailable,
      playlist: unavailable,
      segment: unavailable,
      healthz: ok,
      token: ok,
      videos: ok,
      'status link': ok,
    });
    expect(Math.max(...startedBetween(all, haltedAt, restartedAt).map((x) => x.ms)), JSON.stringify(summary(all))).toBeLessThanOrEqual(5_000);
    const readyz = await call(s.base, 'GET', '/readyz');
    expect(readyz.json).toEqual({
      ready: true,
      dependencies: [
        { name: 'queue', up: true, location: redis.url },
        { name: 'media', up: true, location: `s3://${BUCKET}/farm/` },
      ],
    });

    // Every job started before ends READY and every segment decodes. A segment whose upload the outage cut off is
    // rendered again (one per worker at most); no other is.
    expect(await everyJobDecodes(farm, s, jobs, rendered, { atLeast: segments * 4, atMost: segments * 4 + 2 })).toBe(segments * 3);
    expectQuietReconnects([...workers.map((w) => w.stderr()), s.proc.stderr()], 'media store', 's3');
  });

  it('serve and workers stop within their bound on SIGTERM while the bucket is away; the job cut off resumes', async () => {
    const dir = farm.newDir('fault-s3-stop');
    const port = await freePort();
    const s = await farm.serve(dir, ['--shutdown-timeout', '3'], port);
    const busy = await farm.worker(dir, 'busy', 30, ['--shutdown-timeout', '2']);
    const idle = await farm.worker(dir, 'idle', 0, [], `${redis.url}/1`);
    const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
    const job = await startJob(s, 'fault-clip', 'cut off mid-render');
    await waitFor(() => (startedRenders(busy.log) > 0 ? true : undefined), 'the busy worker to render', 60_000, 50);

    await s3.halt();
    await new Promise((r) => setTimeout(r, 500));
    expect(await stopTimed((sig) => idle.child.kill(sig), idle.done)).toBeLessThan(3_000);
    expect(await stopTimed((sig) => busy.child.kill(sig), busy.done)).toBeLessThan(2_000 + 3_000);
    expect((await busy.done).code).toBe(0);
    expect(await stopTimed((sig) => s.proc.kill(sig), s.proc.exited)).toBeLessThan(3_000 + 3_000);
    expect(await s.proc.exited).toBe(0);

    await s3.restart();
    const again = await farm.serve(dir, [], port);
    const rescuer = await farm.worker(dir, 'rescuer', 0);
    expect(await readyAndDecodes(again, job.href, farm.newDir('fault-s3-stop-fetched'))).toBe(video.segments);
    expect(finishedRenders(busy.log)).toBe(0);
    expect(finishedRenders(rescuer.log)).toBe(video.segments);
  });
});
