// A remote session with a scripted service: which token or key goes out, renewal once, persistence, API detection.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FetchLike, HttpClient } from '../../../src/remote/client.js';
import { readCredentials, type StoredService, saveService } from '../../../src/remote/credentials-store.js';
import { jwtExpiry, RemoteSession, readTokenResponse } from '../../../src/remote/session.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-session-'));
  file = path.join(dir, 'credentials.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BASE = 'http://svc.test';
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A service: issues tok-1, tok-2, ...; `accept` decides which Authorization/x-api-key values POST /x/watermark takes. */
function service(accept: (headers: Record<string, string>) => boolean, options: { has20?: boolean; delayMs?: number } = {}) {
  const log: { url: string; headers: Record<string, string> }[] = [];
  let issued = 0;
  const f: FetchLike = async (url, init) => {
    const headers = init.headers as Record<string, string>;
    log.push({ url, headers });
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    if (url.endsWith('/1.0/authenticate/accessToken')) {
      return headers['x-api-key'] === 'key' ? json(200, { token: `tok-${++issued}`, expiresIn: 60 }) : json(401, { message: 'bad key', code: 'AUTH_INVALID' });
    }
    if (url.endsWith('/2.0')) return json(options.has20 === false ? 404 : 401, { message: 'x' });
    return accept(headers) ? json(200, { status: 'READY' }) : json(401, { message: 'token refused', code: 'TOKEN_INVALID' });
  };
  return { f, log, tokens: () => log.filter((l) => l.url.endsWith('accessToken')).length, posts: () => log.filter((l) => l.url.endsWith('/watermark')) };
}

function session(f: FetchLike, options: { env?: Record<string, string>; stored?: StoredService } = {}) {
  return new RemoteSession({
    baseUrl: BASE,
    client: new HttpClient({ fetch: f, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }),
    env: options.env ?? {},
    credentialsFile: file,
    stored: options.stored,
    deadline: Date.now() + 10_000,
    timeoutLabel: '--timeout',
  });
}

const stored = (extra: Partial<StoredService> = {}): StoredService => ({
  baseUrl: BASE,
  clientId: 'id',
  token: 'tok-0',
  expiresAt: Date.now() + 3600_000,
  obtainedAt: 0,
  ...extra,
});

describe('tokens', () => {
  it('reads token bodies in their common shapes', () => {
    const raw = (text: string, status = 200) => ({ status, text, headers: new Headers(), request: 'GET x', attempts: 1 });
    expect(readTokenResponse(raw('{"token":"abc","expiresIn":10}'), 1000)).toEqual({ token: 'abc', expiresAt: 11_000 });
    expect(readTokenResponse(raw('{"access_token":"abc","expires_in":10}'), 0)).toEqual({ token: 'abc', expiresAt: 10_000 });
    const jwt = `x.${Buffer.from(JSON.stringify({ exp: 2_000_000_000 })).toString('base64url')}.y`;
    expect(readTokenResponse(raw(`{"accessToken":"${jwt}"}`), 0)).toEqual({ token: jwt, expiresAt: 2_000_000_000_000 });
    expect(readTokenResponse(raw(jwt), 0)).toEqual({ token: jwt, expiresAt: 2_000_000_000_000 });
    expect(() => readTokenResponse(raw('{"nope":1}'), 0)).toThrow(/no token in the response/);
    expect(jwtExpiry('not-a-jwt')).toBeNull();
  });

  it('a valid stored token is used as is', async () => {
    const s = service((h) => h.Authorization === 'Bearer tok-0');
    await session(s.f, { stored: stored() }).createWatermark('1.0', {});
    expect(s.tokens()).toBe(0);
  });

  it('WMARK_TOKEN beats the stored token and is never renewed', async () => {
    const s = service(() => false);
    const r = await session(s.f, { stored: stored({ apiKey: 'key' }), env: { WMARK_TOKEN: 'from-env' } })
      .createWatermark('1.0', {})
      .catch((e: unknown) => e);
    expect(r).toMatchObject({ exitCode: 4, message: expect.stringContaining('token refused') });
    expect(s.posts().map((p) => p.headers.Authorization)).toEqual(['Bearer from-env']);
    expect(s.tokens()).toBe(0);
  });

  it('a refused token is renewed once from the saved key, and the renewal is written back', async () => {
    await saveService(file, stored({ apiKey: 'key' }));
    const s = service((h) => h.Authorization === 'Bearer tok-1');
    await session(s.f, { stored: stored({ apiKey: 'key' }) }).createWatermark('1.0', {});
    expect(s.posts().map((p) => p.headers.Authorization)).toEqual(['Bearer tok-0', 'Bearer tok-1']);
    const saved = (await readCredentials(file)).services[BASE]!;
    expect(saved).toMatchObject({ token: 'tok-1', apiKey: 'key' });
    expect(saved.expiresAt).toBeGreaterThan(Date.now());
  });

  it('a long-lived session renews each expired token in turn, once a renewed one has worked', async () => {
    let clock = 1_000_000;
    const s = service((h) => /^Bearer tok-\d+$/.test(h.Authorization ?? ''));
    const long = new RemoteSession({
      baseUrl: BASE,
      client: new HttpClient({ fetch: s.f, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }),
      env: {},
      credentialsFile: file,
      deadline: Number.POSITIVE_INFINITY,
      timeoutLabel: 'an AbortSignal',
      now: () => clock,
      clientId: 'id',
      apiKey: 'key',
    });
    for (let hour = 0; hour < 3; hour++) {
      expect((await long.createWatermark('1.0', {})).status).toBe(200);
      clock += 3600_000;
    }
    expect(s.posts().map((p) => p.headers.Authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-3']);
  });

  it('concurrent requests that are refused share one renewal', async () => {
    const s = service((h) => h.Authorization === 'Bearer tok-1', { delayMs: 10 });
    const sess = session(s.f, { stored: stored(), env: { WMARK_CLIENT_ID: 'id', WMARK_API_KEY: 'key' } });
    await Promise.all([1, 2, 3, 4].map(() => sess.createWatermark('1.0', {})));
    expect(s.tokens()).toBe(1);
  });

  it('an expired stored token without any key is exit 4 before anything is sent', async () => {
    const s = service(() => true);
    const err = await session(s.f, { stored: stored({ expiresAt: Date.now() - 1000 }) })
      .createWatermark('1.0', {})
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 4, code: 'TOKEN_EXPIRED' });
    expect(s.log).toHaveLength(0);
  });

  it('not logged in and no credentials: exit 4 saying how to log in', async () => {
    const err = await session(service(() => true).f)
      .createWatermark('1.0', {})
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 4, code: 'NOT_LOGGED_IN', hint: expect.stringContaining('wmark auth login --remote http://svc.test') });
  });

  it('a token obtained from env credentials is not written when the user never logged in', async () => {
    const s = service((h) => h.Authorization === 'Bearer tok-1');
    await session(s.f, { env: { WMARK_CLIENT_ID: 'id', WMARK_API_KEY: 'key' } }).createWatermark('1.0', {});
    expect(() => readFileSync(file)).toThrow();
  });
});

describe('2.0 credentials and API detection', () => {
  it('2.0 sends x-api-key + x-api-client-id when a key is at hand, a Bearer token otherwise', async () => {
    const s = service((h) => h['x-api-key'] === 'key' || h.Authorization === 'Bearer tok-0');
    await session(s.f, { env: { WMARK_CLIENT_ID: 'id', WMARK_API_KEY: 'key' } }).createWatermark('2.0', {});
    expect(s.posts()[0]!.headers).toMatchObject({ 'x-api-key': 'key', 'x-api-client-id': 'id' });
    expect(s.posts()[0]!.headers.Authorization).toBeUndefined();
    await session(s.f, { stored: stored() }).createWatermark('2.0', {});
    expect(s.posts()[1]!.headers).toMatchObject({ Authorization: 'Bearer tok-0' });
  });

  it('a stored key goes only with its own client id', () => {
    const sess = session(service(() => true).f, { stored: stored({ apiKey: 'saved' }), env: { WMARK_CLIENT_ID: 'other' } });
    expect(sess.credentials()).toEqual({ clientId: 'other', apiKey: undefined });
  });

  it('picks 2.0 unless /2.0 is a 404; an explicit or stored version wins without asking', async () => {
    expect(await session(service(() => true).f).resolveApi()).toBe('2.0');
    expect(await session(service(() => true, { has20: false }).f).resolveApi()).toBe('1.0');
    const s = service(() => true, { has20: false });
    expect(await session(s.f, { stored: stored({ api: '2.0' }) }).resolveApi()).toBe('2.0');
    expect(await session(s.f).resolveApi('2.0')).toBe('2.0');
    expect(s.log).toHaveLength(0);
  });
});
