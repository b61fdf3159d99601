// The source policy checks the address of every connection, so a redirect (or a host name) cannot lead a download
// from an allowed address to a refused one. No public address is reachable from a test, so 127.0.0.1 stands in for
// one here (isPublicAddress is wrapped) while 127.0.0.2 and the rest of loopback stay refused.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { call, ingestOverHttp, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { serverSourcePolicy } from '../../src/engine/ingest/source-policy.js';
import { expectError } from '../helpers/serve-in-tests.js';

vi.mock('../../src/core/ip-address.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/ip-address.js')>();
  return { ...real, isPublicAddress: (ip: string) => ip === '127.0.0.1' || real.isPublicAddress(ip) };
});

let engine: TestEngine;
let s: TestServer;
let front: http.Server;
let back: http.Server;
let frontUrl: string;
let backUrl: string;
const backHits: string[] = [];

beforeAll(async () => {
  const clip = readFileSync(await flat('664422', 3));
  back = http.createServer((req, res) => {
    backHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip);
  });
  await new Promise<void>((r) => back.listen(0, '127.0.0.2', r));
  backUrl = `http://127.0.0.2:${(back.address() as AddressInfo).port}`;
  front = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/clip.mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip);
    else if (u.pathname === '/to-private') res.writeHead(302, { location: `${backUrl}/secret.mp4` }).end();
    else if (u.pathname === '/to-ipv6') res.writeHead(307, { location: `http://[::ffff:127.0.0.2]:${(back.address() as AddressInfo).port}/secret.mp4` }).end();
    else if (u.pathname === '/hop') res.writeHead(301, { location: '/to-private' }).end();
    else if (u.pathname === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (u.pathname === '/moved') res.writeHead(302, { location: '/clip.mp4' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  engine = await testEngine();
  s = await serveEngine(engine, { sourcePolicy: serverSourcePolicy('0.0.0.0') });
});
afterAll(async () => {
  await s?.close();
  await engine?.dispose();
  await new Promise((r) => front.close(r));
  await new Promise((r) => back.close(r));
});

describe('redirects under the source policy', () => {
  it('an allowed address is fetched, and a redirect to an allowed address followed', async () => {
    const { video } = await ingestOverHttp(s.url, s.v2, `${frontUrl}/moved`, 'moved');
    expect(video.status).toBe('INGESTED');
  });

  it('a redirect to a private address, in either spelling or after another hop, is 403 and never connects', async () => {
    for (const p of ['/to-private', '/to-ipv6', '/hop']) {
      expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${frontUrl}${p}`, key: p } }), 403, 'SOURCE_ADDRESS_FORBIDDEN');
    }
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${backUrl}/clip.mp4` } }), 403, 'SOURCE_ADDRESS_FORBIDDEN');
    expect(backHits).toEqual([]);
  });

  it('a redirect to another scheme is not followed (422 SOURCE_UNREACHABLE)', async () => {
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${frontUrl}/to-file` } }), 422, 'SOURCE_UNREACHABLE');
  });
});
