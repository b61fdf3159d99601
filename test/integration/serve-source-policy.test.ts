// The source policy for API clients (README.md, "Security model") over real HTTP: local files only under --source-root,
// no http(s) sources on loopback/private addresses unless allowed, size and time caps on downloads; the CLI keeps full
// access.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { call, freePort, ingestOverHttp, keyHeaders, serveEngine, spawnServe, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import { SOURCE_DOWNLOAD_LIMITS, serverSourcePolicy } from '../../src/engine/ingest/source-policy.js';
import { expectError } from '../helpers/serve-in-tests.js';

let clipPath: string;
let clip: Buffer;
let origin: http.Server;
let originUrl: string;
let hits: string[] = [];

beforeAll(async () => {
  clipPath = await flat('556677', 3);
  clip = readFileSync(clipPath);
  origin = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/clip.mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip);
    else if (req.url === '/chunked.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(clip.subarray(0, 4096));
      res.end(clip.subarray(4096));
    } else if (req.url === '/slow.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      const t = setInterval(() => res.write(clip.subarray(0, 1)), 200);
      res.on('close', () => clearInterval(t));
    } else if (req.url === '/list.m3u8') {
      res
        .writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' })
        .end(`#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXTINF:3,\nhttp://127.0.0.1:${(origin.address() as AddressInfo).port}/inner.ts\n#EXT-X-ENDLIST\n`);
    } else if (req.url === '/moved') res.writeHead(302, { location: '/clip.mp4' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(async () => {
  origin.closeAllConnections();
  await new Promise((r) => origin.close(r));
});

describe('a server with --source-root and no private sources', () => {
  let engine: TestEngine;
  let s: TestServer;
  let root: string;
  let outside: string;
  beforeAll(async () => {
    const dir = tempDir('policy');
    root = path.join(dir, 'allowed');
    outside = path.join(dir, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    copyFileSync(clipPath, path.join(root, 'in.mp4'));
    copyFileSync(clipPath, path.join(outside, 'out.mp4'));
    symlinkSync(path.join(outside, 'out.mp4'), path.join(root, 'link.mp4'));
    symlinkSync(outside, path.join(root, 'linked-dir'));
    engine = await testEngine();
    s = await serveEngine(engine, { sourcePolicy: serverSourcePolicy('0.0.0.0', { sourceRoots: [root] }) });
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });

  it('ingests a file inside a source root', async () => {
    const { video } = await ingestOverHttp(s.url, s.v2, path.join(root, 'in.mp4'), 'inside');
    expect(video.status).toBe('INGESTED');
  });

  it('refuses files outside it (plain, climbing, through a symbolic link) with 403 SOURCE_PATH_FORBIDDEN and records nothing', async () => {
    const tries = [
      path.join(outside, 'out.mp4'),
      `${root}/../outside/out.mp4`,
      path.join(root, 'link.mp4'),
      path.join(root, 'linked-dir', 'out.mp4'),
      '/etc/passwd',
      root,
      'relative.mp4',
    ];
    for (const [i, sourceUrl] of tries.entries()) {
      const r = await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl, key: `out-${i}` } });
      expectError(r, 403, 'SOURCE_PATH_FORBIDDEN');
      // The answer names the client's own path, never the server's folders.
      if (!sourceUrl.startsWith(root)) expect(r.text).not.toContain(root);
    }
    const list = await call(s.url, 'GET', '/2.0/videos', { headers: s.v2 });
    expect(list.json.map((v: { key: string }) => v.key)).toEqual(['inside']);
  });

  it('refuses http(s) sources on loopback, private and link-local addresses, by literal or by name, on every redirect, without connecting', async () => {
    const port = new URL(originUrl).port;
    hits = [];
    const urls = [
      `${originUrl}/clip.mp4`,
      `http://localhost:${port}/clip.mp4`,
      `http://[::1]:${port}/clip.mp4`,
      `http://0x7f000001:${port}/clip.mp4`,
      `http://127.1:${port}/clip.mp4`,
      `http://[::ffff:127.0.0.1]:${port}/clip.mp4`,
      // IPv6 that carries loopback IPv4: translated, local-use NAT64, 6to4, Teredo (client inverted), compatible.
      `http://[::ffff:0:7f00:1]:${port}/clip.mp4`,
      `http://[64:ff9b:1::7f00:1]:${port}/clip.mp4`,
      `http://[64:ff9b::7f00:1]:${port}/clip.mp4`,
      `http://[2002:7f00:1::]:${port}/clip.mp4`,
      `http://[2001:0:808:404::80ff:fffe]:${port}/clip.mp4`,
      `http://[::7f00:1]:${port}/clip.mp4`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/x.mp4',
      'http://192.168.1.1/x.mp4',
      `${originUrl}/moved`,
    ];
    for (const [i, sourceUrl] of urls.entries()) {
      const r = await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl, key: `net-${i}` } });
      expectError(r, 403, 'SOURCE_ADDRESS_FORBIDDEN');
    }
    expect(hits).toEqual([]);
  });
});

describe('a server that allows private sources, with small download caps', () => {
  let engine: TestEngine;
  let s: TestServer;
  beforeAll(async () => {
    engine = await testEngine();
    s = await serveEngine(engine, {
      sourcePolicy: serverSourcePolicy('0.0.0.0', { allowPrivateSources: true, limits: { maxDownloadBytes: clip.length - 1, downloadTimeoutMs: 1_000 } }),
    });
  });
  afterAll(async () => {
    await s.close();
    await engine.dispose();
  });

  it('no local files at all when bound beyond loopback without --source-root', async () => {
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: clipPath } }), 403, 'SOURCE_PATH_FORBIDDEN');
  });

  it('a playlist or manifest is refused before ffmpeg could follow what it points at (422 NOT_A_VIDEO)', async () => {
    hits = [];
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${originUrl}/list.m3u8` } }), 422, 'NOT_A_VIDEO');
    expect(hits).toEqual(['/list.m3u8']);
  });

  it('a download over the size cap is 422 SOURCE_TOO_LARGE, by Content-Length or by counting', async () => {
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${originUrl}/clip.mp4` } }), 422, 'SOURCE_TOO_LARGE');
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${originUrl}/chunked.mp4` } }), 422, 'SOURCE_TOO_LARGE');
  });

  it('a download over the time cap is 422 SOURCE_TIMEOUT', async () => {
    const started = Date.now();
    expectError(await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, body: { sourceUrl: `${originUrl}/slow.mp4` } }), 422, 'SOURCE_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe('defaults and the CLI', () => {
  it('loopback servers allow any local file, others none; private sources are off; caps are set', () => {
    expect(serverSourcePolicy('127.0.0.1')).toEqual({ sourceRoots: undefined, allowPrivateSources: false, ...SOURCE_DOWNLOAD_LIMITS });
    expect(serverSourcePolicy('localhost').sourceRoots).toBeUndefined();
    expect(serverSourcePolicy('0.0.0.0').sourceRoots).toEqual([]);
    expect(serverSourcePolicy('192.168.1.5', { sourceRoots: ['/srv/videos'] }).sourceRoots).toEqual(['/srv/videos']);
  });

  it('the CLI still ingests from a loopback URL and any local file', async () => {
    const dataDir = tempDir('policy-cli');
    const byUrl = await runCli(['--data-dir', dataDir, '--json', 'ingest', `${originUrl}/moved`, '--key', 'cli-url']);
    expect(byUrl.code, byUrl.stderr).toBe(0);
    const byPath = await runCli(['--data-dir', dataDir, '--json', 'ingest', clipPath, '--key', 'cli-path']);
    expect(byPath.code, byPath.stderr).toBe(0);
  });
});

describe('a resumed ingest', () => {
  it('downloads its source again under the policy of the server that resumes it, not the one that accepted it', async () => {
    // Accepted by a server that allowed private sources; that server stops before the ingest ran and its download is lost.
    const engine = await testEngine();
    try {
      const lenient = await serveEngine(engine, { jobConcurrency: 0, sourcePolicy: serverSourcePolicy('127.0.0.1', { allowPrivateSources: true }) });
      const posted = await call(lenient.url, 'POST', '/2.0/videos', { headers: lenient.v2, body: { sourceUrl: `${originUrl}/clip.mp4`, key: 'resumed' } });
      expect(posted.status, posted.text).toBeLessThan(300);
      await lenient.close();
      const video = (await engine.store.getVideoByKey('resumed'))!;
      expect(video.status).toBe('PENDING');
      for (const f of readdirSync(engine.paths.tmp)) if (f.startsWith('source-')) rmSync(path.join(engine.paths.tmp, f));
      hits = [];
      // The next server keeps the default loopback policy (no private sources): the resumed job must not fetch it.
      const strict = await serveEngine(engine);
      try {
        const failed = await waitFor(
          async () => {
            const v = (await engine.store.getVideo(video.id))!;
            return v.status === 'PENDING' ? undefined : v;
          },
          'the resumed ingest to end',
          30_000,
        );
        expect(failed.status).toBe('FAILED_ENCODING');
        expect(failed.error).toMatch(/private|loopback|address/i);
        expect(hits).toEqual([]);
      } finally {
        await strict.close();
      }
    } finally {
      await engine.dispose();
    }
  });
});

describe('`wmark serve` flags', () => {
  it('--source-root, --allow-private-sources and --cors-origin reach the running server', async () => {
    const dataDir = tempDir('policy-flags');
    const root = path.join(dataDir, 'videos');
    mkdirSync(root);
    copyFileSync(clipPath, path.join(root, 'ok.mp4'));
    const port = await freePort();
    const serve = spawnServe(dataDir, ['--port', String(port), '--source-root', root, '--allow-private-sources', '--cors-origin', 'https://app.example']);
    try {
      const base = await serve.url;
      const cred = { clientId: /client id:\s+(wmc_\S+)/.exec(serve.stderr())![1]!, apiKey: /API key:\s+(wmk_\S+)/.exec(serve.stderr())![1]! };
      expectError(await call(base, 'POST', '/2.0/videos', { headers: keyHeaders(cred), body: { sourceUrl: clipPath } }), 403, 'SOURCE_PATH_FORBIDDEN');
      const { video } = await ingestOverHttp(base, keyHeaders(cred), path.join(root, 'ok.mp4'), 'flag-root');
      expect(video.status).toBe('INGESTED');
      const { video: fetched } = await ingestOverHttp(base, keyHeaders(cred), `${originUrl}/clip.mp4`, 'flag-private');
      expect(fetched.status).toBe('INGESTED');
      const pre = await call(base, 'OPTIONS', '/2.0/videos', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const other = await call(base, 'OPTIONS', '/2.0/videos', { headers: { origin: 'https://other.example', 'access-control-request-method': 'POST' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      serve.kill('SIGTERM');
      await serve.exited;
    }
  });
});
