// An engine with a render farm attached, in this process: a private redis-server and an in-process segment worker on
// the engine's media folder. The engine encodes no segment itself, and GET /healthz says where the work goes.

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testFarmDeployment } from '../../harness/cluster.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { call, ingestOverHttp, keyHeaders, parseM3u8, serveInProcess, type TestApp, waitFor } from '../../harness/serve-helpers.js';
import { countingRunner, FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import { createCredential } from '../../src/engine/app/credentials.js';
import { inProcessJobQueue } from '../../src/engine/app/job-runs.js';
import { LocalService } from '../../src/engine/app/local-service.js';
import { STATUS_TIMEOUT_MS } from '../../src/farm/farm-renderer.js';
import { type RunningFarmWorker, startFarmWorker } from '../../src/farm/farm-worker.js';
import { TaskQueue } from '../../src/farm/task-queue.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import { createApp } from '../../src/server/app/app.js';
import { VERSION } from '../../src/version.js';
import { decodesCleanly } from '../helpers/media.js';

let redis: TestRedis;
let engine: TestEngine;
let s: TestApp;
let worker: RunningFarmWorker;
let store: FolderMediaStore;
/** When each of the worker's encodes ran (ms since the epoch). */
const encodeTimes: { start: number; end: number }[] = [];
const realRunner = createProcessRunner(FFMPEG, FFPROBE);
/** The worker's ffmpeg calls: its encodes are the farm's segment renders. */
const workerRunner = countingRunner({
  ...realRunner,
  async ffmpeg(args, options) {
    const start = Date.now();
    try {
      return await realRunner.ffmpeg(args, options);
    } finally {
      if (args.includes('libx264')) encodeTimes.push({ start, end: Date.now() });
    }
  },
});

beforeAll(async () => {
  redis = await startRedis();
  engine = await testEngine({ deployment: testFarmDeployment(await TaskQueue.open(redis.url, { pollMs: 500 }), redis.url) });
  store = new FolderMediaStore(engine.paths.media);
  worker = await startFarmWorker({ queueUrl: redis.url, store, runner: workerRunner, tools: { ffmpeg: FFMPEG, font: FONT }, threads: 1, concurrency: 4 });
  s = await serveInProcess(engine);
});
afterAll(async () => {
  await s?.close();
  store?.close();
  await engine?.dispose();
  await redis?.stop();
});

/** Waits until the watermark at `href` is READY (with its mp4, when asked), failing at once if it FAILED. */
async function untilReady(href: string, options: { mp4?: boolean; timeoutMs?: number } = {}): Promise<void> {
  await waitFor(
    async () => {
      const r = await call(s.app, 'GET', href);
      expect(r.json.status).not.toBe('FAILED');
      return r.json.status === 'READY' && (!options.mp4 || r.json.containers.mp4) ? true : undefined;
    },
    `the watermark to be READY${options.mp4 ? ' with its mp4' : ''}`,
    options.timeoutMs ?? 60_000,
    200,
  );
}

describe('serve with a render farm, in process', () => {
  it('renders a watermark on the worker: the engine itself encodes no segment', async () => {
    const { video } = await ingestOverHttp(s.app, s.v1, await natural(10), 'farm-in-process', '1.0');
    const encodesAfterIngest = engine.runner.encodes();
    const posted = await call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body: { key: 'farm-in-process', settings: [{ content: 'on the farm' }] } });
    expect(posted.status, posted.text).toBe(201);
    await untilReady(posted.json.href, { mp4: true });
    expect(await store.list(`watermarks/${video.id}/${posted.json.id}/seg_`)).toHaveLength(video.segments);
    // The mp4 join copies streams (no libx264); segment renders would each be one.
    expect(engine.runner.encodes()).toBe(encodesAfterIngest);
  });

  it("a new watermark's opening segments go out at once: free workers render them side by side, not one after another", async () => {
    const { video } = await ingestOverHttp(s.app, s.v1, await natural(10), 'farm-opening', '1.0');
    expect(video.segments).toBeGreaterThanOrEqual(4);
    const from = encodeTimes.length;
    const posted = await call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body: { key: 'farm-opening', settings: [{ content: 'opening' }] } });
    expect(posted.status, posted.text).toBe(201);
    await untilReady(posted.json.href);
    // The worker takes 4 tasks at once: the first two renders overlap (one after the other, the second would start
    // only once the first ended).
    const [a, b] = encodeTimes.slice(from).sort((x, y) => x.start - y.start);
    expect(b!.start).toBeLessThan(a!.end);
  });

  it('identical requests at the same moment make one watermark, each of its segments rendered once on the farm', async () => {
    const { video } = await ingestOverHttp(s.app, s.v1, await natural(10), 'farm-twins', '1.0');
    const before = workerRunner.encodes();
    const body = { key: 'farm-twins', settings: [{ content: 'asked twice' }] };
    const [a, b] = await Promise.all([
      call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body }),
      call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body }),
    ]);
    expect(a.json.id).toBe(b.json.id);
    await untilReady(a.json.href);
    expect(workerRunner.encodes() - before).toBe(video.segments);
  });

  it("on demand (serve's default): a player's request waits for the worker to render its segment, and the next ones follow", async () => {
    const queue = inProcessJobQueue(engine, { concurrency: 2, adoptAll: true });
    const service = new LocalService(engine, { queue, baseUrl: 'http://wmark.test', render: 'on-demand' });
    const app = createApp({ service, linkBase: 'http://wmark.test', tokenTtlSeconds: 3600 });
    const headers = keyHeaders(await createCredential(engine, 'farm on demand'));
    try {
      const { video } = await ingestVideo(engine, { source: await natural(20), key: 'farm-on-demand' });
      const before = { engine: engine.runner.encodes(), worker: workerRunner.encodes() };
      const created = await call(app, 'POST', '/2.0/watermark', {
        headers,
        body: { key: 'farm-on-demand', settings: [{ content: 'asked for by a player' }], containers: ['m3u8'] },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.json.status).toBe('READY');
      const dir = path.join(engine.paths.media, 'watermarks', video.id, created.json.id);
      const playlist = await call(app, 'GET', created.json.containers.m3u8);
      const urls = parseM3u8(playlist.text).segments.map((seg) => new URL(seg.uri, created.json.containers.m3u8).href);
      const last = urls.length - 1;
      expect(existsSync(path.join(dir, segmentFileName(last - 2)))).toBe(false);
      const reply = await call(app, 'GET', urls[last - 2]!);
      expect(reply.status).toBe(200);
      expect(reply.body.length).toBeGreaterThan(1000);
      // Render-ahead: the two after it come without being asked.
      await waitFor(
        () => (existsSync(path.join(dir, segmentFileName(last))) && existsSync(path.join(dir, segmentFileName(last - 1))) ? true : undefined),
        'render-ahead on the farm',
      );
      await decodesCleanly(path.join(dir, segmentFileName(last - 2)));
      expect(engine.runner.encodes()).toBe(before.engine);
      const opening = readdirSync(dir).filter((f) => /^seg_\d{5}\.ts$/.test(f)).length - 3;
      expect(workerRunner.encodes() - before.worker).toBe(opening + 3);
    } finally {
      await queue.close();
    }
  });

  it('a forensic viewer with text: each text-over-variant segment is rendered on the worker, into the shared folder', async () => {
    const { video } = await ingestVideo(engine, { source: await natural(300), key: 'farm-forensic', enableForensic: true });
    const encodesAfterIngest = engine.runner.encodes();
    const posted = await call(s.app, 'POST', '/1.0/watermark', {
      headers: s.v1,
      body: { key: 'farm-forensic', settings: [{ content: 'visible' }, { type: 'FORENSIC', content: 'AB' }] },
    });
    expect(posted.status, posted.text).toBe(201);
    await untilReady(posted.json.href, { mp4: true, timeoutMs: 180_000 });
    const segments = await store.list(`watermarks/${video.id}/${posted.json.id}/seg_`);
    expect(segments).toHaveLength(video.segments.length);
    // Rendered once per (text, variant, segment) under _shared/, then linked into the viewer's folder.
    expect((await store.list(`watermarks/${video.id}/_shared/`)).length).toBe(video.segments.length);
    expect(engine.runner.encodes()).toBe(encodesAfterIngest);
    await decodesCleanly(path.join(engine.paths.media, segments[1]!));
    // A 5-minute forensic ingest (four variants) runs here: over a minute on a quiet 2-core machine, twice that busy.
  }, 400_000);

  it('GET /healthz reports the queue, its depth and the connected workers', async () => {
    const r = await call(s.app, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      ok: true,
      ready: true,
      dependencies: [{ name: 'queue', up: true, location: redis.url }],
      queue: { url: redis.url, media: engine.paths.media, reachable: true, depth: { waiting: 0, active: 0 }, workers: [{ id: worker.id, version: VERSION }] },
    });
    // The renderer counts the farm's tasks itself, for /metrics: none waiting, none rendering.
    expect(await engine.renderer.taskDepth()).toEqual({ waiting: 0, active: 0 });
    // Readiness: the one dependency (the media folder is this machine's) answers.
    const ready = await call(s.app, 'GET', '/readyz');
    expect([ready.status, ready.json]).toEqual([200, { ready: true, dependencies: [{ name: 'queue', up: true, location: redis.url }] }]);
  });

  it("GET /healthz from another machine tells the queue's health only: no queue URL, no media store, no worker host names", async () => {
    const r = await s.app.handle({
      method: 'GET',
      rawUrl: '/healthz',
      path: '/healthz',
      url: new URL('http://wmark.test/healthz'),
      headers: {},
      remoteAddress: '198.51.100.7',
      body: async () => undefined,
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(String(r.body))).toEqual({
      ok: true,
      ready: true,
      dependencies: [{ name: 'queue', up: true }],
      queue: { reachable: true, depth: { waiting: 0, active: 0 }, workers: [{ version: VERSION }] },
    });
    const local = await fromAddress('/healthz', '::ffff:127.0.0.1');
    expect(JSON.parse(String(local.body)).queue.workers).toEqual([{ id: worker.id, version: VERSION }]);
    const ready = await fromAddress('/readyz', '198.51.100.7');
    expect([ready.status, JSON.parse(String(ready.body))]).toEqual([200, { ready: true, dependencies: [{ name: 'queue', up: true }] }]);
  });

  it('GET /healthz still answers, quickly, while Redis is down, /readyz says it is not ready, work is refused at once, and serve still shuts down', async () => {
    await ingestVideo(engine, { source: await natural(4), key: 'farm-down' });
    await worker.close();
    await redis.stop();
    const started = Date.now();
    const r = await call(s.app, 'GET', '/healthz');
    expect(Date.now() - started).toBeLessThan(STATUS_TIMEOUT_MS + 1_000);
    expect(r.json).toMatchObject({ ok: true, ready: false, queue: { url: redis.url, reachable: false, depth: null, workers: null } });
    expect(await engine.renderer.taskDepth()).toBeUndefined();
    // Not ready, naming the queue: where it is and why for this machine, its state only for another.
    const ready = await call(s.app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(ready.json).toMatchObject({ ready: false, code: 'QUEUE_UNAVAILABLE', dependencies: [{ name: 'queue', up: false, location: redis.url }] });
    expect(ready.json.dependencies[0].reason).toEqual(expect.any(String));
    const remote = await fromAddress('/readyz', '198.51.100.7');
    expect(remote.status).toBe(503);
    expect(JSON.parse(String(remote.body)).dependencies).toEqual([{ name: 'queue', up: false, downSince: expect.any(Number) }]);
    // Work that needs the queue is refused at once, with its 503, instead of waiting for Redis.
    const asked = Date.now();
    const posted = await call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body: { key: 'farm-down', settings: [{ content: 'while Redis is down' }] } });
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect([posted.status, posted.json.code]).toEqual([503, 'QUEUE_UNAVAILABLE']);
    const closing = Date.now();
    await engine.renderer.close();
    expect(Date.now() - closing).toBeLessThan(5_000);
  });
});

/** A GET of `route` as if from `remoteAddress` (in-process calls come from this machine). */
function fromAddress(route: string, remoteAddress: string) {
  return s.app.handle({
    method: 'GET',
    rawUrl: route,
    path: route,
    url: new URL(`http://wmark.test${route}`),
    headers: {},
    remoteAddress,
    body: async () => undefined,
  });
}
