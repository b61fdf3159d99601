// `wmark serve` over real HTTP: tokens and API keys per version, service info, videos, templates, and the 1.0/2.0
// watermark flows with every request-error case (status codes and JSON bodies, never a 500 or a stack trace).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import {
  bearer,
  call,
  gateFfmpeg,
  ingestOverHttp,
  isMp4Join,
  isSegmentRender,
  keyHeaders,
  messagesOf,
  type Reply,
  rawRequest,
  serveEngine,
  serveInProcess,
  type TestApp,
  waitFor,
} from '../../harness/serve-helpers.js';
import { signToken } from '../../src/core/access-token.js';
import { WmarkError } from '../../src/core/errors.js';
import { segmentFrameCounts } from '../../src/core/plan/segment-timing.js';
import { Credentials } from '../../src/engine/app/credentials.js';
import { MP4_NAME } from '../../src/engine/data-folder/layout.js';
import { expectError, expectNoLeak } from '../helpers/serve-in-tests.js';

const UUID = /^[0-9a-f-]{36}$/;
const HASH = /^[0-9a-f]{32}$/;

let engine: TestEngine;
let s: TestApp;
let clip: string;
let video: any;
let ingestReply: Reply;

beforeAll(async () => {
  engine = await testEngine();
  s = await serveInProcess(engine);
  clip = await flat('336699', 10);
  const r = await ingestOverHttp(s.app, s.v2, clip, 'api-clip');
  ingestReply = r.created;
  video = r.video;
});

afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

const decodeJwtPart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const nowSeconds = () => Math.floor(Date.now() / 1000);

function expectSigned(url: string, pathname: RegExp): URL {
  const u = new URL(url);
  expect(u.origin).toBe(s.url);
  expect(u.pathname).toMatch(pathname);
  expect(u.searchParams.get('expiration')).toMatch(/^\d{13}$/);
  expect(Number(u.searchParams.get('expiration'))).toBeGreaterThan(Date.now());
  expect(u.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return u;
}

describe('authentication', () => {
  it('GET /1.0/authenticate/accessToken exchanges client id + API key for {token}: an HS256 JWT with sub, iat and exp', async () => {
    const r = await call(s.app, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(s.cred) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(typeof r.json.token).toBe('string');
    const parts = (r.json.token as string).split('.');
    expect(parts).toHaveLength(3);
    expect(decodeJwtPart(parts[0]!)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwtPart(parts[1]!);
    expect(claims.sub).toBe(s.cred.clientId);
    expect(claims.exp - claims.iat).toBe(3600);
    expect(Math.abs(claims.iat - nowSeconds())).toBeLessThanOrEqual(2);
  });

  it('the token endpoint answers 401 for missing, partial, unknown or wrong credentials', async () => {
    const url = '/1.0/authenticate/accessToken';
    expectError(await call(s.app, 'GET', url), 401, 'AUTH_REQUIRED');
    expectError(await call(s.app, 'GET', url, { headers: { 'x-api-client-id': s.cred.clientId } }), 401, 'AUTH_REQUIRED');
    // A key alone names its client (API 0.1's SDKs send it so); a wrong one alone is refused.
    expect((await call(s.app, 'GET', url, { headers: { 'x-api-key': s.cred.apiKey } })).status).toBe(200);
    expectError(await call(s.app, 'GET', url, { headers: { 'x-api-key': `${s.cred.apiKey.slice(0, -1)}-` } }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', url, { headers: keyHeaders({ clientId: s.cred.clientId, apiKey: `${s.cred.apiKey}x` }) }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', url, { headers: keyHeaders({ clientId: 'wmc_0000000000000000', apiKey: s.cred.apiKey }) }), 401, 'AUTH_INVALID');
    // A token is not a credential for getting another token.
    expectError(await call(s.app, 'GET', url, { headers: s.v1 }), 401, 'AUTH_REQUIRED');
  });

  it('1.0 routes take only a Bearer token: API key headers alone are refused', async () => {
    expectError(await call(s.app, 'GET', '/1.0', { headers: { 'x-api-key': s.cred.apiKey } }), 401, 'AUTH_REQUIRED');
    expectError(await call(s.app, 'GET', '/1.0', { headers: keyHeaders(s.cred) }), 401, 'AUTH_REQUIRED');
    expectError(await call(s.app, 'GET', '/1.0/videos', { headers: keyHeaders(s.cred) }), 401, 'AUTH_REQUIRED');
    expectError(
      await call(s.app, 'POST', '/1.0/watermark', { headers: keyHeaders(s.cred), body: { key: 'api-clip', settings: [{ content: 'x' }] } }),
      401,
      'AUTH_REQUIRED',
    );
    expect((await call(s.app, 'GET', '/1.0', { headers: s.v1 })).status).toBe(200);
    expect((await call(s.app, 'GET', '/1.0/videos', { headers: s.v1 })).status).toBe(200);
  });

  it('2.0 accepts x-api-key + x-api-client-id, x-api-key + x-api-secret, a key alone, and a Bearer token', async () => {
    for (const headers of [keyHeaders(s.cred), { 'x-api-key': s.cred.clientId, 'x-api-secret': s.cred.apiKey }, s.v1]) {
      const r = await call(s.app, 'GET', '/2.0', { headers });
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect(r.json.client).toBe(s.cred.clientId);
    }
    expectError(await call(s.app, 'GET', '/2.0'), 401, 'AUTH_REQUIRED');
    expect((await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': s.cred.apiKey } })).status).toBe(200);
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': s.cred.clientId } }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': s.cred.clientId, 'x-api-secret': 'wrong' } }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: keyHeaders({ ...s.cred, apiKey: 'wmk_wrong' }) }), 401, 'AUTH_INVALID');
  });

  it('an expired token is 401 TOKEN_EXPIRED; garbage, tampered, alg "none", foreign-key and unknown-client tokens are 401 TOKEN_INVALID', async () => {
    const now = nowSeconds();
    // Tokens this service signed: one a minute past its expiry, one for a client it never had.
    const expired = await new Credentials(engine).issueToken(s.cred.clientId, -60);
    const r = await call(s.app, 'GET', '/1.0', { headers: bearer(expired) });
    expectError(r, 401, 'TOKEN_EXPIRED');
    expect(r.json.message).toMatch(/accessToken/);
    expectError(await call(s.app, 'POST', '/2.0/watermark', { headers: bearer(expired), body: {} }), 401, 'TOKEN_EXPIRED');

    const [h, p, sig] = s.token.split('.') as [string, string, string];
    const forgedClaims = Buffer.from(JSON.stringify({ ...decodeJwtPart(p), exp: now + 999_999 })).toString('base64url');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.${sig}`;
    const foreign = await signToken(Buffer.from('another service key'), { sub: s.cred.clientId, iat: now, exp: now + 60 });
    const ghost = await new Credentials(engine).issueToken('wmc_ffffffffffffffff', 60);
    for (const token of ['abc', 'a.b.c', `${h}.${forgedClaims}.${sig}`, `${h}.${p}.${sig.slice(0, -2)}AA`, none, foreign, ghost]) {
      expectError(await call(s.app, 'GET', '/1.0', { headers: bearer(token) }), 401, 'TOKEN_INVALID');
    }
  });
});

describe('service info', () => {
  it('GET /1.0 (Bearer) and GET /2.0/ (API key) describe the service, the caller and the limits', async () => {
    const v1 = await call(s.app, 'GET', '/1.0', { headers: s.v1 });
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({
      service: 'wmark',
      apiVersions: ['1.0', '2.0'],
      client: s.cred.clientId,
      limits: { requestBodyBytes: 1024 * 1024, forensicMinimumSeconds: 300, forensicPayloadBits: 16, pollIntervalSeconds: 3 },
    });
    expect(typeof v1.json.version).toBe('string');
    const v2 = await call(s.app, 'GET', '/2.0/', { headers: s.v2 });
    expect(v2.status).toBe(200);
    expect(v2.json).toEqual(v1.json);
  });

  it('unknown routes are 404 NOT_FOUND and wrong methods 405 with Allow, both as JSON', async () => {
    expectError(await call(s.app, 'GET', '/3.0/watermark', { headers: s.v2 }), 404, 'NOT_FOUND');
    expectError(await call(s.app, 'GET', '/nope'), 404, 'NOT_FOUND');
    const r = await call(s.app, 'DELETE', '/2.0/watermark', { headers: s.v2 });
    expectError(r, 405, 'METHOD_NOT_ALLOWED');
    expect(r.headers.get('allow')).toBe('POST');
    expect((await call(s.app, 'GET', '/healthz')).json).toEqual({ ok: true });
  });

  it('broken percent-encoding in a path is 400 BAD_PATH, not a 500', async () => {
    for (const target of ['/2.0/videos/%E0%A4%A', '/2.0/videos/%', '/1.0/templates/%ZZ', '/2.0/watermark/%C3']) {
      const r = await rawRequest(s.app, target, { headers: { ...s.v2, ...s.v1 } });
      expect(r.status, `${target} ${r.text}`).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ code: 'BAD_PATH' });
    }
  });
});

describe('videos', () => {
  it('POST /2.0/videos answers 201 PENDING at once; GET /2.0/videos/{id} then reports INGESTED with the probed metadata', () => {
    expect(ingestReply.status).toBe(201);
    expect(ingestReply.json).toMatchObject({ key: 'api-clip', sourceUrl: clip, status: 'PENDING', enableForensic: false, name: null });
    expect(ingestReply.json.id).toMatch(UUID);
    expect(video).toMatchObject({
      id: ingestReply.json.id,
      key: 'api-clip',
      sourceUrl: clip,
      status: 'INGESTED',
      enableForensic: false,
      width: 320,
      height: 180,
      hasAudio: true,
      segments: 6,
    });
    // 10 s: the lead segments of 0.5, 0.5, 1 and 2 s, one 4-s GOP, then the last 2 s.
    expect(video.segments).toBe(segmentFrameCounts({ num: 30, den: 1 }, 10 * 30, true).length);
    expect(video.duration).toBeCloseTo(10, 1);
    expect(video.createdOn).toBe(ingestReply.json.createdOn);
    expect(Math.abs(video.createdOn - Date.now())).toBeLessThan(120_000);
  });

  it('the same key again answers 200 with the same video and no new work', async () => {
    const before = engine.runner.calls.length;
    for (const version of ['1.0', '2.0']) {
      const r = await call(s.app, 'POST', `/${version}/videos`, { headers: version === '1.0' ? s.v1 : s.v2, body: { sourceUrl: clip, key: 'api-clip' } });
      expect(r.status).toBe(200);
      expect(r.json).toEqual(video);
    }
    expect(engine.runner.calls.length).toBe(before);
  });

  it('a source that is not a video, or does not exist, is 422 with the reason', async () => {
    const dir = tempDir('serve-api');
    const text = path.join(dir, 'notes.mp4');
    writeFileSync(text, 'this is not a video\n'.repeat(50));
    const r = await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: text } });
    expectError(r, 422, 'NOT_A_VIDEO');
    expectError(await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: path.join(dir, 'missing.mp4') } }), 422, 'SOURCE_NOT_FOUND');
    const list = await call(s.app, 'GET', `/2.0/videos?key=${encodeURIComponent(text)}`, { headers: s.v2 });
    expect(list.json).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a missing sourceUrl or wrongly typed fields are 400 VALIDATION_FAILED listing every issue', async () => {
    const missing = await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { key: 'k' } });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(messagesOf(missing)).toEqual([expect.stringMatching(/^sourceUrl: /)]);
    const typed = await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: 5, enableForensic: 'yes', key: '' } });
    expectError(typed, 400, 'VALIDATION_FAILED');
    const messages = messagesOf(typed);
    expect(messages).toHaveLength(3);
    for (const field of ['sourceUrl', 'enableForensic', 'key'])
      expect(
        messages.some((m) => m.startsWith(`${field}: `)),
        field,
      ).toBe(true);
  });

  it('GET /2.0/videos lists videos with a ?key= filter and limit/page paging (trailing slash accepted)', async () => {
    const second = await ingestOverHttp(s.app, s.v1, await flat('336699', 4), 'api-clip-2', '1.0');
    expect(second.created.status).toBe(201);
    const all = await call(s.app, 'GET', '/2.0/videos', { headers: s.v2 });
    expect(all.status).toBe(200);
    expect(all.json.map((v: any) => v.id).sort()).toEqual([video.id, second.video.id].sort());
    const slash = await call(s.app, 'GET', '/2.0/videos/', { headers: s.v2 });
    expect(slash.json).toEqual(all.json);

    const byKey = await call(s.app, 'GET', '/2.0/videos?key=api-clip-2', { headers: s.v2 });
    expect(byKey.json).toEqual([second.video]);
    expect((await call(s.app, 'GET', '/1.0/videos?key=unknown', { headers: s.v1 })).json).toEqual([]);

    const page1 = await call(s.app, 'GET', '/2.0/videos?limit=1&page=1', { headers: s.v2 });
    const page2 = await call(s.app, 'GET', '/2.0/videos?limit=1&page=2', { headers: s.v2 });
    const page3 = await call(s.app, 'GET', '/2.0/videos?limit=1&page=3', { headers: s.v2 });
    expect(page1.json).toHaveLength(1);
    expect(page2.json).toHaveLength(1);
    expect(page3.json).toEqual([]);
    expect([page1.json[0].id, page2.json[0].id].sort()).toEqual([video.id, second.video.id].sort());

    for (const q of ['limit=0', 'limit=abc', 'page=0', 'limit=1001', 'page=-1']) {
      const r = await call(s.app, 'GET', `/2.0/videos?${q}`, { headers: s.v2 });
      expectError(r, 400, 'VALIDATION_FAILED');
      expect(messagesOf(r)[0]).toMatch(/^(limit|page): /);
    }
  });

  it('GET /2.0/videos/{id} of an unknown id is 404 VIDEO_NOT_FOUND', async () => {
    expectError(await call(s.app, 'GET', '/2.0/videos/00000000-0000-0000-0000-000000000000', { headers: s.v2 }), 404, 'VIDEO_NOT_FOUND');
    expectError(await call(s.app, 'GET', '/1.0/videos/nope', { headers: s.v1 }), 404, 'VIDEO_NOT_FOUND');
  });
});

describe('templates', () => {
  let created: any;

  it('GET /2.0/templates lists the built-in templates with their placeholders (trailing slash accepted)', async () => {
    const r = await call(s.app, 'GET', '/2.0/templates', { headers: s.v2 });
    expect(r.status).toBe(200);
    const builtins = r.json.filter((t: any) => t.builtin);
    expect(builtins.map((t: any) => t.id).sort()).toEqual(['diagonal-drift', 'session-stamp', 'viewer-corner']);
    expect(r.json.find((t: any) => t.id === 'viewer-corner')).toMatchObject({ placeholders: ['name', 'email'], builtin: true });
    expect((await call(s.app, 'GET', '/2.0/templates/', { headers: s.v2 })).json).toEqual(r.json);
    expect((await call(s.app, 'GET', '/1.0/templates', { headers: s.v1 })).json).toEqual(r.json);
  });

  it('POST /2.0/templates creates a template (both placeholder notations); GET by id returns it', async () => {
    const body = {
      name: 'both notations',
      description: 'name and email',
      settings: [{ content: '[%name%] %email%', x: 0.1, y: 0.1, align: 'LEFT', verticalAlign: 'TOP' }],
    };
    const r = await call(s.app, 'POST', '/2.0/templates', { headers: s.v2, body });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'both notations', description: 'name and email', placeholders: ['name', 'email'] });
    expect(r.json.id).toMatch(UUID);
    created = r.json;
    const got = await call(s.app, 'GET', `/2.0/templates/${created.id}`, { headers: s.v2 });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(created);
    const list = await call(s.app, 'GET', '/2.0/templates', { headers: s.v2 });
    expect(list.json.find((t: any) => t.id === created.id)).toEqual({ ...created, builtin: false });
    expect((await call(s.app, 'GET', '/2.0/templates/viewer-corner', { headers: s.v2 })).json.placeholders).toEqual(['name', 'email']);

    const slash = await call(s.app, 'POST', '/1.0/templates/', { headers: s.v1, body: { name: 'v1 template', settings: [{ content: '%who%' }] } });
    expect(slash.status).toBe(201);
    expect(slash.json.placeholders).toEqual(['who']);
  });

  it('an invalid template is 400 listing every issue; an unknown id is 404 TEMPLATE_NOT_FOUND', async () => {
    const r = await call(s.app, 'POST', '/2.0/templates', {
      headers: s.v2,
      body: { name: '', settings: [{ content: '%a%', fontSize: 'big' }], colour: 'red' },
    });
    expectError(r, 400, 'TEMPLATE_INVALID');
    const messages = messagesOf(r);
    for (const field of ['colour', 'name', 'fontSize'])
      expect(
        messages.some((m) => m.includes(field)),
        `${field} in ${messages.join(' | ')}`,
      ).toBe(true);
    expectError(await call(s.app, 'GET', '/2.0/templates/nope', { headers: s.v2 }), 404, 'TEMPLATE_NOT_FOUND');
    expectError(await call(s.app, 'POST', '/2.0/templates', { headers: s.v2, raw: '{"name":', contentType: 'application/json' }), 400, 'INVALID_JSON');
  });

  it('settingsTemplateMapping renders both notations; a missing placeholder is 400 naming it; an unknown template is 404', async () => {
    const mapping = { id: created.id, mappings: { name: 'Ann Lee', email: 'ann@example.com' } };
    const r = await call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, body: { key: 'api-clip', settingsTemplateMapping: mapping, containers: ['m3u8'] } });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('PENDING');
    const stored = (await engine.store.getWatermark(r.json.id))!;
    expect((stored.settings as any[]).map((x) => x.content)).toEqual(['Ann Lee ann@example.com']);

    // The same rendering again is the same watermark.
    const again = await call(s.app, 'POST', '/1.0/watermark', {
      headers: s.v1,
      body: { key: 'api-clip', settingsTemplateMapping: mapping, containers: ['m3u8'] },
    });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(r.json.id);

    const missing = await call(s.app, 'POST', '/2.0/watermark', {
      headers: s.v2,
      body: { key: 'api-clip', settingsTemplateMapping: { id: 'viewer-corner', mappings: { name: 'Ann' } } },
    });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(messagesOf(missing)).toEqual([expect.stringMatching(/placeholder "email"/)]);
    const none = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'api-clip', settingsTemplateMapping: { id: created.id } } });
    expectError(none, 400, 'VALIDATION_FAILED');
    expect(messagesOf(none).join('\n')).toMatch(/"name"[\s\S]*"email"/);
    expectError(
      await call(s.app, 'POST', '/2.0/watermark', {
        headers: s.v2,
        body: { key: 'api-clip', settingsTemplateMapping: { id: 'no-such-template', mappings: {} } },
      }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    await waitFor(async () => ((await engine.store.getWatermark(r.json.id))!.status === 'READY' ? true : undefined), 'the template watermark to finish');
  });
});

describe('POST /1.0/watermark and its long-poll href', () => {
  it('answers 201 PENDING with a signed player link, an iframe of it and a signed href; the href then reports READY with containers.m3u8', async () => {
    const r = await call(s.app, 'POST', '/1.0/watermark', {
      headers: s.v1,
      body: { key: 'api-clip', settings: [{ content: 'viewer one', fontColor: 'FFCC00' }], containers: ['m3u8', 'mp4'] },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('PENDING');
    expect(Object.keys(r.json.containers).sort()).toEqual(['href', 'iframe']);
    expect(r.json.id).toMatch(HASH);
    expect(r.json.videoId).toBe(video.id);
    const href = expectSigned(r.json.href, new RegExp(`^/1\\.0/watermark/${video.id}/${r.json.id}$`));
    const player = expectSigned(r.json.containers.href, /^\/player\/1\.0\/$/);
    const source = expectSigned(player.searchParams.get('sourceUrl')!, new RegExp(`^/1\\.0/watermark/${video.id}/${r.json.id}/video\\.m3u8$`));
    expect(player.searchParams.get('href')).toBe(href.href);
    const iframe = /^<iframe src="([^"]+)"[^>]*><\/iframe>$/.exec(r.json.containers.iframe);
    expect(iframe).not.toBeNull();
    expect(iframe![1]!.replace(/&amp;/g, '&')).toBe(r.json.containers.href);

    // Long-poll: no credentials, same shape minus href; m3u8 only once READY.
    const seen: Reply[] = [];
    const ready = await waitFor(async () => {
      const p = await call(s.app, 'GET', r.json.href);
      seen.push(p);
      return p.json?.status === 'READY' ? p : undefined;
    }, 'the 1.0 href to report READY');
    for (const p of seen) {
      expect(p.status).toBe(200);
      expect(p.headers.get('access-control-allow-origin')).toBe('*');
      expect(p.json).not.toHaveProperty('href');
      expect(p.json).toMatchObject({ id: r.json.id, videoId: video.id, expiration: null });
      expect(p.json.containers.iframe).toMatch(/^<iframe src="/);
      if (p.json.status === 'PENDING') expect(p.json.containers).not.toHaveProperty('m3u8');
      else expect(p.json.status).toBe('READY');
    }
    expect(expectSigned(ready.json.containers.m3u8, /\.m3u8$/).pathname).toBe(source.pathname);
    const playlist = await call(s.app, 'GET', ready.json.containers.m3u8);
    expect(playlist.status).toBe(200);
    expect(playlist.text).toMatch(/^#EXTM3U/);

    // The mp4 appears in the long-poll answer once joined.
    const withMp4 = await waitFor(async () => {
      const p = await call(s.app, 'GET', r.json.href);
      return p.json.containers.mp4 ? p : undefined;
    }, 'containers.mp4');
    expectSigned(withMp4.json.containers.mp4, new RegExp(`/${r.json.id}/video\\.mp4$`));
    expect(existsSync(path.join(watermarkDir(engine, video.id, r.json.id), MP4_NAME))).toBe(true);

    const again = await call(s.app, 'POST', '/1.0/watermark', {
      headers: s.v1,
      body: { key: 'api-clip', settings: [{ content: 'viewer one', fontColor: 'FFCC00' }], containers: ['m3u8', 'mp4'] },
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: r.json.id, status: 'READY' });
    expect(again.json.containers.m3u8).toBeDefined();
  });
});

describe('POST /2.0/watermark and its resource href', () => {
  it('answers READY (playable now) with containers.href + m3u8 and href; the mp4 is listed only once complete; href re-signs', async () => {
    const gate = gateFfmpeg(engine, isMp4Join);
    const body = { videoId: video.id, settings: [{ content: 'viewer two', x: 0.1, animation: { toX: 0.6, startTime: 0, endTime: 8 } }] };
    const r = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe('READY');
    expect(Object.keys(r.json.containers).sort()).toEqual(['href', 'm3u8']);
    expectSigned(r.json.containers.href, /^\/player\/2\.0\/$/);
    const m3u8 = expectSigned(r.json.containers.m3u8, new RegExp(`^/2\\.0/watermark/${video.id}/${r.json.id}/video\\.m3u8$`));
    const href = expectSigned(r.json.href, new RegExp(`^/2\\.0/watermark/${video.id}/${r.json.id}$`));
    expect(new URL(r.json.containers.href).searchParams.get('sourceUrl')).toBe(m3u8.href);

    // Playable right away.
    const playlist = await call(s.app, 'GET', r.json.containers.m3u8);
    expect(playlist.status).toBe(200);
    expect(playlist.text).toMatch(/#EXTINF:[\d.]+,\s*\nseg_00000\.ts\?expiration=/);

    // The resource link needs no credentials and hands out renewed signatures; no mp4 while it is not joined.
    await waitFor(() => (gate.held() > 0 ? true : undefined), 'the mp4 join to start');
    await new Promise((res) => setTimeout(res, 5));
    const renewed = await call(s.app, 'GET', r.json.href);
    expect(renewed.status).toBe(200);
    expect(renewed.json).toMatchObject({ id: r.json.id, videoId: video.id, status: 'READY' });
    expect(renewed.json.containers).not.toHaveProperty('mp4');
    expect(renewed.json.containers).not.toHaveProperty('iframe');
    const renewedHref = new URL(renewed.json.href);
    expect(renewedHref.pathname).toBe(href.pathname);
    expect(Number(renewedHref.searchParams.get('expiration'))).toBeGreaterThan(Number(href.searchParams.get('expiration')));
    expect(renewedHref.searchParams.get('signature')).not.toBe(href.searchParams.get('signature'));
    expect(new URL(renewed.json.containers.m3u8).searchParams.get('signature')).not.toBe(m3u8.searchParams.get('signature'));
    expect((await call(s.app, 'GET', renewed.json.containers.m3u8)).status).toBe(200);

    gate.open();
    const done = await waitFor(async () => {
      const p = await call(s.app, 'GET', r.json.href);
      return p.json.containers.mp4 ? p : undefined;
    }, 'containers.mp4 on the 2.0 resource');
    const mp4 = await call(s.app, 'GET', done.json.containers.mp4);
    expect(mp4.status).toBe(200);
    expect(mp4.headers.get('content-type')).toBe('video/mp4');
    const bytes = mp4.body;
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(bytes.equals(readFileSync(path.join(watermarkDir(engine, video.id, r.json.id), MP4_NAME)))).toBe(true);

    // Same request again (trailing slash, `id` alias, key): 200 with the same watermark and no new encode.
    const encodes = engine.runner.encodes();
    for (const b of [body, { id: video.id, settings: body.settings }, { key: 'api-clip', settings: body.settings }]) {
      const again = await call(s.app, 'POST', '/2.0/watermark/', { headers: s.v2, body: b });
      expect(again.status).toBe(200);
      expect(again.json).toMatchObject({ id: r.json.id, status: 'READY' });
      expect(again.json.containers.mp4).toBeDefined();
    }
    expect(engine.runner.encodes()).toBe(encodes);
  });
});

describe('job states over HTTP', () => {
  it('a video still being ingested: same key again is 200 PENDING, a watermark on it is 409 VIDEO_NOT_READY', async () => {
    const gate = gateFfmpeg(engine, (args) => args.includes('-segment_list'));
    const created = await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: await flat('336699', 4), key: 'slow-ingest', name: 'held' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ key: 'slow-ingest', name: 'held', status: 'PENDING', width: 320, height: 180 });
    await waitFor(() => (gate.held() > 0 ? true : undefined), 'the ingest encode to start');
    const source = await flat('336699', 4);
    const again = await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: source, key: 'slow-ingest' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: created.json.id, status: 'PENDING' });
    // Another source under the same key is a conflict, not a silent no-op.
    expectError(
      await call(s.app, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: 'https://example.com/other.mp4', key: 'slow-ingest' } }),
      409,
      'KEY_EXISTS',
    );
    expectError(
      await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'slow-ingest', settings: [{ content: 'too early' }] } }),
      409,
      'VIDEO_NOT_READY',
    );
    gate.open();
    await waitFor(
      async () => ((await call(s.app, 'GET', `/2.0/videos/${created.json.id}`, { headers: s.v2 })).json.status === 'INGESTED' ? true : undefined),
      'the held ingest',
    );
  });

  it('a failed render is 2.0 status FAILED with a short reason (no stack); the same request again retries and is READY', async () => {
    let fail = true;
    const inner = engine.runner.ffmpeg.bind(engine.runner);
    engine.runner.ffmpeg = async (args, options) => {
      if (fail && isSegmentRender(args)) {
        fail = false;
        throw new WmarkError('FFMPEG_FAILED', 'ffmpeg failed', { details: ['simulated encoder failure: no space left on device'] });
      }
      return inner(args, options);
    };
    const body = { key: 'api-clip', settings: [{ content: 'unlucky viewer' }], containers: ['m3u8'] };
    const failed = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body });
    expect(failed.status).toBe(201);
    expect(failed.json).toMatchObject({ status: 'FAILED', error: 'simulated encoder failure: no space left on device' });
    expect(failed.json.containers).not.toHaveProperty('m3u8');
    expectNoLeak(failed.text);
    expect((await call(s.app, 'GET', failed.json.href)).json).toMatchObject({ id: failed.json.id, status: 'FAILED' });

    const retried = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body });
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ id: failed.json.id, status: 'READY' });
    expect(retried.json).not.toHaveProperty('error');
    expect((await call(s.app, 'GET', retried.json.containers.m3u8)).status).toBe(200);
    await waitFor(async () => ((await engine.store.getWatermark(failed.json.id))!.status === 'READY' ? true : undefined), 'the retried job to finish');
  });

  it('2.0 answers 503 NOT_READY_YET with Retry-After when a new watermark is not playable within the wait', async () => {
    const impatient = await serveInProcess(engine, { tokenTtlSeconds: 60, playableTimeoutMs: 200 });
    const gate = gateFfmpeg(engine, isSegmentRender);
    try {
      const r = await call(impatient.app, 'POST', '/2.0/watermark', {
        headers: s.v2,
        body: { key: 'api-clip', settings: [{ content: 'slow start' }], containers: ['m3u8'] },
      });
      expectError(r, 503, 'NOT_READY_YET');
      expect(r.headers.get('retry-after')).toBe('5');
    } finally {
      gate.open();
    }
    await waitFor(async () => ((await engine.store.listWatermarks()).every((w) => w.status === 'READY') ? true : undefined), 'the slow job to finish');
    await impatient.close();
  });
});

describe('watermark request errors', () => {
  const post = (body: unknown, version = '2.0') => call(s.app, 'POST', `/${version}/watermark`, { headers: version === '1.0' ? s.v1 : s.v2, body });

  it('an unknown video is 404 VIDEO_NOT_FOUND, by key and by id', async () => {
    expectError(await post({ key: 'no-such-key', settings: [{ content: 'x' }] }), 404, 'VIDEO_NOT_FOUND');
    expectError(await post({ videoId: '00000000-0000-0000-0000-000000000000', settings: [{ content: 'x' }] }, '1.0'), 404, 'VIDEO_NOT_FOUND');
  });

  it('text wholly outside the frame for the whole video is 400 VALIDATION_FAILED naming the field; a move across it is accepted', async () => {
    const off = await post({ key: 'api-clip', settings: [{ content: 'fine' }, { content: 'lost', x: 2 }] });
    expectError(off, 400, 'VALIDATION_FAILED');
    expect(messagesOf(off).join('\n')).toMatch(/^settings\[1\]\.x: the text at x 2, y 0.5 lies wholly outside the frame/);
    const across = await post({
      key: 'api-clip',
      containers: ['m3u8'],
      settings: [{ content: 'passing', x: -1, animation: { toX: 2, startTime: 0, endTime: 10 } }],
    });
    expect(across.status, across.text).toBeLessThan(300);
  });

  it('a FORENSIC request on a short video ingested without enableForensic is 422', async () => {
    for (const [version, content] of [
      ['1.0', 'AB'],
      ['2.0', 'QUI='],
    ] as const) {
      const r = await post({ key: 'api-clip', settings: [{ type: 'FORENSIC', content }] }, version);
      expect(r.status, r.text).toBe(422);
      expectError(r, 422, r.json.code);
      expect(r.json.code).toMatch(/^FORENSIC_/);
    }
  });

  it('a body over 1 MiB is 413 BODY_TOO_LARGE, with Content-Length or chunked', async () => {
    const big = JSON.stringify({ key: 'api-clip', settings: [{ content: 'x' }], pad: 'a'.repeat(1024 * 1024) });
    expectError(await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, raw: big, contentType: 'application/json' }), 413, 'BODY_TOO_LARGE');
    // Only a socket shows a chunked body cut off at the limit.
    const real = await serveEngine(engine);
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(real.url);
      const req = http.request(
        { host: u.hostname, port: u.port, method: 'POST', path: '/2.0/watermark', headers: { ...s.v2, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 18; i++) req.write('a'.repeat(64 * 1024));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).code).toBe('BODY_TOO_LARGE');
    // The connection-level drain left the server healthy.
    expect((await call(real.url, 'GET', '/healthz')).status).toBe(200);
    await real.close();
  });

  it('a non-JSON content type is 415; malformed JSON is 400 INVALID_JSON; a non-object body is 400 INVALID_BODY', async () => {
    const json = JSON.stringify({ key: 'api-clip', settings: [{ content: 'x' }] });
    expectError(await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, raw: json, contentType: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(
      await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, raw: 'key=api-clip', contentType: 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const bad = await call(s.app, 'POST', '/1.0/watermark', { headers: s.v1, raw: '{"key": "api-clip", settings: }', contentType: 'application/json' });
    expectError(bad, 400, 'INVALID_JSON');
    expect(bad.json.message).toMatch(/^malformed JSON body/);
    expectError(
      await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, raw: '[1,2]', contentType: 'application/json; charset=utf-8' }),
      400,
      'INVALID_BODY',
    );
    expectError(await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, raw: '"text"', contentType: 'application/json' }), 400, 'INVALID_BODY');
    const empty = await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2 });
    expectError(empty, 400, 'VALIDATION_FAILED');
  });

  it('wrongly typed fields are 400 VALIDATION_FAILED with every problem in a message array', async () => {
    const top = await post({ key: 5, containers: ['avi'], videoId: false, settingsTemplateMapping: { id: 3 } });
    expectError(top, 400, 'VALIDATION_FAILED');
    const topMessages = messagesOf(top);
    for (const field of ['key', 'containers.0', 'videoId', 'settingsTemplateMapping.id'])
      expect(
        topMessages.some((m) => m.startsWith(`${field}: `)),
        `${field} in ${topMessages.join(' | ')}`,
      ).toBe(true);

    const settings = await post({ key: 'api-clip', settings: [{ content: 7, fontSize: 'big', fontColor: 'red', align: 'DIAGONAL', x: '0.5' }] }, '1.0');
    expectError(settings, 400, 'VALIDATION_FAILED');
    const messages = messagesOf(settings);
    expect(messages.length).toBeGreaterThanOrEqual(5);
    for (const field of ['content', 'fontSize', 'fontColor', 'align', '.x'])
      expect(
        messages.some((m) => m.includes(field)),
        `${field} in ${messages.join(' | ')}`,
      ).toBe(true);

    expectError(await post({ key: 'api-clip', settings: 'viewer' }), 400, 'VALIDATION_FAILED');
    expectError(await post({ key: 'api-clip', settings: [] }), 400, 'VALIDATION_FAILED');
    expectError(await post({ key: 'api-clip', containers: [], settings: [{ content: 'x' }] }), 400, 'VALIDATION_FAILED');
    const both = await post({ key: 'api-clip', settings: [{ content: 'x' }], settingsTemplateMapping: { id: 'viewer-corner', mappings: {} } });
    expectError(both, 400, 'VALIDATION_FAILED');
    const noVideo = await post({ settings: [{ content: 'x' }] });
    expectError(noVideo, 400, 'VALIDATION_FAILED');
    expect(messagesOf(noVideo)).toEqual([expect.stringMatching(/^key or videoId: /)]);
  });

  it('an expiration in the past, in milliseconds or of the wrong type is 400 naming expiration', async () => {
    const past = await post({ key: 'api-clip', settings: [{ content: 'expiring' }], expiration: nowSeconds() - 60 });
    expectError(past, 400, 'VALIDATION_FAILED');
    expect(messagesOf(past)).toEqual([expect.stringMatching(/^expiration: .*not in the future/)]);
    const ms = await post({ key: 'api-clip', settings: [{ content: 'expiring' }], expiration: Date.now() + 60_000 }, '1.0');
    expectError(ms, 400, 'VALIDATION_FAILED');
    expect(messagesOf(ms)[0]).toMatch(/milliseconds/);
    const typed = await post({ key: 'api-clip', settings: [{ content: 'expiring' }], expiration: true });
    expectError(typed, 400, 'VALIDATION_FAILED');
    expect(messagesOf(typed)[0]).toMatch(/^expiration: /);
    // Nothing was created by any of these.
    expect((await engine.store.listWatermarks()).some((w) => (w.settings as any[])[0]?.content === 'expiring')).toBe(false);
  });

  it('odd bodies on every POST route are 4xx JSON errors with a code, never a 500', async () => {
    const bodies = [
      'null',
      '{}',
      '[]',
      '"x"',
      '123',
      '{"settings":[null]}',
      '{"key":"api-clip","settings":[{"content":{"a":1}}]}',
      '{"key":"api-clip","settingsTemplateMapping":{"id":"viewer-corner","mappings":{"name":1,"email":null}}}',
      '{"key":"api-clip","settingsTemplateMapping":{"id":"viewer-corner","mappings":"name=Ann"}}',
      '{"key":"api-clip","settings":[{"content":"x","animation":"fast"}]}',
      '{"key":"api-clip","settings":[{"content":"x","fontSize":1e309}]}',
      '{"key":"api-clip","containers":"m3u8","settings":[{"content":"x"}]}',
      '{"key":"api-clip","expiration":"tomorrow","settings":[{"content":"x"}]}',
      '{"__proto__":{"key":"api-clip"},"constructor":{"prototype":{"x":1}}}',
      '{"sourceUrl":"","name":7,"settings":{"length":1}}',
      `{"key":"${'k'.repeat(5000)}","sourceUrl":"${'s'.repeat(5000)}"}`,
    ];
    const rowsBefore = (await engine.store.listWatermarks()).length;
    for (const route of ['/2.0/videos', '/1.0/videos', '/2.0/templates', '/2.0/watermark', '/1.0/watermark']) {
      for (const raw of bodies) {
        const r = await call(s.app, 'POST', route, { headers: route.startsWith('/1.0') ? s.v1 : s.v2, raw, contentType: 'application/json' });
        expect(r.status, `${route} ${raw.slice(0, 80)} -> ${r.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${route} ${raw.slice(0, 80)}`).toBeLessThan(500);
        expectError(r, r.status, r.json.code);
      }
    }
    expect((await engine.store.listWatermarks()).length).toBe(rowsBefore);
  });

  it('no bad input reached the server log as an unexpected error (with a stack)', () => {
    expect(s.logs.filter((l) => /\n\s+at /.test(l))).toEqual([]);
  });
});
