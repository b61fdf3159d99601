// An engine whose media lives in a shared store (serve --queue … --media s3://… or --media /mnt/…), in this process: a
// private redis-server, s3rver on loopback (or a folder that is not serve's own), and an in-process segment worker on
// the same store. On demand, a player's request waits for the worker's render in the store and is streamed from there;
// deleting a watermark while its segment renders removes what the worker writes after; replacing a video removes its
// objects.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testFarmDeployment } from '../../harness/cluster.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, natural, tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { call, keyHeaders, parseM3u8, waitFor } from '../../harness/serve-helpers.js';
import { FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import { createCredential } from '../../src/engine/app/credentials.js';
import { inProcessJobQueue } from '../../src/engine/app/job-runs.js';
import { LocalService } from '../../src/engine/app/local-service.js';
import { jobId } from '../../src/engine/jobs/job-lease.js';
import type { InProcessJobQueue } from '../../src/engine/jobs/job-queue.js';
import { type RunningFarmWorker, startFarmWorker } from '../../src/farm/farm-worker.js';
import { TaskQueue } from '../../src/farm/task-queue.js';
import { createProcessRunner, type ProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { type App, createApp } from '../../src/server/app/app.js';
import { solidImage } from '../helpers/images.js';
import { decodeFrame } from '../helpers/media.js';
import { colourBox } from '../helpers/watermark-helpers.js';

let redis: TestRedis;
let s3: TestS3;
let sharedRoot: string;

beforeAll(async () => {
  [redis, s3] = await Promise.all([startRedis(), startS3({ buckets: ['wmark-serve'] })]);
  sharedRoot = tempDir('serve-shared-folder');
});
afterAll(async () => {
  await Promise.all([redis?.stop(), s3?.stop()]);
  if (sharedRoot) rmSync(sharedRoot, { recursive: true, force: true });
});

/** The same cases for a bucket and for a folder other than serve's own (a mount every machine shares). */
const kinds: [string, () => string, number][] = [
  ['an S3 bucket', () => 's3://wmark-serve/media', 1],
  ['a shared folder', () => sharedRoot, 2],
];

describe.each(kinds)('serve with its media in %s, in process', (_kind, mediaUrl, db) => {
  let engine: TestEngine;
  let store: MediaStore;
  let workerStore: MediaStore;
  let worker: RunningFarmWorker;
  let jobs: InProcessJobQueue;
  let app: App;
  let headers: Record<string, string>;
  /** Seconds the worker's next segment renders wait before ffmpeg starts (0: none). */
  let renderDelay = 0;

  beforeAll(async () => {
    const open = () => openMediaStore(mediaUrl(), { endpoint: s3.endpoint, credentials: s3.credentials });
    const queueUrl = `${redis.url}/${db}`;
    store = open();
    engine = await testEngine({
      deployment: testFarmDeployment(await TaskQueue.open(queueUrl, { pollMs: 500 }), queueUrl, { media: store, ingestOnFarm: true }),
    });
    const real = createProcessRunner(FFMPEG, FFPROBE);
    const slow: ProcessRunner = {
      ffmpeg: async (args, options) => {
        if (renderDelay && args.includes('-filter_script:v')) await new Promise((resolve) => setTimeout(resolve, renderDelay * 1000));
        return real.ffmpeg(args, options);
      },
      ffprobe: (args, options) => real.ffprobe(args, options),
      x264: (bin, args, options) => real.x264(bin, args, options),
    };
    // Its own view of the store, as a worker on another machine has.
    workerStore = open();
    worker = await startFarmWorker({ queueUrl, store: workerStore, runner: slow, tools: { ffmpeg: FFMPEG, font: FONT }, threads: 1, concurrency: 2 });
    jobs = inProcessJobQueue(engine, { concurrency: 2, adoptAll: true });
    app = createApp({
      service: new LocalService(engine, { queue: jobs, baseUrl: 'http://wmark.test', render: 'on-demand' }),
      linkBase: 'http://wmark.test',
      tokenTtlSeconds: 3600,
    });
    await jobs.resume();
    headers = keyHeaders(await createCredential(engine, 'farm with a shared store'));
  });
  afterAll(async () => {
    await jobs?.close();
    await worker?.close({ force: true });
    store?.close();
    workerStore?.close();
    await engine?.dispose();
  });

  async function objectBytes(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await store.openRange(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** An on-demand watermark of the video under `key`: its id and the signed URL of each segment. */
  async function onDemand(key: string, text: string): Promise<{ id: string; urls: string[] }> {
    const created = await call(app, 'POST', '/2.0/watermark', { headers, body: { key, settings: [{ content: text }], containers: ['m3u8'] } });
    expect(created.status, created.text).toBe(201);
    const playlist = await call(app, 'GET', created.json.containers.m3u8);
    expect(playlist.status, playlist.text).toBe(200);
    // Playable now; its job still renders the rest of the opening, and a watermark being rendered cannot be deleted.
    await waitFor(
      async () => ((await engine.store.getJob(jobId('watermark', created.json.id)))?.status === 'done' ? true : undefined),
      'the opening to be rendered',
      60_000,
      50,
    );
    return { id: created.json.id, urls: parseM3u8(playlist.text).segments.map((s) => new URL(s.uri, created.json.containers.m3u8).href) };
  }

  it("on demand: a player's request waits for the worker to render into the store and gets those bytes; render-ahead lands there too", async () => {
    const { video } = await ingestVideo(engine, { source: await natural(20), key: 'bucket-on-demand' });
    expect(await store.list(`videos/${video.id}/seg_`)).toHaveLength(video.segments.length);
    const w = await onDemand('bucket-on-demand', 'asked for by a player');
    const prefix = `watermarks/${video.id}/${w.id}/`;
    const last = w.urls.length - 1;
    expect(await store.exists(`${prefix}${segmentFileName(last - 2)}`)).toBe(false);
    const reply = await call(app, 'GET', w.urls[last - 2]!);
    expect(reply.status).toBe(200);
    expect(reply.body.equals(await objectBytes(`${prefix}${segmentFileName(last - 2)}`))).toBe(true);
    await waitFor(
      async () =>
        (await store.exists(`${prefix}${segmentFileName(last)}`)) && (await store.exists(`${prefix}${segmentFileName(last - 1)}`)) ? true : undefined,
      'render-ahead into the store',
    );
    // The playlist is in the bucket too; no rendered segment is on serve's disk.
    expect(await store.exists(`${prefix}video.m3u8`)).toBe(true);
    expect(existsSync(path.join(engine.paths.media, 'watermarks', video.id, w.id, segmentFileName(last - 2)))).toBe(false);
  });

  it('a logo: serve keeps the checked image and its rendition in the store, the worker fetches them by key and draws them', async () => {
    await ingestVideo(engine, { source: await flat('336699', 8), key: 'farm-logo' });
    const video = (await engine.store.getVideoByKey('farm-logo'))!;
    const logo = solidImage(path.join(tempDir('farm-logo'), 'red.png'), 'FF0000', 64, 32);
    const settings = [{ type: 'IMAGE', content: logo, x: 0.25, y: 0.25, align: 'LEFT', verticalAlign: 'TOP' }, { content: 'and text' }];
    const created = await call(app, 'POST', '/2.0/watermark', { headers, body: { key: 'farm-logo', settings, containers: ['m3u8'] } });
    expect(created.status, created.text).toBe(201);
    const stored = (await engine.store.getWatermark(created.json.id))!.settings[0] as { image: { sha256: string } };
    const sha = stored.image.sha256;
    expect(await store.list('images/')).toEqual(expect.arrayContaining([`images/${sha}.png`, `images/${sha}-64x32.png`]));
    // The first segment, rendered on the worker from the store (its scratch folder is gone), streamed from the store.
    const playlist = await call(app, 'GET', created.json.containers.m3u8);
    const first = new URL(parseM3u8(playlist.text).segments[0]!.uri, created.json.containers.m3u8).href;
    const reply = await call(app, 'GET', first);
    expect(reply.status).toBe(200);
    const file = path.join(tempDir('farm-logo-seg'), 'seg.ts');
    writeFileSync(file, reply.body);
    const frame = await decodeFrame(file, 0.2, { width: 320, height: 180 });
    expect(colourBox(frame, [255, 0, 0], 60)).toMatchObject({ x0: 80, x1: 143, y0: 44, y1: 75 });
    expect(existsSync(path.join(engine.paths.media, 'watermarks', video.id, created.json.id, segmentFileName(0)))).toBe(mediaUrl() === engine.paths.media);
  });

  it('a watermark deleted while the worker renders its segment: the player hears an error, and what the worker wrote goes again', async () => {
    await ingestVideo(engine, { source: await natural(20), key: 'bucket-deleted' });
    const video = (await engine.store.getVideoByKey('bucket-deleted'))!;
    const w = await onDemand('bucket-deleted', 'deleted mid-render');
    const prefix = `watermarks/${video.id}/${w.id}/`;
    renderDelay = 2;
    try {
      const asked = call(app, 'GET', w.urls[w.urls.length - 1]!);
      await new Promise((resolve) => setTimeout(resolve, 800));
      const service = new LocalService(engine, { queue: jobs, baseUrl: 'http://wmark.test' });
      await service.watermarks.delete(w.id);
      const reply = await asked;
      expect(reply.status).toBe(503);
      expect(reply.json.code).toBe('CANCELLED');
      // The worker's segment (and its render-ahead) landed after the delete and were removed again.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      await waitFor(async () => ((await store.list(prefix)).length === 0 ? true : undefined), "the deleted watermark's objects to be gone", 15_000, 250);
    } finally {
      renderDelay = 0;
    }
  });

  it("re-ingesting a key with replace removes the old video's objects (working media and watermarks) from the bucket", async () => {
    const { video: old } = await ingestVideo(engine, { source: await natural(10), key: 'bucket-replaced' });
    const w = await onDemand('bucket-replaced', 'replaced soon');
    await call(app, 'GET', w.urls[0]!);
    expect((await store.list(`watermarks/${old.id}/`)).length).toBeGreaterThan(0);
    // Its render-ahead in the bucket first: a task landing after the replace is another case (the test above).
    const prefix = `watermarks/${old.id}/${w.id}/`;
    await waitFor(
      async () => ((await store.exists(`${prefix}${segmentFileName(1)}`)) && (await store.exists(`${prefix}${segmentFileName(2)}`)) ? true : undefined),
      'render-ahead into the store',
    );
    const { video: fresh } = await ingestVideo(engine, { source: await natural(20), key: 'bucket-replaced', replace: true });
    expect(fresh.id).not.toBe(old.id);
    expect(await store.list(`videos/${old.id}/`)).toEqual([]);
    expect(await store.list(`watermarks/${old.id}/`)).toEqual([]);
    expect(await store.list(`videos/${fresh.id}/seg_`)).toHaveLength(fresh.segments.length);
  });
});
