// Signed media over real HTTP: playlists whose segment URIs carry signatures, segments and mp4 with byte ranges and
// HEAD, CORS and preflight, every way a signature can be wrong, path traversal in raw request targets, and the player page.
import { readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { call, forge, ingestOverHttp, parseM3u8, rawRequest, serveEngine, type TestServer, waitFor, withParam } from '../../harness/serve-helpers.js';
import { segmentFileName, segmentFrameCounts } from '../../src/core/plan/segment-timing.js';
import { signUrl } from '../../src/core/sign-url.js';
import { mediaScope, signPlayerUrl } from '../../src/core/watermark-urls.js';
import { serverService } from '../../src/engine/app/server-service.js';
import { startServer } from '../../src/server/app/node-server.js';
import { expectError, expectNoLeak } from '../helpers/serve-in-tests.js';

let engine: TestEngine;
let s: TestServer;
let video: any;
/** 2.0 watermark with m3u8 + mp4, fully rendered. */
let a: any;
/** 1.0 watermark with m3u8 only, fully rendered. */
let b: any;
let segmentUrls: string[];

const dirOf = (w: { id: string }) => watermarkDir(engine, video.id, w.id);
const sigOf = (url: string) => new URL(url).search;

beforeAll(async () => {
  engine = await testEngine();
  // Every segment on disk (this file compares served bytes with files): on-demand rendering is not what it tests.
  s = await serveEngine(engine, { render: 'full' });
  ({ video } = await ingestOverHttp(s.url, s.v2, await flat('336699', 10), 'media-clip'));
  const ra = await call(s.url, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'media-clip', settings: [{ content: 'media A' }] } });
  const rb = await call(s.url, 'POST', '/1.0/watermark', {
    headers: s.v1,
    body: { key: 'media-clip', settings: [{ content: 'media B' }], containers: ['m3u8'] },
  });
  if (ra.status !== 201 || rb.status !== 201) throw new Error(`setup: ${ra.text} ${rb.text}`);
  await waitFor(
    async () => ((await Promise.all([ra, rb].map((r) => engine.store.getWatermark(r.json.id)))).every((w) => w!.status === 'READY') ? true : undefined),
    'both watermarks to finish',
  );
  a = (await call(s.url, 'GET', ra.json.href)).json;
  b = (await call(s.url, 'GET', rb.json.href)).json;
  if (!a.containers.mp4 || !b.containers.m3u8) throw new Error(`setup: ${JSON.stringify({ a, b })}`);
});

afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

function expectMediaCors(headers: Headers): void {
  expect(headers.get('access-control-allow-origin')).toBe('*');
  expect(headers.get('access-control-allow-credentials')).toBeNull();
}

describe('playlists', () => {
  it('are served as application/vnd.apple.mpegurl with CORS, and every segment URI carries the expiration and signature', async () => {
    const res = await call(s.url, 'GET', a.containers.m3u8);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
    expectMediaCors(res.headers);
    const manifest = parseM3u8(res.text);
    expect(manifest.endList).toBe(true);
    expect(manifest.targetDuration).toBe(4);
    // 10 s at 30 fps: the lead segments (0.5, 0.5, 1, 2 s), one 4-s GOP, and the last 2 s.
    const planned = segmentFrameCounts({ num: 30, den: 1 }, 10 * 30, true);
    expect(planned).toHaveLength(video.segments);
    expect(manifest.segments.map((x) => x.uri.split('?')[0])).toEqual(planned.map((_, i) => segmentFileName(i)));
    expect(manifest.segments.map((x) => Math.round(x.duration * 30))).toEqual(planned);
    expect(manifest.segments.reduce((t, x) => t + x.duration, 0)).toBeCloseTo(10, 1);
    const own = new URL(a.containers.m3u8).searchParams;
    for (const seg of manifest.segments) {
      const q = new URL(seg.uri, a.containers.m3u8).searchParams;
      expect(q.get('expiration')).toBe(own.get('expiration'));
      expect(q.get('signature')).toBe(own.get('signature'));
    }
    segmentUrls = manifest.segments.map((x) => new URL(x.uri, a.containers.m3u8).href);

    const head = await call(s.url, 'HEAD', a.containers.m3u8);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
  });
});

describe('segments and mp4', () => {
  it('every segment is video/mp2t with Accept-Ranges, immutable caching and exactly the bytes on disk', async () => {
    for (const [i, url] of segmentUrls.entries()) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('video/mp2t');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('cache-control')).toMatch(/immutable/);
      expectMediaCors(res.headers);
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.equals(readFileSync(path.join(dirOf(a), segmentFileName(i))))).toBe(true);
    }
  });

  it('Range requests answer 206 with the right Content-Range and bytes; a suffix range works; out of range is 416', async () => {
    const url = segmentUrls[0]!;
    const file = readFileSync(path.join(dirOf(a), 'seg_00000.ts'));
    const size = file.length;
    const range = async (value: string) => {
      const res = await fetch(url, { headers: { range: value } });
      return { res, body: Buffer.from(await res.arrayBuffer()) };
    };
    const first = await range('bytes=0-99');
    expect(first.res.status).toBe(206);
    expect(first.res.headers.get('content-range')).toBe(`bytes 0-99/${size}`);
    expect(first.res.headers.get('content-length')).toBe('100');
    expect(first.body.equals(file.subarray(0, 100))).toBe(true);

    const open = await range('bytes=188-');
    expect(open.res.status).toBe(206);
    expect(open.res.headers.get('content-range')).toBe(`bytes 188-${size - 1}/${size}`);
    expect(open.body.equals(file.subarray(188))).toBe(true);

    const suffix = await range('bytes=-376');
    expect(suffix.res.status).toBe(206);
    expect(suffix.res.headers.get('content-range')).toBe(`bytes ${size - 376}-${size - 1}/${size}`);
    expect(suffix.body.equals(file.subarray(size - 376))).toBe(true);

    const past = await range(`bytes=${size - 10}-${size + 1000}`);
    expect(past.res.status).toBe(206);
    expect(past.body.equals(file.subarray(size - 10))).toBe(true);

    for (const value of [`bytes=${size}-`, `bytes=${size + 100}-${size + 200}`, 'bytes=-0']) {
      const out = await range(value);
      expect(out.res.status, value).toBe(416);
      expect(out.res.headers.get('content-range')).toBe(`bytes */${size}`);
      expect(out.body.length).toBe(0);
    }
  });

  it('a matching If-None-Match is 304 with no body', async () => {
    const first = await fetch(segmentUrls[2]!);
    const etag = first.headers.get('etag');
    await first.arrayBuffer();
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    const again = await fetch(segmentUrls[2]!, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('HEAD carries the headers and no body', async () => {
    const size = readFileSync(path.join(dirOf(a), 'seg_00001.ts')).length;
    const res = await call(s.url, 'HEAD', segmentUrls[1]!);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('content-length')).toBe(String(size));
    expect(res.headers.get('content-type')).toBe('video/mp2t');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expectMediaCors(res.headers);
  });

  it('OPTIONS preflight is 204 allowing GET and Range from any origin, without credentials', async () => {
    for (const url of [segmentUrls[0]!, a.containers.m3u8, a.href]) {
      const res = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://player.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' },
      });
      expect(res.status).toBe(204);
      expectMediaCors(res.headers);
      expect(res.headers.get('access-control-allow-methods')).toMatch(/\bGET\b/);
      expect(res.headers.get('access-control-allow-headers')).toMatch(/\bRange\b/i);
      expect(await res.text()).toBe('');
    }
  });

  it('a client that hangs up mid-download leaves no file open in the server, and the next GET is whole', async () => {
    // A 16 MB file in the watermark's folder (same folder signature): far more than one socket write, so each
    // download is cut while the server is still streaming.
    const big = path.join(dirOf(a), 'seg_00099.ts');
    const bytes = Buffer.alloc(16 * 1024 * 1024, 7);
    writeFileSync(big, bytes);
    const url = segmentUrls[0]!.replace('seg_00000.ts', 'seg_00099.ts');
    const openOnBig = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === big;
        } catch {
          return false;
        }
      }).length;
    try {
      for (let i = 0; i < 10; i++) {
        await new Promise<void>((resolve, reject) => {
          const req = http.get(url, (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          });
          req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve() : reject(e)));
        });
      }
      await waitFor(() => (openOnBig() === 0 ? true : undefined), 'the server to close the cut downloads', 5_000);
      expect(openOnBig()).toBe(0);
      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    } finally {
      rmSync(big, { force: true });
    }
  });

  it('the 2.0 mp4 is video/mp4 with ranges; an mp4 of a watermark requested without it is 404', async () => {
    const file = readFileSync(path.join(dirOf(a), 'video.mp4'));
    const res = await fetch(a.containers.mp4, { headers: { range: 'bytes=4-7' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('content-range')).toBe(`bytes 4-7/${file.length}`);
    expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toBe('ftyp');
    expect(b.containers).not.toHaveProperty('mp4');
    const mp4OfB = b.containers.m3u8.replace('/video.m3u8?', '/video.mp4?');
    expectError(await call(s.url, 'GET', mp4OfB), 404, 'NOT_FOUND');
  });
});

describe('signatures', () => {
  const segPath = (w: any, version: string, file = 'seg_00000.ts') => `${s.url}${mediaScope(version, video.id, w.id)}${file}`;

  it('a forged signature, a changed expiration, or missing/duplicated parameters are 403 (with CORS, so players can read it)', async () => {
    const url = segmentUrls[0]!;
    const sig = new URL(url).searchParams.get('signature')!;
    const exp = new URL(url).searchParams.get('expiration')!;
    const forged = await call(s.url, 'GET', withParam(url, 'signature', forge(sig)));
    expectError(forged, 403, 'SIGNATURE_INVALID');
    expectMediaCors(forged.headers);
    expectError(await call(s.url, 'GET', withParam(url, 'expiration', String(Number(exp) + 1000))), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', withParam(a.containers.m3u8, 'signature', forge(sig))), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', withParam(a.href, 'signature', forge(new URL(a.href).searchParams.get('signature')!))), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', url.split('?')[0]!), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', withParam(url, 'signature', undefined)), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', withParam(url, 'expiration', undefined)), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', `${url}&signature=${sig}`), 403, 'SIGNATURE_INVALID');
    expectError(await call(s.url, 'GET', withParam(url, 'expiration', `0${exp}`)), 403, 'SIGNATURE_INVALID');
    const head = await call(s.url, 'HEAD', withParam(url, 'signature', forge(sig)));
    expect(head.status).toBe(403);
    expect(head.text).toBe('');
  });

  it('a genuinely signed but expired link is 403 SIGNATURE_EXPIRED', async () => {
    const bare = segPath(a, '2.0');
    const expired = signUrl(engine.secret, bare, { expirationMs: Date.now() - 1000, scope: mediaScope('2.0', video.id, a.id) });
    expectError(await call(s.url, 'GET', expired), 403, 'SIGNATURE_EXPIRED');
    // The same signing with a future expiry works, so only the time made the difference.
    const fresh = signUrl(engine.secret, bare, { expirationMs: Date.now() + 60_000, scope: mediaScope('2.0', video.id, a.id) });
    expect((await fetch(fresh)).status).toBe(200);
  });

  it("a segment URL carrying another watermark's (or another version's, or the status link's) signature is 403", async () => {
    expect((await fetch(`${segPath(b, '1.0')}${sigOf(b.containers.m3u8)}`)).status).toBe(200);
    const cases = [
      `${segPath(a, '2.0')}${sigOf(b.containers.m3u8)}`, // B's signature on A's segment
      `${segPath(b, '1.0')}${sigOf(a.containers.m3u8)}`, // A's signature on B's segment
      `${segPath(b, '2.0')}${sigOf(b.containers.m3u8)}`, // B's 1.0 signature on a 2.0 path
      `${segPath(a, '2.0')}${sigOf(a.href)}`, // the exact-path status signature on a media file
      `${s.url}/2.0/watermark/${video.id}/${b.id}${sigOf(a.href)}`, // A's status signature on B's status link
    ];
    for (const url of cases) expectError(await call(s.url, 'GET', url), 403, 'SIGNATURE_INVALID');
  });

  it('well-signed paths to files that do not exist, or are not media, are 404', async () => {
    const q = sigOf(a.containers.m3u8);
    for (const file of ['seg_00099.ts', 'secret.key', 'segments.csv', 'video.m3u8.bak', '.work', '.draw']) {
      const r = await call(s.url, 'GET', `${segPath(a, '2.0', file)}${q}`);
      expect(r.status, file).toBe(404);
      expectError(r, 404, 'NOT_FOUND');
    }
  });
});

describe('path traversal', () => {
  it('`..`, `%2e%2e`, `%2f`, backslashes, `//` and NUL in raw request targets are 400 or 404, never 200 or 500, and leak nothing', async () => {
    const scope = mediaScope('2.0', video.id, a.id);
    const q = sigOf(a.containers.m3u8);
    const targets = [
      `${scope}../../../../secret.key${q}`,
      `${scope}../../../../../wmark.db${q}`,
      `${scope}%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.key${q}`,
      `${scope}%2E%2E/%2E%2E/%2E%2E/%2E%2E/secret.key${q}`,
      `${scope}..%2f..%2f..%2f..%2fsecret.key${q}`,
      `${scope}%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.key${q}`,
      `${scope}..%2F..%2F..%2F..%2Fsecret.key${q}`,
      `${scope}..\\..\\..\\..\\secret.key${q}`,
      `${scope}..%5c..%5c..%5c..%5csecret.key${q}`,
      `${scope}.%2e/.%2e/.%2e/.%2e/secret.key${q}`,
      `${scope}./seg_00000.ts${q}`,
      `${scope}/seg_00000.ts${q}`,
      `${scope}seg_00000.ts%00${q}`,
      `/2.0/watermark/${video.id}/${a.id}/..${q}`,
      `/2.0/watermark/${video.id}/../../../secret.key${q}`,
      '/player/assets/../../package.json',
      '/player/assets/%2e%2e/%2e%2e/package.json',
      '/player/assets/..%2f..%2fpackage.json',
      '/player/assets/..\\..\\package.json',
      '/player/assets/%5c..%5c..%5cpackage.json',
      '/player/1.0/../../../etc/passwd',
      `/2.0/videos/..%2f..%2fsecret.key`,
      `/2.0/templates/%2e%2e`,
      '/../../../../etc/passwd',
    ];
    const secret = readFileSync(path.join(engine.dataDir, 'secret.key'));
    for (const target of targets) {
      const res = await rawRequest(s.url, target, { headers: s.v2 });
      expect([400, 404], `${target} -> ${res.status} ${res.text}`).toContain(res.status);
      expect(res.text).not.toContain('"name": "wmark"');
      expect(res.text).not.toContain('root:');
      expect(res.body.includes(secret)).toBe(false);
      expectNoLeak(res.text);
      if (res.text) expect(JSON.parse(res.text).code).toMatch(/^(BAD_PATH|NOT_FOUND)$/);
    }
  });
});

describe('player page', () => {
  it("the 1.0 and 2.0 player links are text/html with a CSP, and hls.js's light build and worker resolve to JavaScript", async () => {
    for (const link of [a.containers.href, b.containers.href]) {
      const res = await call(s.url, 'GET', link);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/script-src 'self'/);
      expect(res.text).toContain('<script src="../assets/hls.light.min.js"></script>');
      for (const script of ['hls.light.min.js', 'hls.worker.js']) {
        const hls = await fetch(new URL(`../assets/${script}`, link));
        expect(hls.status, script).toBe(200);
        expect(hls.headers.get('content-type'), script).toBe('text/javascript; charset=utf-8');
        expect((await hls.text()).length, script).toBeGreaterThan(100_000);
      }
      for (const asset of ['player.js', 'player.css']) {
        const ref = new URL(`../assets/${asset}`, link);
        expect(res.text).toContain(`../assets/${asset}`);
        expect((await fetch(ref)).status, asset).toBe(200);
      }
      const head = await call(s.url, 'HEAD', link);
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    }
    // The player's source is the watermark's own playlist, playable as given.
    const source = new URL(a.containers.href).searchParams.get('sourceUrl')!;
    expect(new URL(source).pathname).toBe(new URL(a.containers.m3u8).pathname);
    expect((await fetch(source)).status).toBe(200);
  });

  it('a player link with a bad, missing or expired signature is a 403 HTML page', async () => {
    const link = a.containers.href as string;
    const sig = new URL(link).searchParams.get('signature')!;
    const expired = signPlayerUrl(engine.secret, link, Date.now() - 1000);
    // The signature covers the links the player loads: pointing a valid player link at another playlist breaks it.
    const swapped = withParam(link, 'sourceUrl', `${new URL(link).origin}/2.0/watermark/elsewhere/video.m3u8`);
    for (const [bad, text] of [
      [withParam(link, 'signature', forge(sig)), 'not valid'],
      [swapped, 'not valid'],
      [link.split('?')[0]!, 'not valid'],
      [expired, 'expired'],
    ] as const) {
      const res = await call(s.url, 'GET', bad);
      expect(res.status, bad).toBe(403);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toMatch(/^<!doctype html>/);
      expect(res.text).toContain(text);
      expectNoLeak(res.text);
    }
  });
});

describe('behind a reverse proxy', () => {
  it('links handed out under a --public-url with a path work through a proxy that strips that path', async () => {
    const publicUrl = 'https://cdn.example/wm';
    const proxied = await startServer({ service: serverService(engine, { host: '127.0.0.1' }), host: '127.0.0.1', port: 0, tokenTtlSeconds: 60, publicUrl });
    try {
      // What the proxy does: https://cdn.example/wm/X -> http://127.0.0.1:port/X
      const viaProxy = (url: string) => {
        expect(url.startsWith(`${publicUrl}/`), url).toBe(true);
        return proxied.url + url.slice(publicUrl.length);
      };
      const r = await call(proxied.url, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'media-clip', settings: [{ content: 'media A' }] } });
      expect(r.status).toBe(200);
      expect(r.json.id).toBe(a.id);
      const m3u8 = await call(s.url, 'GET', viaProxy(r.json.containers.m3u8));
      expect(m3u8.status, m3u8.text).toBe(200);
      for (const seg of parseM3u8(m3u8.text).segments) {
        // The player resolves segment URIs against the public playlist URL.
        expect((await fetch(viaProxy(new URL(seg.uri, r.json.containers.m3u8).href))).status).toBe(200);
      }
      expect((await call(s.url, 'GET', viaProxy(r.json.href))).status).toBe(200);
      expect((await call(s.url, 'GET', viaProxy(r.json.containers.mp4))).status).toBe(200);
      const player = await call(s.url, 'GET', viaProxy(r.json.containers.href));
      expect(player.status).toBe(200);
      expect(player.headers.get('content-type')).toBe('text/html; charset=utf-8');
      // A forged link is still refused there.
      expectError(
        await call(
          s.url,
          'GET',
          withParam(viaProxy(r.json.containers.m3u8), 'signature', forge(new URL(r.json.containers.m3u8).searchParams.get('signature')!)),
        ),
        403,
        'SIGNATURE_INVALID',
      );
    } finally {
      await proxied.close();
    }
  });
});

describe('server log', () => {
  it('none of the bad requests above was an unexpected error (no stack in the log)', () => {
    expect(s.logs.filter((l) => /\n\s+at /.test(l))).toEqual([]);
  });
});
