// `wmark auth keys create|list|revoke` (in-process CLI on the server's data dir) against a running `wmark serve`:
// a created key works at once, keys are never listed, and a revoked client's keys and tokens stop working (401).
import { describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import type { TestEngine } from '../../harness/engine.js';
import { bearer, call, keyHeaders, type TestApp } from '../../harness/serve-helpers.js';
import { expectError, inProcessAppPerFile } from '../helpers/serve-in-tests.js';

let engine: TestEngine;
let s: TestApp;

inProcessAppPerFile((e, app) => {
  engine = e;
  s = app;
});

const cli = (...args: string[]) => runCli(['--data-dir', engine.dataDir, ...args]);

describe('wmark auth keys', () => {
  let created: { clientId: string; apiKey: string; label: string | null };
  let token: string;

  it('create prints a client id and an API key (once) that the running server accepts at once', async () => {
    const r = await cli('--json', 'auth', 'keys', 'create', '--label', 'reviewer laptop');
    expect(r.code, r.stderr).toBe(0);
    created = r.json();
    expect(created).toMatchObject({
      clientId: expect.stringMatching(/^wmc_[0-9a-f]{16}$/),
      apiKey: expect.stringMatching(/^wmk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/),
      label: 'reviewer laptop',
    });
    // The key names its client, so it also works alone.
    expect(created.apiKey.slice(4, 20)).toBe(created.clientId.slice(4));

    const t = await call(s.app, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(created) });
    expect(t.status).toBe(200);
    token = t.json.token;
    expect((await call(s.app, 'GET', '/1.0', { headers: bearer(token) })).json.client).toBe(created.clientId);
    expect((await call(s.app, 'GET', '/2.0', { headers: keyHeaders(created) })).status).toBe(200);
    expect((await call(s.app, 'GET', '/2.0', { headers: { 'x-api-key': created.clientId, 'x-api-secret': created.apiKey } })).status).toBe(200);
    expect((await call(s.app, 'POST', '/token', { headers: { 'x-api-key': created.apiKey } })).status).toBe(200);

    const plain = await cli('auth', 'keys', 'create');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/client id\s+wmc_[0-9a-f]{16}\nAPI key\s+wmk_\S+/);
  });

  it('list shows client ids and labels but never a key or its hash', async () => {
    const r = await cli('--json', 'auth', 'keys', 'list');
    expect(r.code).toBe(0);
    const list = r.json<any[]>();
    expect(list.map((k) => k.clientId)).toEqual(expect.arrayContaining([s.cred.clientId, created.clientId]));
    expect(list.find((k) => k.clientId === created.clientId)).toEqual({
      clientId: created.clientId,
      label: 'reviewer laptop',
      createdOn: expect.any(Number),
      revokedOn: null,
    });
    expect(r.stdout).not.toContain(created.apiKey);
    expect(r.stdout).not.toMatch(/keyHash|[0-9a-f]{64}/);
    const plain = await cli('auth', 'keys', 'list');
    expect(plain.stdout).toMatch(new RegExp(`${created.clientId}\\s+active\\s+.*reviewer laptop`));
  });

  it("revoke stops the client's API keys and its already-issued tokens (401); other clients keep working", async () => {
    const r = await cli('--json', 'auth', 'keys', 'revoke', created.clientId);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ clientId: created.clientId, revoked: true });

    const tokenCall = await call(s.app, 'GET', '/1.0', { headers: bearer(token) });
    expectError(tokenCall, 401, 'TOKEN_INVALID');
    expect(tokenCall.json.message).toMatch(/revoked/);
    expectError(await call(s.app, 'POST', '/2.0/watermark', { headers: bearer(token), body: {} }), 401, 'TOKEN_INVALID');
    expectError(await call(s.app, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(created) }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: keyHeaders(created) }), 401, 'AUTH_INVALID');
    expectError(await call(s.app, 'GET', '/2.0/videos', { headers: { 'x-api-key': created.clientId, 'x-api-secret': created.apiKey } }), 401, 'AUTH_INVALID');

    expect((await call(s.app, 'GET', '/1.0', { headers: s.v1 })).status).toBe(200);
    expect((await call(s.app, 'GET', '/2.0', { headers: s.v2 })).status).toBe(200);

    const listed = (await cli('--json', 'auth', 'keys', 'list')).json<any[]>().find((k) => k.clientId === created.clientId);
    expect(listed.revokedOn).toEqual(expect.any(Number));
  });

  it('revoking an unknown or already revoked client fails with CLIENT_NOT_FOUND', async () => {
    for (const id of [created.clientId, 'wmc_0000000000000000']) {
      const r = await cli('--json', 'auth', 'keys', 'revoke', id);
      expect(r.code).toBe(2);
      expect(r.json()).toMatchObject({ error: { code: 'CLIENT_NOT_FOUND' } });
    }
  });
});

describe('what a refused key was', () => {
  const token = (headers: Record<string, string>, path = '/token') => call(s.app, path === '/token' ? 'POST' : 'GET', path, { headers });

  it('a client id or a malformed key where the key belongs: 401 saying which, with its own hint, on every token route', async () => {
    const cred = (await cli('--json', 'auth', 'keys', 'create', '--label', 'mix-up')).json();
    const asKey: Record<string, string>[] = [{ 'x-api-key': cred.clientId }, { 'x-api-client-id': cred.clientId, 'x-api-key': cred.clientId }];
    for (const path of ['/token', '/1.0/authenticate/accessToken']) {
      for (const headers of asKey.slice(path === '/token' ? 0 : 1)) {
        const r = await token(headers, path);
        expect([r.status, r.json.code]).toEqual([401, 'AUTH_INVALID']);
        expect(r.json.message).toBe('x-api-key carries a client id (wmc_...), not an API key');
        expect(r.json.hint).toContain('Send the API key (wmk_...) in x-api-key');
      }
    }
    for (const key of ['not-a-wmark-key', `"${cred.apiKey}"`, cred.apiKey.slice(0, -1)]) {
      const r = await token({ 'x-api-key': key });
      expect([r.status, r.json.code], key).toEqual([401, 'AUTH_INVALID']);
      expect(r.json.message, key).toMatch(/^x-api-key is not a wmark API key: keys start with wmk_/);
      expect(r.json.hint, key).toContain('Send the key whole');
    }
    // A well-formed key that is not the client's says no more than that.
    const wrong = await token({ 'x-api-client-id': cred.clientId, 'x-api-key': `${cred.apiKey.slice(0, -4)}AAAA` }, '/1.0/authenticate/accessToken');
    expect([wrong.status, wrong.json.message]).toEqual([401, 'invalid client id or API key']);
  });
});
