// A real `wmark serve` whose stderr is not a terminal logs one JSON object per line: each request with its id (the
// caller's X-Request-Id or one it made, returned as a header), method, route pattern, status and time; its other
// messages too. No line carries a signature, a query string or an API key; the first key is shown once, as it always
// was, as plain text and never as a log record.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/fixtures.js';
import { call, freePort, keyHeaders, type SpawnedServe, spawnServe } from '../../harness/serve-helpers.js';

describe('wmark serve logs away from a terminal', () => {
  let serve: SpawnedServe | undefined;
  const dataDir = tempDir('serve-logs');
  afterAll(async () => {
    serve?.kill('SIGKILL');
    await serve?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('are JSON lines with the request id, route pattern, status and time, and never a key or a signature', async () => {
    serve = spawnServe(dataDir, ['--port', String(await freePort())]);
    const base = await serve.url;
    const cred = { clientId: /client id:\s+(wmc_\S+)/.exec(serve.stderr())![1]!, apiKey: /API key:\s+(wmk_\S+)/.exec(serve.stderr())![1]! };

    const listed = await call(base, 'GET', '/2.0/videos', { headers: { ...keyHeaders(cred), 'x-request-id': 'ops-test-1' } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-request-id')).toBe('ops-test-1');
    const forged = await call(base, 'GET', '/2.0/watermark/v1/w1/video.m3u8?expiration=99999999999999&signature=forged-signature-abc');
    expect([403, 404]).toContain(forged.status);
    const made = forged.headers.get('x-request-id')!;
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await call(base, 'GET', '/2.0/videos', { headers: { 'x-api-client-id': cred.clientId, 'x-api-key': 'wmk_not-the-key' } });
    expect(refused.status).toBe(401);
    expect((await call(base, 'GET', '/metrics')).status).toBe(200);

    serve.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const stderr = serve.stderr();
    const lines = stderr.trimEnd().split('\n');
    const records = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    // The one block that is not a record: the first key, shown once.
    expect(lines.filter((l) => !l.startsWith('{'))).toEqual([
      'No API credentials existed, so one pair was created. It is shown only this once:',
      `  client id: ${cred.clientId}`,
      `  API key:   ${cred.apiKey}`,
      'Manage credentials with `wmark auth keys list|create|revoke`.',
    ]);
    for (const r of records) {
      expect(Object.keys(r).slice(0, 3)).toEqual(['time', 'level', 'msg']);
      expect(new Date(r.time as string).toISOString()).toBe(r.time);
    }
    const request = (reqId: string) => records.find((r) => r.reqId === reqId);
    expect(request('ops-test-1')).toEqual({
      time: expect.any(String),
      level: 'info',
      msg: expect.stringMatching(/^GET \/2\.0\/videos 200 \d+ ms \[req ops-test-1\]$/),
      reqId: 'ops-test-1',
      method: 'GET',
      route: '/2.0/videos',
      status: 200,
      ms: expect.any(Number),
    });
    expect(request(made)).toMatchObject({ method: 'GET', route: '/2.0/watermark/:videoId/:watermarkId/:file', status: forged.status });
    expect(records.filter((r) => r.route === '/2.0/videos' && r.status === 401)).toHaveLength(1);
    expect(records.filter((r) => r.route === '/metrics')).toHaveLength(1);
    expect(records.some((r) => typeof r.msg === 'string' && r.msg.startsWith('shutting down'))).toBe(true);
    const logged = records.map((r) => JSON.stringify(r)).join('\n');
    for (const secret of ['forged-signature-abc', 'signature=', 'expiration=', cred.apiKey, 'wmk_not-the-key', 'v1/w1']) expect(logged).not.toContain(secret);
  });
});
