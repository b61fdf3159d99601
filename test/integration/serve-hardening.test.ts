// Hardening of `wmark serve` (README.md, "Security model"): unsafe expirations, timeouts, aborted bodies, CORS and
// credential rate limits, per client address (behind trusted proxies, the one X-Forwarded-For names).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { call, keyHeaders, serveEngine, serveInProcess, type TestApp, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import { parseTrustedProxies } from '../../src/core/forwarded-for.js';
import { expectError, expectNoLeak } from '../helpers/serve-in-tests.js';

const VIDEO = '00000000-0000-4000-8000-000000000000';
const MARK = '0123456789abcdef0123456789abcdef';
const UNSAFE = ['9007199254740992', '9999999999999999'];
const SIG = 'A'.repeat(43);

describe('expirations at or beyond 2^53 (in-process)', () => {
  let engine: TestEngine;
  let s: TestApp;
  beforeAll(async () => {
    engine = await testEngine();
    s = await serveInProcess(engine);
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });

  it('the player page answers 403, not 500', async () => {
    for (const v of ['1.0', '2.0']) {
      for (const e of UNSAFE) {
        const r = await call(s.app, 'GET', `/player/${v}/?sourceUrl=x&expiration=${e}&signature=${SIG}`);
        expect(r.status, r.text).toBe(403);
        expect(r.text).toContain('not valid');
      }
    }
  });

  it('media and href links answer 403 SIGNATURE_INVALID', async () => {
    for (const v of ['1.0', '2.0']) {
      for (const e of UNSAFE) {
        for (const file of ['video.m3u8', 'seg_00000.ts', 'video.mp4']) {
          expectError(await call(s.app, 'GET', `/${v}/watermark/${VIDEO}/${MARK}/${file}?expiration=${e}&signature=${SIG}`), 403, 'SIGNATURE_INVALID');
        }
        expectError(await call(s.app, 'GET', `/${v}/watermark/${VIDEO}/${MARK}?expiration=${e}&signature=${SIG}`), 403, 'SIGNATURE_INVALID');
      }
    }
  });
});

/** A raw TCP client: what it received, and when the server closed the connection (ms after connecting). */
function rawClient(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const started = Date.now();
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return { socket, closed, received: () => received };
}

describe('socket timeouts (real socket)', () => {
  let engine: TestEngine;
  let s: TestServer;
  beforeAll(async () => {
    engine = await testEngine();
    s = await serveEngine(engine, { timeouts: { headersMs: 1_000, requestMs: 1_500, keepAliveMs: 500, idleMs: 3_000 } });
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });

  it('a body trickled one byte every 2 s is cut off with 408 within the request timeout', async () => {
    const c = rawClient(s.url);
    c.socket.write(
      `POST /2.0/videos HTTP/1.1\r\nHost: x\r\nx-api-client-id: ${s.cred.clientId}\r\nx-api-key: ${s.cred.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`,
    );
    const trickle = setInterval(() => c.socket.writable && c.socket.write(' '), 2_000);
    const closedAfter = await c.closed;
    clearInterval(trickle);
    expect(closedAfter).toBeLessThan(1_500 + 1_000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a connection that never finishes its headers is closed within the headers timeout', async () => {
    const c = rawClient(s.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => c.socket.writable && c.socket.write('X-A: b\r\n'), 300);
    const closedAfter = await c.closed;
    clearInterval(trickle);
    expect(closedAfter).toBeLessThan(1_000 + 1_000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 |^$/);
  });

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const c = rawClient(s.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAfter = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedAfter).toBeGreaterThanOrEqual(400);
    // Node allows a kept-alive socket up to 1 s past keepAliveTimeout.
    expect(closedAfter).toBeLessThan(500 + 1_000 + 500);
  });

  it('a connection that sends nothing is closed within the headers timeout', async () => {
    const c = rawClient(s.url);
    expect(await c.closed).toBeLessThan(1_000 + 1_000);
  });
});

describe('a client that hangs up mid-body (real socket)', () => {
  let engine: TestEngine;
  let s: TestServer;
  beforeAll(async () => {
    engine = await testEngine();
    s = await serveEngine(engine);
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });

  it('is one info line without a stack trace', async () => {
    const before = s.logs.length;
    const c = rawClient(s.url);
    c.socket.write(
      `POST /2.0/videos HTTP/1.1\r\nHost: x\r\nx-api-client-id: ${s.cred.clientId}\r\nx-api-key: ${s.cred.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"sourceUrl":`,
    );
    await new Promise((r) => setTimeout(r, 200));
    c.socket.destroy();
    await c.closed;
    await waitFor(() => (s.logs.length > before ? true : undefined), 'a log line', 5_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    const lines = s.logs.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^POST \/2\.0\/videos: the client closed the connection/);
    expectNoLeak(lines[0]!);
    expect(lines[0]!.split('\n')).toHaveLength(1);
  });
});

describe('CORS for the API (in-process)', () => {
  let engine: TestEngine;
  let open: TestApp;
  let listed: TestApp;
  const SDK_HEADERS = 'authorization,content-type,x-api-key,x-api-client-id,x-api-secret';
  beforeAll(async () => {
    engine = await testEngine();
    open = await serveInProcess(engine);
    listed = await serveInProcess(engine, { corsOrigins: ['https://app.example'] });
  });
  afterAll(async () => {
    await open.close();
    await listed.close();
    await engine.dispose();
  });

  it('a preflight for an API route allows the SDK headers and the route methods, from any origin by default', async () => {
    const r = await call(open.app, 'OPTIONS', '/2.0/videos', {
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': SDK_HEADERS },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    const allowed = (r.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    for (const h of SDK_HEADERS.split(',')) expect(allowed).toContain(h);
    expect(r.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
    expect(r.headers.get('access-control-allow-methods')).toMatch(/\bGET\b/);
  });

  it('API answers, errors included, carry Access-Control-Allow-Origin', async () => {
    const ok = await call(open.app, 'GET', '/2.0/videos', { headers: { origin: 'https://elsewhere.example', ...open.v2 } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const refused = await call(open.app, 'GET', '/2.0/videos', { headers: { origin: 'https://elsewhere.example' } });
    expectError(refused, 401, 'AUTH_REQUIRED');
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const token = await call(open.app, 'GET', '/1.0/authenticate/accessToken', {
      headers: { 'x-api-key': open.cred.clientId, 'x-api-secret': open.cred.apiKey },
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('with --cors-origin only the listed origins are answered, by name and with Vary: Origin', async () => {
    const pre = (origin: string) =>
      call(listed.app, 'OPTIONS', '/2.0/watermark', {
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': SDK_HEADERS },
      });
    const yes = await pre('https://app.example');
    expect(yes.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(yes.headers.get('vary')).toBe('Origin');
    expect(yes.headers.get('access-control-allow-headers')).toContain('x-api-secret');
    const no = await pre('https://evil.example');
    expect(no.headers.get('access-control-allow-origin')).toBeNull();
    expect(no.headers.get('access-control-allow-headers')).toBeNull();
    const get = await call(listed.app, 'GET', '/2.0/videos', { headers: { origin: 'https://evil.example', ...listed.v2 } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('signed media keep their own CORS (any origin, Range)', async () => {
    const r = await call(listed.app, 'OPTIONS', `/2.0/watermark/${VIDEO}/${MARK}/video.m3u8`, {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')).toBe('Range');
  });
});

describe('failed credential checks are rate-limited per client address', () => {
  let engine: TestEngine;
  let s: TestServer;
  let clock = Date.UTC(2030, 0, 1);
  beforeAll(async () => {
    engine = await testEngine({ now: () => clock });
    s = await serveEngine(engine, { authLimit: { failures: 5, windowMs: 60_000 } });
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });
  /** One request as if from `address` (the in-process edge takes the socket's address from here). */
  const from = (address: string, target: string, headers: Record<string, string>) =>
    s.app.handle({
      method: 'GET',
      rawUrl: target,
      path: target.split('?')[0]!,
      url: new URL(target, 'http://x'),
      headers,
      body: async () => undefined,
      remoteAddress: address,
    });

  it('the token route: 5 wrong keys are 401, then 429 with Retry-After, even for the right key, until the window ends', async () => {
    const wrong = { 'x-api-client-id': s.cred.clientId, 'x-api-key': 'wmk_wrong' };
    for (let i = 0; i < 5; i++) expect((await from('198.51.100.7', '/1.0/authenticate/accessToken', wrong)).status).toBe(401);
    const limited = await from('198.51.100.7', '/1.0/authenticate/accessToken', wrong);
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body as string)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(limited.headers['Retry-After'])).toBeGreaterThanOrEqual(59);
    expect((await from('198.51.100.7', '/1.0/authenticate/accessToken', keyHeaders(s.cred))).status).toBe(429);
    // Another address is not affected; requests without credentials from this one neither.
    expect((await from('198.51.100.8', '/1.0/authenticate/accessToken', keyHeaders(s.cred))).status).toBe(200);
    expect((await from('198.51.100.7', '/healthz', {})).status).toBe(200);
    clock += 61_000;
    expect((await from('198.51.100.7', '/1.0/authenticate/accessToken', keyHeaders(s.cred))).status).toBe(200);
  });

  it('key and token checks on API routes count too; an expired token does not', async () => {
    const addr = '203.0.113.9';
    for (let i = 0; i < 3; i++) expect((await from(addr, '/2.0/videos', { 'x-api-key': s.cred.clientId, 'x-api-secret': 'nope' })).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await from(addr, '/1.0/videos', { authorization: 'Bearer not.a.token' })).status).toBe(401);
    const r = await from(addr, '/2.0/videos', keyHeaders(s.cred));
    expect(r.status).toBe(429);
    expect(r.headers['Retry-After']).toMatch(/^\d+$/);
  });

  it('over a real socket the answer is 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) await call(s.url, 'GET', '/1.0/authenticate/accessToken', { headers: { 'x-api-client-id': 'wmc_nobody', 'x-api-key': 'x' } });
    const r = await call(s.url, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(s.cred) });
    expectError(r, 429, 'RATE_LIMITED');
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('without --trust-proxy X-Forwarded-For is ignored: a new forged address on every guess does not dodge the limit', async () => {
    const wrong = { 'x-api-client-id': s.cred.clientId, 'x-api-key': 'wmk_wrong' };
    for (let i = 0; i < 5; i++) {
      const r = await from('198.51.100.20', '/1.0/authenticate/accessToken', { ...wrong, 'x-forwarded-for': `192.0.2.${i}` });
      expect(r.status).toBe(401);
    }
    const r = await from('198.51.100.20', '/1.0/authenticate/accessToken', { ...keyHeaders(s.cred), 'x-forwarded-for': '192.0.2.99' });
    expect(r.status).toBe(429);
    // Over a socket too: the forged header names nobody.
    for (let i = 0; i < 5; i++) await call(s.url, 'GET', '/1.0/authenticate/accessToken', { headers: { ...wrong, 'x-forwarded-for': `192.0.2.${i}` } });
    expect(s.logs.join('\n')).not.toMatch(/from 192\.0\.2\./);
  });
});

describe('behind reverse proxies named with --trust-proxy', () => {
  let engine: TestEngine;
  let s: TestServer;
  beforeAll(async () => {
    engine = await testEngine({ now: () => Date.UTC(2030, 0, 1) });
    s = await serveEngine(engine, { authLimit: { failures: 3, windowMs: 60_000 }, trustProxy: parseTrustedProxies('10.0.0.0/8, 127.0.0.1')! });
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });
  /** One request from the socket peer `peer`, with this X-Forwarded-For. */
  const from = (peer: string, forwardedFor: string | undefined, target: string, headers: Record<string, string>) =>
    s.app.handle({
      method: 'GET',
      rawUrl: target,
      path: target.split('?')[0]!,
      url: new URL(target, 'http://x'),
      headers: { ...headers, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
      body: async () => undefined,
      remoteAddress: peer,
    });
  const TOKEN = '/1.0/authenticate/accessToken';

  it('two clients behind one proxy are limited separately, and what a client writes in the header does not move it', async () => {
    const wrong = { 'x-api-client-id': s.cred.clientId, 'x-api-key': 'wmk_wrong' };
    for (let i = 0; i < 3; i++) expect((await from('10.0.0.1', `192.0.2.${i}, 198.51.100.7`, TOKEN, wrong)).status).toBe(401);
    // Through two proxies now, still the same client; its forged entries to the left count for nothing.
    expect((await from('10.0.0.2', '192.0.2.50, 198.51.100.7, 10.0.0.1', TOKEN, keyHeaders(s.cred))).status).toBe(429);
    expect((await from('10.0.0.1', '198.51.100.7:50123', TOKEN, keyHeaders(s.cred))).status).toBe(429);
    // Another client behind the same proxy is not affected, nor the proxy's own address.
    expect((await from('10.0.0.1', '198.51.100.8', TOKEN, keyHeaders(s.cred))).status).toBe(200);
    expect((await from('10.0.0.1', undefined, TOKEN, keyHeaders(s.cred))).status).toBe(200);
    // The log names the client, once.
    expect(s.logs.filter((l) => l.includes('failed credential checks'))).toEqual([
      '3 failed credential checks from 198.51.100.7: its requests with credentials get 429 for 60 s',
    ]);
  });

  it('a peer that is not a trusted proxy is the client: its X-Forwarded-For is not read', async () => {
    const wrong = { 'x-api-client-id': s.cred.clientId, 'x-api-key': 'wmk_wrong' };
    for (let i = 0; i < 3; i++) expect((await from('203.0.113.5', `10.0.0.${i}`, TOKEN, wrong)).status).toBe(401);
    expect((await from('203.0.113.5', '198.51.100.30', TOKEN, keyHeaders(s.cred))).status).toBe(429);
    expect((await from('10.0.0.1', '198.51.100.30', TOKEN, keyHeaders(s.cred))).status).toBe(200);
  });

  it('/readyz and /healthz show a client behind a proxy on this machine what they show any other machine', async () => {
    // An engine with a dependency: where it is, and why it failed, are for callers on this machine only.
    s.service.operations.readiness = () => ({ ready: true, dependencies: [{ name: 'queue', up: true, location: 'redis://10.1.2.3:6379' }] });
    const shown = async (forwardedFor: string | undefined) => JSON.parse(String((await from('127.0.0.1', forwardedFor, '/readyz', {})).body)).dependencies;
    expect(await shown(undefined)).toEqual([{ name: 'queue', up: true, location: 'redis://10.1.2.3:6379' }]);
    expect(await shown('198.51.100.7')).toEqual([{ name: 'queue', up: true }]);
    expect(await shown('127.0.0.1')).toEqual([{ name: 'queue', up: true, location: 'redis://10.1.2.3:6379' }]);
  });
});
