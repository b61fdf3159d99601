// GET /metrics of a real serve on loopback, in Prometheus' text format: requests by route pattern and status with
// their latency, renders and their seconds, jobs by state and the process's own figures; never an id, a key or a
// signature in a label. Every answer carries its request's id, the access log hears each request once, callers on
// other machines are refused unless the operator opened it, and two servers in one process count apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { call, ingestOverHttp, serveEngine, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import type { ApiRequest } from '../../src/server/http-types.js';

type Labels = Record<string, string>;

/** The samples of a Prometheus text exposition: name, labels, value. */
function samples(text: string): { name: string; labels: Labels; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

/** The one sample of `name` whose labels include `labels`, or undefined. */
function sample(text: string, name: string, labels: Labels = {}): number | undefined {
  const found = samples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** A request as it would arrive from a peer at `remoteAddress` (another machine). */
function fromPeer(path: string, remoteAddress: string): ApiRequest {
  return {
    method: 'GET',
    rawUrl: path,
    path,
    url: new URL(path, 'http://wmark.test'),
    headers: { host: 'wmark.test' },
    body: async () => undefined,
    remoteAddress,
  };
}

describe('GET /metrics of a serve on loopback', () => {
  let engine: TestEngine;
  let s: TestServer;
  let video: { id: string };
  let watermark: { id: string; containers: { m3u8: string } };

  beforeAll(async () => {
    engine = await testEngine();
    s = await serveEngine(engine);
    ({ video } = await ingestOverHttp(s.url, s.v2, await flat('336699', 2), 'metrics'));
    const created = await call(s.url, 'POST', '/2.0/watermark', {
      headers: s.v2,
      body: { key: 'metrics', containers: ['m3u8'], settings: [{ content: 'for alice' }] },
    });
    expect(created.json?.status, created.text).toBe('READY');
    watermark = created.json;
    const playlist = await call(s.url, 'GET', watermark.containers.m3u8);
    const segment = playlist.text.split('\n').find((l) => l.startsWith('seg_'))!;
    expect((await call(s.url, 'GET', new URL(segment, watermark.containers.m3u8).href)).status).toBe(200);
    expect((await call(s.url, 'GET', `/2.0/videos/${video.id}`, { headers: s.v2 })).status).toBe(200);
    expect((await call(s.url, 'GET', '/2.0/videos/no-such-video', { headers: s.v2 })).status).toBe(404);
    expect((await call(s.url, 'GET', '/nowhere/at/all')).status).toBe(404);
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await engine?.dispose();
  });

  it('counts requests by route pattern and status, with their latency, and names no id, key or signature', async () => {
    const r = await call(s.url, 'GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = r.text;
    expect(sample(text, 'wmark_http_requests_total', { method: 'POST', route: '/2.0/watermark', status: '200' }) ?? 0).toBe(0);
    expect(sample(text, 'wmark_http_requests_total', { method: 'POST', route: '/2.0/watermark', status: '201' })).toBe(1);
    expect(sample(text, 'wmark_http_requests_total', { method: 'GET', route: '/2.0/watermark/:videoId/:watermarkId/:file', status: '200' })).toBe(2);
    expect(sample(text, 'wmark_http_requests_total', { method: 'GET', route: '/2.0/videos/:id', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'wmark_http_requests_total', { method: 'GET', route: '/2.0/videos/:id', status: '404' })).toBe(1);
    expect(sample(text, 'wmark_http_requests_total', { method: 'GET', route: '(none)', status: '404' })).toBe(1);
    const posts = { method: 'POST', route: '/2.0/watermark' };
    expect(sample(text, 'wmark_http_request_duration_seconds_count', posts)).toBe(1);
    expect(sample(text, 'wmark_http_request_duration_seconds_bucket', { ...posts, le: '+Inf' })).toBe(1);
    expect(sample(text, 'wmark_http_request_duration_seconds_sum', posts)).toBeGreaterThan(0);
    for (const secret of [video.id, watermark.id, s.cred.apiKey, s.cred.clientId, 'signature', 'expiration=', 'no-such-video', 'nowhere'])
      expect(text).not.toContain(secret);
  });

  it('tells renders and their seconds, jobs by state and the process, and no pool or dependency of its own on SQLite', async () => {
    // The answer came once the first segment played; the rest of the opening is rendered `now` after it, so the
    // gauge of urgent renders waiting falls back to 0 once that is done.
    const text = await waitFor(
      async () => {
        const t = (await call(s.url, 'GET', '/metrics')).text;
        return sample(t, 'wmark_renders_waiting', { urgency: 'now' }) === 0 ? t : undefined;
      },
      'no urgent render waiting',
      30_000,
      100,
    );
    // The opening a new watermark waits for is rendered `now`; its seconds are in the histogram's sum.
    expect(sample(text, 'wmark_render_duration_seconds_count', { urgency: 'now' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'wmark_render_duration_seconds_sum', { urgency: 'now' })).toBeGreaterThan(0);
    expect(sample(text, 'wmark_render_duration_seconds_bucket', { urgency: 'now', le: '64' })).toBe(
      sample(text, 'wmark_render_duration_seconds_count', { urgency: 'now' }),
    );
    expect(sample(text, 'wmark_renders_in_flight')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wmark_jobs', { kind: 'ingest', state: 'done' })).toBe(1);
    const watermarkJobs = samples(text).filter((x) => x.name === 'wmark_jobs' && x.labels.kind === 'watermark');
    expect(watermarkJobs.reduce((n, x) => n + x.value, 0)).toBe(1);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    for (const name of ['wmark_db_pool_connections', 'wmark_db_pool_waiting', 'wmark_dependency_up', 'wmark_farm_tasks'])
      expect(samples(text).filter((x) => x.name === name)).toEqual([]);
  });

  it("answers with the request's id, the one sent when it is safe, and the access log hears each request once", async () => {
    const given = await call(s.url, 'GET', '/2.0/videos', { headers: { ...s.v2, 'x-request-id': 'trace-42.a' } });
    expect(given.headers.get('x-request-id')).toBe('trace-42.a');
    const unsafe = await call(s.url, 'GET', '/2.0/videos', { headers: { ...s.v2, 'x-request-id': 'two words' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const error = await call(s.url, 'GET', '/2.0/videos/none', { headers: { ...s.v2, 'x-request-id': 'trace-43' } });
    expect(error.headers.get('x-request-id')).toBe('trace-43');
    const heard = s.requests.filter((r) => r.reqId === 'trace-42.a' || r.reqId === 'trace-43');
    expect(heard).toEqual([
      { reqId: 'trace-42.a', method: 'GET', route: '/2.0/videos', status: 200, ms: expect.any(Number) },
      { reqId: 'trace-43', method: 'GET', route: '/2.0/videos/:id', status: 404, ms: expect.any(Number) },
    ]);
    expect(s.requests.filter((r) => r.reqId === unsafe.headers.get('x-request-id'))).toHaveLength(1);
    expect(JSON.stringify(s.requests)).not.toMatch(/signature|expiration=|wmk_/);
  });

  it('refuses callers on other machines with METRICS_NOT_PUBLIC unless serve opened it, and two servers count apart', async () => {
    const refused = await s.app.handle(fromPeer('/metrics', '203.0.113.9'));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body as string)).toMatchObject({ code: 'METRICS_NOT_PUBLIC', hint: expect.stringContaining('--metrics-public') });
    expect(refused.body as string).not.toContain('wmark_http_requests_total');

    const open = await serveEngine(engine, { metricsPublic: true });
    try {
      const answered = await open.app.handle(fromPeer('/metrics', '203.0.113.9'));
      expect(answered.status).toBe(200);
      const text = answered.body as string;
      // Its own registry: the other server's requests are not in it, its own token request is.
      expect(sample(text, 'wmark_http_requests_total', { method: 'POST', route: '/2.0/watermark', status: '201' })).toBeUndefined();
      expect(sample(text, 'wmark_http_requests_total', { method: 'GET', route: '/1.0/authenticate/accessToken', status: '200' })).toBe(1);
      expect(sample((await call(s.url, 'GET', '/metrics')).text, 'wmark_http_requests_total', { method: 'POST', route: '/2.0/watermark', status: '201' })).toBe(
        1,
      );
    } finally {
      await open.close();
    }
  });
});
