// On-demand rendering, as `wmark serve` does it by default: a new watermark renders its opening only, its playlist
// lists every segment, a segment a player asks for is rendered while the request waits (and the next ones are queued
// behind it), nothing is rendered twice, and a request for every output (mp4, CLI, `--render full`) renders the rest.
// Players need only the playlist, so these requests ask for the m3u8 container alone (the API's default adds the mp4).
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestVideo, type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { call, keyHeaders, parseM3u8, waitFor } from '../../harness/serve-helpers.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import { createCredential } from '../../src/engine/app/credentials.js';
import { inProcessJobQueue } from '../../src/engine/app/job-runs.js';
import { LocalService } from '../../src/engine/app/local-service.js';
import type { InProcessJobQueue } from '../../src/engine/jobs/job-queue.js';
import type { RenderMode } from '../../src/engine/state/state-store.js';
import { openingSegments } from '../../src/engine/watermark/watermark-job.js';
import { type App, createApp } from '../../src/server/app/app.js';
import { decodeFrame, decodesCleanly } from '../helpers/media.js';

const SIZE = { width: 320, height: 180 };
const KEY = 'on-demand-clip';

interface Served {
  engine: TestEngine;
  app: App;
  queue: InProcessJobQueue;
  headers: Record<string, string>;
  videoId: string;
  /** Encodes of the ingest, before any watermark. */
  ingestEncodes: number;
}

async function serve(render: RenderMode, source: string): Promise<Served> {
  const engine = await testEngine();
  const { video } = await ingestVideo(engine, { source, key: KEY });
  const queue = inProcessJobQueue(engine, { concurrency: 2, adoptAll: true });
  const service = new LocalService(engine, { queue, baseUrl: 'http://wmark.test', render });
  const app = createApp({ service, linkBase: 'http://wmark.test', tokenTtlSeconds: 3600 });
  return {
    engine,
    app,
    queue,
    headers: keyHeaders(await createCredential(engine, 'on-demand test')),
    videoId: video.id,
    ingestEncodes: engine.runner.encodes(),
  };
}

const segmentsOnDisk = (s: Served, id: string) =>
  readdirSync(watermarkDir(s.engine, s.videoId, id))
    .filter((f) => /^seg_\d{5}\.ts$/.test(f))
    .sort();

/** The job of a watermark is over (its opening is rendered, or everything in full mode). */
const jobDone = (s: Served, id: string) =>
  waitFor(async () => ((await s.engine.store.getJob(`watermark:${id}`))?.status === 'done' ? true : undefined), `job of ${id}`);

const get = (s: Served, url: string, headers: Record<string, string> = {}) => call(s.app, 'GET', url, { headers });

function meanAbsDiff(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

let source: string;
let s: Served;
let full: Served;
let watermark: any;
let segmentUrls: string[];
const settings = [{ content: 'viewer 42 on demand', fontSize: 0.1, fontOpacity: 1, y: 0.8 }];

beforeAll(async () => {
  source = await natural(20);
  s = await serve('on-demand', source);
  full = await serve('full', source);
  const created = await call(s.app, 'POST', '/2.0/watermark', {
    headers: s.headers,
    body: { key: KEY, settings, containers: ['m3u8'] },
  });
  if (created.status !== 201) throw new Error(`setup: ${created.status} ${created.text}`);
  watermark = created.json;
  await jobDone(s, watermark.id);
  const playlist = await get(s, watermark.containers.m3u8);
  segmentUrls = parseM3u8(playlist.text).segments.map((seg) => new URL(seg.uri, watermark.containers.m3u8).href);
});

afterAll(async () => {
  await s?.queue.close();
  await full?.queue.close();
  await s?.engine.dispose();
  await full?.engine.dispose();
});

describe('a new watermark served on demand', () => {
  it('is READY once its opening is rendered, and renders nothing more until a player asks', async () => {
    const video = (await s.engine.store.getVideo(s.videoId))!;
    expect(video.segments).toEqual([0.5, 0.5, 1, 2, 4, 4, 4, 4]);
    expect(watermark.status).toBe('READY');
    const record = (await s.engine.store.getWatermark(watermark.id))!;
    expect(record.render).toBe('on-demand');
    // Internally not complete: segments are missing, so exports and `--wait` would not see it finished.
    expect(record.status).toBe('PLAYABLE');
    const opening = openingSegments(video.segments, 4);
    expect(opening).toBe(4);
    expect(segmentsOnDisk(s, watermark.id)).toEqual([0, 1, 2, 3].map(segmentFileName));
    expect(s.engine.runner.encodes() - s.ingestEncodes).toBe(4);
  });

  it('lists every segment of the video in an ended playlist from the start', async () => {
    const playlist = parseM3u8((await get(s, watermark.containers.m3u8)).text);
    expect(playlist.endList).toBe(true);
    expect(playlist.segments.map((seg) => seg.duration)).toEqual([0.5, 0.5, 1, 2, 4, 4, 4, 4]);
    expect(segmentUrls).toHaveLength(8);
  });

  it('renders a segment a player asks for while the request waits, and queues the next one behind it', async () => {
    const before = s.engine.runner.encodes();
    const reply = await get(s, segmentUrls[5]!);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('video/mp2t');
    const file = path.join(tempDir('on-demand'), 'seg5.ts');
    writeFileSync(file, reply.body);
    await decodesCleanly(file);
    // Render-ahead: the following segments (up to the end) come without being asked; earlier ones stay unrendered.
    await waitFor(
      () => (existsSync(path.join(watermarkDir(s.engine, s.videoId, watermark.id), segmentFileName(7))) ? true : undefined),
      'render-ahead of segments 6 and 7',
    );
    await waitFor(() => (s.engine.renderer.depth().running === 0 ? true : undefined), 'renders to settle');
    expect(segmentsOnDisk(s, watermark.id)).toEqual([0, 1, 2, 3, 5, 6, 7].map(segmentFileName));
    expect(s.engine.runner.encodes() - before).toBe(3);
  });

  it('serves what a full render serves: the same picture with the text drawn', async () => {
    const created = await call(full.app, 'POST', '/2.0/watermark', {
      headers: full.headers,
      body: { key: KEY, settings, containers: ['m3u8'] },
    });
    expect(created.status).toBe(201);
    await jobDone(full, created.json.id);
    expect((await full.engine.store.getWatermark(created.json.id))!.status).toBe('READY');
    expect(segmentsOnDisk(full, created.json.id)).toHaveLength(8);
    const onDemand = await decodeFrame(path.join(watermarkDir(s.engine, s.videoId, watermark.id), segmentFileName(5)), 2, SIZE);
    const reference = await decodeFrame(path.join(watermarkDir(full.engine, full.videoId, created.json.id), segmentFileName(5)), 2, SIZE);
    // Encoded with a different thread count, so not bit-identical; the same picture to well within a grey level.
    expect(meanAbsDiff(onDemand.data, reference.data)).toBeLessThan(1);
  });

  it('renders a segment once when several players ask for it at the same moment', async () => {
    const before = s.engine.runner.encodes();
    const replies = await Promise.all([get(s, segmentUrls[4]!), get(s, segmentUrls[4]!), get(s, segmentUrls[4]!, { range: 'bytes=0-187' })]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 206]);
    expect(replies[1]!.body.equals(replies[0]!.body)).toBe(true);
    expect(replies[2]!.body.equals(replies[0]!.body.subarray(0, 188))).toBe(true);
    expect(s.engine.runner.encodes() - before).toBe(1);
  });

  it('is complete (READY inside too) once players have asked for every segment', async () => {
    expect(segmentsOnDisk(s, watermark.id)).toHaveLength(8);
    await waitFor(async () => ((await s.engine.store.getWatermark(watermark.id))!.status === 'READY' ? true : undefined), 'the watermark to be complete');
  });

  it('answers 404 for a segment past the end, and renders nothing for it', async () => {
    const before = s.engine.runner.encodes();
    const past = segmentUrls[7]!.replace(segmentFileName(7), segmentFileName(8));
    expect((await get(s, past)).status).toBe(404);
    expect(s.engine.runner.encodes()).toBe(before);
  });
});

describe('requests for every output', () => {
  it('m3u8 and mp4 (the default): the same VOD playlist at once, any segment on demand; the mp4 link once it is joined', async () => {
    const both = [{ content: 'viewer 44 wants both', y: 0.3 }];
    const created = await call(s.app, 'POST', '/2.0/watermark', { headers: s.headers, body: { key: KEY, settings: both, containers: ['m3u8', 'mp4'] } });
    expect(created.status).toBe(201);
    const playable = await waitFor(async () => {
      const r = await call(s.app, 'POST', '/2.0/watermark', { headers: s.headers, body: { key: KEY, settings: both, containers: ['m3u8', 'mp4'] } });
      return r.json.status === 'READY' ? r.json : undefined;
    }, 'the watermark to play');
    // Not waiting on the mp4: every segment listed, ended, from the first answer that plays.
    const playlist = parseM3u8((await get(s, playable.containers.m3u8)).text);
    expect(playlist.segments).toHaveLength(8);
    expect(playlist.endList).toBe(true);
    expect((await get(s, playable.containers.m3u8)).text).not.toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    const record = (await s.engine.store.getWatermark(created.json.id))!;
    if (record.status !== 'READY') expect(playable.containers.mp4).toBeUndefined();
    // A segment far ahead answers now, rendered for the player if the background has not got there.
    const last = new URL(playlist.segments[7]!.uri, playable.containers.m3u8).toString();
    const segment = await get(s, last);
    expect(segment.status).toBe(200);
    // The job goes on with the rest and joins the mp4; then the mp4 link is READY too.
    await waitFor(async () => ((await s.engine.store.getWatermark(created.json.id))!.status === 'READY' ? true : undefined), 'the mp4 join');
    expect(segmentsOnDisk(s, created.json.id)).toHaveLength(8);
    const done = await call(s.app, 'POST', '/2.0/watermark', { headers: s.headers, body: { key: KEY, settings: both, containers: ['m3u8', 'mp4'] } });
    expect((await get(s, done.json.containers.mp4)).status).toBe(200);
  });

  it('an mp4 container renders the rest in the background and joins the mp4', async () => {
    const other = [{ content: 'viewer 43 wants a download', y: 0.2 }];
    const first = await call(s.app, 'POST', '/2.0/watermark', {
      headers: s.headers,
      body: { key: KEY, settings: other, containers: ['m3u8'] },
    });
    expect(first.status).toBe(201);
    await jobDone(s, first.json.id);
    expect(segmentsOnDisk(s, first.json.id)).toHaveLength(4);
    const withMp4 = await call(s.app, 'POST', '/2.0/watermark', {
      headers: s.headers,
      body: { key: KEY, settings: other, containers: ['m3u8', 'mp4'] },
    });
    expect(withMp4.json.id).toBe(first.json.id);
    await waitFor(async () => ((await s.engine.store.getWatermark(first.json.id))!.status === 'READY' ? true : undefined), 'the full render');
    const record = (await s.engine.store.getWatermark(first.json.id))!;
    expect(record.render).toBe('on-demand');
    expect(segmentsOnDisk(s, first.json.id)).toHaveLength(8);
    // The playlist never shrank back to the rendered prefix: it still lists every segment, ended.
    const playlist = parseM3u8((await get(s, withMp4.json.containers.m3u8)).text);
    expect(playlist.segments).toHaveLength(8);
    expect(playlist.endList).toBe(true);
    const finished = await call(s.app, 'POST', '/2.0/watermark', {
      headers: s.headers,
      body: { key: KEY, settings: other, containers: ['m3u8', 'mp4'] },
    });
    expect((await get(s, finished.json.containers.mp4)).status).toBe(200);
  });
});
