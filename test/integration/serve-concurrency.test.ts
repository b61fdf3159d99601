// Concurrency over real HTTP: 20 simultaneous identical watermark requests make one watermark, one job and one set of
// encodes, and all 20 callers get the same answer (1.0 while PENDING, 2.0 once playable).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { call, gateFfmpeg, ingestOverHttp, isSegmentRender, serveInProcess, type TestApp, waitFor } from '../../harness/serve-helpers.js';

const N = 20;

let engine: TestEngine;
let s: TestApp;
let video: any;

beforeAll(async () => {
  engine = await testEngine();
  s = await serveInProcess(engine);
  ({ video } = await ingestOverHttp(s.app, s.v2, await flat('336699', 10), 'busy-clip'));
});

afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

/** A body with the per-response signatures taken out: what must be identical across the 20 answers. */
function unsigned(body: any): unknown {
  return JSON.parse(JSON.stringify(body), (_key, value: unknown) =>
    typeof value === 'string' ? value.replace(/expiration(=|%3D)\d+/g, 'expiration$1E').replace(/signature(=|%3D)[A-Za-z0-9_-]+/g, 'signature$1S') : value,
  );
}

async function settle(id: string): Promise<void> {
  await waitFor(
    async () =>
      (await engine.store.getWatermark(id))!.status === 'READY' && (await engine.store.getJob(`watermark:${id}`))?.status === 'done' ? true : undefined,
    `watermark ${id} to finish`,
  );
}

describe('20 simultaneous identical POSTs', () => {
  it('1.0: one watermark row, one job, one encode per segment, 20 identical PENDING answers', async () => {
    const rowsBefore = (await engine.store.listWatermarks()).length;
    const encodesBefore = engine.runner.encodes();
    // Hold the renders until every answer is in, so all 20 see the same state.
    const gate = gateFfmpeg(engine, isSegmentRender);
    const body = { key: 'busy-clip', settings: [{ content: 'crowd 1.0', fontColor: '00FF00' }] };
    const replies = await Promise.all(Array.from({ length: N }, () => call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body })));
    gate.open();

    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(N - 1);
    const id = replies[0]!.json.id as string;
    for (const r of replies) {
      expect(r.json).toMatchObject({ id, videoId: video.id, status: 'PENDING' });
      expect(new URL(r.json.href).pathname).toBe(`/1.0/watermark/${video.id}/${id}`);
      expect(new URL(new URL(r.json.containers.href).searchParams.get('sourceUrl')!).pathname).toBe(`/1.0/watermark/${video.id}/${id}/video.m3u8`);
      expect(unsigned(r.json)).toEqual(unsigned(replies[0]!.json));
    }
    expect((await engine.store.listWatermarks()).length).toBe(rowsBefore + 1);

    await settle(id);
    expect(engine.runner.encodes() - encodesBefore).toBe(video.segments);
    expect((await engine.store.getJob(`watermark:${id}`))!.attempts).toBe(1);
    // Every one of the 20 hrefs now reports READY for the same watermark.
    const polled = await Promise.all(replies.map((r) => call(s.app, 'GET', r.json.href)));
    for (const p of polled) expect(p.json).toMatchObject({ id, status: 'READY' });
  });

  it('2.0: one watermark row, one job, one encode per segment, 20 identical READY answers', async () => {
    const rowsBefore = (await engine.store.listWatermarks()).length;
    const encodesBefore = engine.runner.encodes();
    const body = { key: 'busy-clip', settings: [{ content: 'crowd 2.0', fontColor: 'FF00FF' }] };
    const replies = await Promise.all(Array.from({ length: N }, () => call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body })));

    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(N - 1);
    const id = replies[0]!.json.id as string;
    for (const r of replies) {
      expect(r.json).toMatchObject({ id, videoId: video.id, status: 'READY' });
      expect(r.json.containers).toEqual({ href: expect.any(String), m3u8: expect.any(String), ...(r.json.containers.mp4 ? { mp4: expect.any(String) } : {}) });
      expect(new URL(r.json.href).pathname).toBe(`/2.0/watermark/${video.id}/${id}`);
      expect(new URL(r.json.containers.m3u8).pathname).toBe(`/2.0/watermark/${video.id}/${id}/video.m3u8`);
    }
    // The mp4 may be listed in later answers once it is joined; apart from that and the signatures, all 20 agree.
    const withoutMp4 = (b: any) => unsigned({ ...b, containers: { ...b.containers, mp4: undefined } });
    for (const r of replies) expect(withoutMp4(r.json)).toEqual(withoutMp4(replies[0]!.json));
    expect((await engine.store.listWatermarks()).length).toBe(rowsBefore + 1);

    await settle(id);
    expect(engine.runner.encodes() - encodesBefore).toBe(video.segments);
    expect((await engine.store.getJob(`watermark:${id}`))!.attempts).toBe(1);
    const playlists = await Promise.all(replies.map((r) => call(s.app, 'GET', r.json.containers.m3u8)));
    for (const p of playlists) expect(p.status).toBe(200);
  });
});

describe('simultaneous identical ingests', () => {
  it('10 POST /2.0/videos with one new key: one video, one normalising encode, one 201 and nine 200 with the same id', async () => {
    const ingestEncodes = () => engine.runner.calls.filter((c) => c.tool === 'ffmpeg' && c.args.includes('-segment_list')).length;
    const before = ingestEncodes();
    const body = { sourceUrl: await flat('336699', 4), key: 'crowd-ingest' };
    const replies = await Promise.all(Array.from({ length: 10 }, () => call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body })));
    const ids = new Set(replies.map((r) => r.json.id));
    expect(ids.size, replies.map((r) => r.text).join('\n')).toBe(1);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const id = [...ids][0] as string;
    await waitFor(async () => ((await engine.store.getVideo(id))?.status === 'INGESTED' ? true : undefined), 'the ingest');
    expect(await engine.store.listVideos({ key: 'crowd-ingest' })).toHaveLength(1);
    expect(ingestEncodes() - before).toBe(1);
  });
});
