// API 0.1, the oldest reference SDKs' generation, over real HTTP on loopback, replayed exactly as they send it: the
// node SDK at the root (POST /token with a lone x-api-key and an empty JSON body, a token asked for before every call,
// a raw ?key=, the settings array, the href polled every 5 s on localhost without credentials) and the Java SDK under
// /0.1/ (no Content-Type on the token call, its encoding object around the settings, the href polled with the token).
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { call, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { createCredential } from '../../src/engine/app/credentials.js';
import { decodeFrame } from '../helpers/media.js';
import { expectError } from '../helpers/serve-in-tests.js';
import { colourBox, SMALL } from '../helpers/watermark-helpers.js';

let engine: TestEngine;
let s: TestServer;
let port: number;
let clip: string;
/** A key that is a URL with its own query, as a video registered without a key is known by its source URL. */
const RAW_KEY = 'https://cdn.example.com/screeners/movie.mp4?v=2&lang=en';

beforeAll(async () => {
  engine = await testEngine();
  s = await serveEngine(engine);
  port = Number(new URL(s.url).port);
  clip = await flat('336699', 4);
});
afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

interface Exchange {
  method: string;
  path: string;
  status: number;
  json: any;
  headers: http.IncomingHttpHeaders;
}

/** One request as the SDKs make it with node's http: the path sent as given, the body written only when there is one. */
function send(options: http.RequestOptions, body?: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ method: options.method!, path: options.path!, status: res.statusCode!, json: text ? JSON.parse(text) : undefined, headers: res.headers });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * The node SDK's HTTP client (safestream-node-sdk 0.0.1): every request has `Content-Type: application/json`; with no
 * token it first POSTs /token with the lone key and no body; every answer's `token` field (absent from all but the
 * token's) replaces its token, so it asks again before the next call.
 */
class NodeSdkClient {
  token: string | undefined;
  readonly log: Exchange[] = [];
  constructor(private readonly apiKey: string) {}

  private options(path: string, method: string, extra: Record<string, string | number>): http.RequestOptions {
    return { host: '127.0.0.1', port, path: `/${path}`, method, headers: { 'Content-Type': 'application/json', ...extra } };
  }

  private async getToken(): Promise<string> {
    if (this.token) return this.token;
    const r = await send(this.options('token', 'POST', { 'x-api-key': this.apiKey }));
    this.log.push(r);
    if (r.status >= 400) throw Object.assign(new Error(`token: ${r.status}`), { reply: r });
    this.token = r.json.token;
    return this.token!;
  }

  async request(method: string, resource: string, body?: object): Promise<Exchange> {
    const token = await this.getToken();
    const text = body ? JSON.stringify(body) : undefined;
    const r = await send(this.options(resource, method, { Authorization: `Bearer ${token}`, ...(text ? { 'Content-Length': text.length } : {}) }), text);
    this.log.push(r);
    if (r.status >= 400) throw Object.assign(new Error(`${method} /${resource}: ${r.status} ${JSON.stringify(r.json)}`), { reply: r });
    this.token = r.json?.token;
    return r;
  }

  /** VideoAPI.createSync: POST videos, then find(key) every 5 s until INGESTED. */
  async createVideo(video: Record<string, unknown> & { key: string }, intervalMs = 5000): Promise<any> {
    await this.request('POST', 'videos', video);
    for (let i = 0; i < 18; i++) {
      const found = await this.request('GET', `videos?key=${video.key}`);
      if (!Array.isArray(found.json)) throw new Error('Bad response from video endpoint');
      if (found.json[0]?.status === 'INGESTED') return found.json[0];
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    throw new Error('Timeout reached waiting for video to be ingested');
  }

  /** WatermarkAPI.create: POST watermark, then GET href on localhost (the SDK reads `hostName`, which url.parse lacks) with no credentials, every 5 s until READY. */
  async createWatermark(key: string, settings: object[], intervalMs = 5000): Promise<{ created: Exchange; status: Exchange }> {
    const created = await this.request('POST', 'watermark', { key, settings });
    const href = new URL(created.json.href);
    for (let i = 0; i < 18; i++) {
      const status = await send({ host: 'localhost', port: href.port, path: href.pathname + href.search, method: 'GET' });
      this.log.push(status);
      if (status.status >= 400) throw new Error('Could not get watermark status after invoking watermark job');
      if (status.json.status === 'READY') return { created, status };
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    throw new Error('Timeout reached');
  }
}

/** The Java SDK's HTTP client (safestream-java-sdk): base `/0.1/`, one token per process from a bare POST /0.1/token. */
class JavaSdkClient {
  token: string | undefined;
  constructor(private readonly apiKey: string) {}

  private async getToken(): Promise<string> {
    if (this.token) return this.token;
    const r = await send({ host: '127.0.0.1', port, path: '/0.1/token', method: 'POST', headers: { 'x-api-key': this.apiKey } });
    if (r.status >= 400) throw Object.assign(new Error(`token: ${r.status}`), { reply: r });
    this.token = r.json.token;
    return this.token!;
  }

  async post(resource: string, body: object): Promise<Exchange> {
    const token = await this.getToken();
    const text = JSON.stringify(body);
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
    return send({ host: '127.0.0.1', port, path: `/0.1/${resource}`, method: 'POST', headers }, text);
  }

  async getEndpoint(url: string): Promise<Exchange> {
    const u = new URL(url, `http://127.0.0.1:${port}/0.1/`);
    return send({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'GET', headers: { Authorization: `Bearer ${await this.getToken()}` } });
  }
}

/**
 * White text drawn opaque at the top left: found there, on the decoded first second of the watermark's playlist. The
 * links name where the server listens (127.0.0.1), whichever host the SDK polled (`localhost`).
 */
async function expectTextTopLeft(m3u8: string): Promise<void> {
  expect(new URL(m3u8).host).toBe(`127.0.0.1:${port}`);
  const frame = await decodeFrame(m3u8, 1, SMALL);
  const white = colourBox(frame, [255, 255, 255], 60);
  expect(white).toBeDefined();
  expect(white!.x0).toBeGreaterThanOrEqual(Math.floor(0.05 * SMALL.width) - 2);
  expect(white!.x1).toBeLessThan(SMALL.width / 2);
  expect(white!.y1).toBeLessThan(SMALL.height / 2);
}

describe('the node SDK (0.0.1) at the root', () => {
  it('ingests, finds by a raw key, watermarks and polls to READY, asking for a token before every call', async () => {
    const cred = await createCredential(engine, 'node sdk');
    const sdk = new NodeSdkClient(cred.apiKey);
    const video = await sdk.createVideo({ sourceUrl: clip, key: RAW_KEY, name: 'screener', tags: ['a', 'b'], allowHmacAuth: false });
    expect(video).toMatchObject({ key: RAW_KEY, status: 'INGESTED' });
    const { created, status } = await sdk.createWatermark(RAW_KEY, [
      {
        type: 'TEXT',
        content: 'NODE SDK',
        x: 0.05,
        y: 0.05,
        fontSize: 0.1,
        fontOpacity: 1,
        fontColor: '0xFFFFFF',
        shadowOpacity: 0,
        horizontalAlignment: 'LEFT',
        verticalAlignment: 'TOP',
      },
    ]);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ videoId: video.id, href: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/1\.0\/watermark\//) });
    expect(status.json.status).toBe('READY');
    await expectTextTopLeft(status.json.containers.m3u8);

    // Every call after the token's was preceded by a new token: the answers carry none, so the SDK forgets it.
    const calls = sdk.log.map((e) => `${e.method} ${e.path.split('?')[0]} ${e.status}`);
    expect(calls.slice(0, 4)).toEqual(['POST /token 200', 'POST /videos 201', 'POST /token 200', 'GET /videos 200']);
    expect(calls.filter((c) => c.startsWith('POST /token')).length).toBe(calls.filter((c) => /^(POST|GET) \/(videos|watermark)/.test(c)).length);
    expect(sdk.log.every((e) => e.status < 400)).toBe(true);
  });

  it('a token body of {} works too; GET /videos?key= answers an array, empty for an unknown key', async () => {
    const cred = await createCredential(engine, 'node sdk 2');
    const t = await send(
      {
        host: '127.0.0.1',
        port,
        path: '/token',
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'x-api-key': cred.apiKey, 'Content-Length': 2 },
      },
      '{}',
    );
    expect(t.status).toBe(200);
    expect(Object.keys(t.json)).toEqual(['token', 'expiresIn']);
    const none = await send({ host: '127.0.0.1', port, path: '/videos?key=no-such-key', method: 'GET', headers: { Authorization: `Bearer ${t.json.token}` } });
    expect([none.status, none.json]).toEqual([200, []]);
  });

  it("a non-ASCII body, with the SDK's Content-Length in characters, arrives cut short: 400 (docs/api.md)", async () => {
    const cred = await createCredential(engine, 'node sdk 3');
    const sdk = new NodeSdkClient(cred.apiKey);
    const error = await sdk
      .request('POST', 'watermark', { key: 'no-such-key', settings: [{ content: 'für alice' }] })
      .catch((e: { reply: Exchange }) => e.reply);
    // The byte left over is read as the start of another request on the connection: a bare 400, and the socket closed.
    expect(error.status).toBe(400);
  });
});

describe('the Java SDK under /0.1/', () => {
  it('its encoding object gives the settings (saturation, resolution, bitRate ignored); the href polled with the token', async () => {
    const cred = await createCredential(engine, 'java sdk');
    const sdk = new JavaSdkClient(cred.apiKey);
    const key = 'java-screener';
    const v = await sdk.post('videos', { sourceUrl: clip, key, name: 'java', tags: [], allowHmacAuth: false, encrypt: false, proxies: [], created: 0 });
    expect(v.status).toBe(201);
    for (let i = 0; ; i++) {
      const found = await sdk.getEndpoint(`/0.1/videos?key=${key}`);
      expect(found.status).toBe(200);
      if (found.json[0]?.status === 'INGESTED') break;
      expect(i).toBeLessThan(60);
      await new Promise((r) => setTimeout(r, 1500));
    }
    const watermark = {
      content: 'JAVA SDK',
      type: 'TEXT',
      horizontalAlignment: 'LEFT',
      verticalAlignment: 'TOP',
      x: 0.05,
      y: 0.05,
      fontSize: 0.1,
      fontOpacity: 1.0,
      fontColor: '0xFFFFFF',
      shadowOpacity: 0.0,
      shadowColor: '0x000000',
      shadowOffsetX: 0.08,
      shadowOffsetY: 0.08,
    };
    const body = { key, settings: { saturation: 0.5, resolution: { width: 640, height: 360 }, bitRate: '4000k', watermarks: [watermark] } };
    const created = await sdk.post('watermark', body);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    // The same watermark as the array form of the same settings: the encoding fields change nothing.
    const again = await sdk.post('watermark', { key, settings: [watermark] });
    expect([again.status, again.json.id]).toEqual([200, created.json.id]);
    let status: Exchange;
    for (let i = 0; ; i++) {
      status = await sdk.getEndpoint(created.json.href);
      expect(status.status).toBe(200);
      if (status.json.status === 'READY') break;
      expect(i).toBeLessThan(60);
      await new Promise((r) => setTimeout(r, 1500));
    }
    await expectTextTopLeft(status.json.containers.m3u8);
    const missing = await sdk.post('watermark', { key, settings: { saturation: 1 } });
    expect([missing.status, missing.json.message]).toEqual([400, ['settings.watermarks: required (an array of setting objects)']]);
  });
});

describe('credentials of the 0.1 routes', () => {
  const token = (headers: Record<string, string>, path = '/token') =>
    send({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } });

  it('no key, a wrong key, or a key that does not name its client: 401, never 404', async () => {
    const cred = await createCredential(engine, 'wrong');
    for (const path of ['/token', '/0.1/token']) {
      const none = await token({}, path);
      expect([none.status, none.json.code]).toEqual([401, 'AUTH_REQUIRED']);
      const wrong = await token({ 'x-api-key': `${cred.apiKey.slice(0, -4)}AAAA` }, path);
      expect([wrong.status, wrong.json.code]).toEqual([401, 'AUTH_INVALID']);
    }
    const noToken = await send({ host: '127.0.0.1', port, path: '/videos?key=x', method: 'GET', headers: { 'Content-Type': 'application/json' } });
    expect([noToken.status, noToken.json.code]).toEqual([401, 'AUTH_REQUIRED']);
    // Each generation is told where its own tokens come from.
    for (const [path, route] of [
      ['/videos?key=x', 'POST /token'],
      ['/0.1/videos?key=x', 'POST /token'],
      ['/1.0/videos?key=x', 'GET /1.0/authenticate/accessToken'],
    ]) {
      const r = await send({ host: '127.0.0.1', port, path: path!, method: 'GET', headers: {} });
      expect([r.status, r.json.code], path).toEqual([401, 'AUTH_REQUIRED']);
      expect(r.json.message, path).toContain(`get one from ${route}`);
      expect(r.json.hint, path).toContain(route!);
    }
    const noKey = await token({});
    expect(noKey.json.hint).toContain('Bearer <token> from POST /token');
    const badToken = await send({ host: '127.0.0.1', port, path: '/0.1/watermark', method: 'POST', headers: { Authorization: 'Bearer nope' } });
    expect([badToken.status, badToken.json.code]).toEqual([401, 'TOKEN_INVALID']);
  });

  it('a key issued before keys named their client works with its client id, and alone is refused saying why', async () => {
    const oldKey = `wmk_${'Q'.repeat(43)}`;
    const clientId = 'wmc_00112233aabbccdd';
    await engine.store.insertCredential({
      clientId,
      keyHash: createHash('sha256').update(oldKey, 'utf8').digest('hex'),
      label: 'old',
      createdOn: Date.now(),
      revokedOn: null,
    });
    const alone = await token({ 'x-api-key': oldKey });
    expect([alone.status, alone.json.code]).toEqual([401, 'AUTH_INVALID']);
    expect(alone.json.message).toContain('issued before keys named their client, so it cannot be sent alone');
    expect(alone.json.hint).toContain('x-api-client-id');
    const pairs: Record<string, string>[] = [
      { 'x-api-client-id': clientId, 'x-api-key': oldKey },
      { 'x-api-key': oldKey, 'x-api-secret': clientId },
    ];
    for (const headers of pairs) {
      const r = await token(headers);
      expect(r.status).toBe(200);
      expect((await call(s.url, 'GET', '/1.0', { headers: { authorization: `Bearer ${r.json.token}` } })).json.client).toBe(clientId);
    }
    // A new key alone names its client, on 1.0's token route and on 2.0's key-authenticated routes alike.
    const fresh = await createCredential(engine, 'fresh');
    expect(fresh.apiKey).toMatch(new RegExp(`^wmk_${fresh.clientId.slice(4)}_[A-Za-z0-9_-]{43}$`));
    const v1 = await call(s.url, 'GET', '/1.0/authenticate/accessToken', { headers: { 'x-api-key': fresh.apiKey } });
    expect(v1.status).toBe(200);
    const v2 = await call(s.url, 'GET', '/2.0', { headers: { 'x-api-key': fresh.apiKey } });
    expect([v2.status, v2.json.client]).toEqual([200, fresh.clientId]);
    await engine.store.revokeCredential(fresh.clientId, Date.now());
    expectError(await call(s.url, 'GET', '/2.0', { headers: { 'x-api-key': fresh.apiKey } }), 401, 'AUTH_INVALID');
  });
});
