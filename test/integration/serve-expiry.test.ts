// Time over real HTTP, with the engine's clock injected and moved forward: token lifetime, watermark expiration
// (set once, never extended, 410 afterwards; docs/settings.md), the 1.0 long-poll link expiring after READY, media link renewal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { bearer, call, ingestOverHttp, keyHeaders, serveInProcess, type TestApp, waitFor } from '../../harness/serve-helpers.js';
import { signUrl } from '../../src/core/sign-url.js';
import { mediaScope } from '../../src/core/watermark-urls.js';
import { expectError } from '../helpers/serve-in-tests.js';

let offset = 0;
const clock = () => Date.now() + offset;
/** Moves the service's clock forward; only while no job runs, so leases and heartbeats stay consistent. */
async function advance(ms: number): Promise<void> {
  await allJobsDone();
  offset += ms;
}

let engine: TestEngine;
let s: TestApp;
let video: any;

async function allJobsDone(): Promise<void> {
  await waitFor(async () => ((await engine.store.listWatermarks()).every((w) => w.status === 'READY') ? true : undefined), 'every watermark job to finish');
}

async function token(): Promise<Record<string, string>> {
  const r = await call(s.app, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(s.cred) });
  expect(r.status).toBe(200);
  return bearer(r.json.token);
}

beforeAll(async () => {
  engine = await testEngine({ now: clock });
  s = await serveInProcess(engine, { tokenTtlSeconds: 60 });
  ({ video } = await ingestOverHttp(s.app, s.v2, await flat('336699', 10), 'expiry-clip'));
});

afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

describe('access tokens', () => {
  it('a token works until its exp (tokenTtlSeconds), then is 401 TOKEN_EXPIRED; a new one works', async () => {
    const headers = await token();
    const claims = JSON.parse(Buffer.from(headers.authorization!.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims.exp - claims.iat).toBe(60);
    expect((await call(s.app, 'GET', '/1.0', { headers })).status).toBe(200);
    // JWT times are whole seconds: stay clear of the boundary on both sides.
    await advance(58_000);
    expect((await call(s.app, 'GET', '/1.0', { headers })).status).toBe(200);
    await advance(3_000);
    const expired = await call(s.app, 'GET', '/1.0', { headers });
    expectError(expired, 401, 'TOKEN_EXPIRED');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers }), 401, 'TOKEN_EXPIRED');
    const renewed = await call(s.app, 'GET', '/1.0', { headers: await token() });
    expect(renewed.status, renewed.text).toBe(200);
    // API keys do not expire.
    expect((await call(s.app, 'GET', '/2.0/videos', { headers: s.v2 })).status).toBe(200);
  });
});

describe('watermark expiration', () => {
  const settings = [{ content: 'expires soon' }];
  let first: any;
  let expSeconds: number;

  it('is set by the first request, caps every signed link, and is not changed by a later request', async () => {
    expSeconds = Math.floor(clock() / 1000) + 300;
    const r = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'expiry-clip', settings, expiration: expSeconds } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ status: 'READY', expiration: expSeconds * 1000 });
    for (const url of [r.json.href, r.json.containers.href, r.json.containers.m3u8]) {
      expect(Number(new URL(url).searchParams.get('expiration'))).toBeLessThanOrEqual(expSeconds * 1000);
    }
    await allJobsDone();
    first = (await call(s.app, 'GET', r.json.href)).json;
    expect(first.containers.mp4).toBeDefined();

    const later = await call(s.app, 'POST', '/1.0/watermark', {
      headers: await token(),
      body: { key: 'expiry-clip', settings, expiration: expSeconds + 3600 },
    });
    expect(later.status).toBe(200);
    expect(later.json).toMatchObject({ id: first.id, status: 'READY', expiration: expSeconds * 1000 });
    expect((await engine.store.getWatermark(first.id))!.expiration).toBe(expSeconds * 1000);
    for (const url of [first.containers.m3u8, first.containers.mp4, first.href]) expect((await call(s.app, 'GET', url)).status).toBe(200);
  });

  it('once passed, its media and resource links are 410 WATERMARK_EXPIRED, and asking again is 410', async () => {
    await advance(301_000);
    const segment = first.containers.m3u8.replace('/video.m3u8?', '/seg_00000.ts?');
    for (const url of [first.containers.m3u8, segment, first.containers.mp4, first.href]) {
      const r = await call(s.app, 'GET', url);
      expectError(r, 410, 'WATERMARK_EXPIRED');
      expect(r.json.message).toContain(new Date(expSeconds * 1000).toISOString());
    }
    // A link signed to outlive the watermark does not revive it.
    const scope = mediaScope('2.0', video.id, first.id);
    const longLived = signUrl(engine.secret, `${s.url}${scope}video.m3u8`, { expirationMs: clock() + 3600_000, scope });
    expectError(await call(s.app, 'GET', longLived), 410, 'WATERMARK_EXPIRED');

    for (const [version, headers] of [
      ['2.0', s.v2],
      ['1.0', await token()],
    ] as const) {
      const again = await call(s.app, 'POST', `/${version}/watermark`, { headers, body: { key: 'expiry-clip', settings } });
      expectError(again, 410, 'WATERMARK_EXPIRED');
      const withNew = await call(s.app, 'POST', `/${version}/watermark`, {
        headers,
        body: { key: 'expiry-clip', settings, expiration: Math.floor(clock() / 1000) + 600 },
      });
      expectError(withNew, 410, 'WATERMARK_EXPIRED');
    }
    // The player page of an expired watermark is refused too.
    const player = await call(s.app, 'GET', first.containers.href);
    expect(player.status).toBe(403);
    expect(player.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('changing the settings in any way makes a new watermark that takes a new expiration', async () => {
    const newExp = Math.floor(clock() / 1000) + 600;
    const r = await call(s.app, 'POST', '/1.0/watermark', {
      headers: await token(),
      body: { key: 'expiry-clip', settings: [{ content: 'expires soon ' }], expiration: newExp },
    });
    expect(r.status).toBe(201);
    expect(r.json.id).not.toBe(first.id);
    expect(r.json).toMatchObject({ status: 'PENDING', expiration: newExp * 1000 });
  });
});

describe('the 1.0 long-poll link', () => {
  it('expires shortly after READY (403 LINK_EXPIRED) while the media links keep working; a new request renews them', async () => {
    const body = { key: 'expiry-clip', settings: [{ content: 'long poll' }], containers: ['m3u8'] };
    const r = await call(s.app, 'POST', '/1.0/watermark', { headers: await token(), body });
    expect(r.status).toBe(201);
    await allJobsDone();
    const ready = await call(s.app, 'GET', r.json.href);
    expect(ready.json.status).toBe('READY');

    await advance(9 * 60_000);
    expect((await call(s.app, 'GET', r.json.href)).status).toBe(200);
    await advance(2 * 60_000);
    expectError(await call(s.app, 'GET', r.json.href), 403, 'LINK_EXPIRED');
    expect((await call(s.app, 'GET', ready.json.containers.m3u8)).status).toBe(200);

    // Media links last a day; after that they are 403 SIGNATURE_EXPIRED (the watermark itself never expires) ...
    await advance(24 * 3600_000);
    expectError(await call(s.app, 'GET', ready.json.containers.m3u8), 403, 'SIGNATURE_EXPIRED');
    expectError(await call(s.app, 'GET', ready.json.containers.m3u8.replace('/video.m3u8?', '/seg_00000.ts?')), 403, 'SIGNATURE_EXPIRED');
    // ... and the same request again hands out fresh ones without any new encode.
    const encodes = engine.runner.encodes();
    const again = await call(s.app, 'POST', '/1.0/watermark', { headers: await token(), body });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: r.json.id, status: 'READY' });
    expect((await call(s.app, 'GET', again.json.containers.m3u8)).status).toBe(200);
    // The long-poll link is tied to the READY time, not to when it was handed out: long past READY it stays expired.
    expectError(await call(s.app, 'GET', again.json.href), 403, 'LINK_EXPIRED');
    expect(engine.runner.encodes()).toBe(encodes);
  });
});
