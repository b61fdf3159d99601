// The reference SDKs against `wmark serve`, in-process: they send the credentials as x-api-key + x-api-secret, and
// users map client id and key onto them in either order. Both orders work on every key-authenticated route; a wrong
// key is refused in both.
import { describe, expect, it } from 'vitest';
import { flat } from '../../harness/fixtures.js';
import { call, ingestOverHttp, type TestApp } from '../../harness/serve-helpers.js';
import { expectError, inProcessAppPerFile } from '../helpers/serve-in-tests.js';

let s: TestApp;

inProcessAppPerFile((_engine, app) => {
  s = app;
});

const orders = () => ({
  'apiKey = client id, apiSecret = key': { 'x-api-key': s.cred.clientId, 'x-api-secret': s.cred.apiKey },
  'apiKey = key, apiSecret = client id': { 'x-api-key': s.cred.apiKey, 'x-api-secret': s.cred.clientId },
});

describe('SDK credential headers', () => {
  it('both orders get a token whose subject is the client', async () => {
    for (const [label, headers] of Object.entries(orders())) {
      const r = await call(s.app, 'GET', '/1.0/authenticate/accessToken', { headers });
      expect(r.status, label).toBe(200);
      const claims = JSON.parse(Buffer.from(r.json.token.split('.')[1], 'base64url').toString('utf8'));
      expect(claims.sub, label).toBe(s.cred.clientId);
      const me = await call(s.app, 'GET', '/1.0', { headers: { authorization: `Bearer ${r.json.token}` } });
      expect(me.json.client, label).toBe(s.cred.clientId);
    }
  });

  it('both orders create a 2.0 watermark and see the same video', async () => {
    const clip = await flat('884422', 4);
    const [first, second] = Object.values(orders());
    const { video } = await ingestOverHttp(s.app, first!, clip, 'sdk-clip');
    const body = { key: video.key, settings: [{ content: 'sdk viewer' }], containers: ['m3u8'] };
    const a = await call(s.app, 'POST', '/2.0/watermark', { headers: first!, body });
    const b = await call(s.app, 'POST', '/2.0/watermark', { headers: second!, body });
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(b.json.id).toBe(a.json.id);
    expect(b.json.status).toBe('READY');
    const listed = await call(s.app, 'GET', '/2.0/videos?key=sdk-clip', { headers: second! });
    expect(listed.json.map((v: { id: string }) => v.id)).toEqual([video.id]);
  });

  it('a wrong key or a lone header is refused in either order', async () => {
    const wrong = `wmk_${'x'.repeat(43)}`;
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': s.cred.clientId, 'x-api-secret': wrong } }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': wrong, 'x-api-secret': s.cred.clientId } }), 401, 'AUTH_INVALID');
    const lone = await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-secret': s.cred.apiKey } });
    expectError(lone, 401, 'AUTH_REQUIRED');
    expect(lone.json.message).toContain('x-api-secret');
  });
});
