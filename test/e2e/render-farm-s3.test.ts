// `wmark serve --queue … --media s3://…` with real processes: a private redis-server, an S3-protocol server (s3rver)
// on loopback, serve and two `wmark worker`s that share nothing but the bucket (no folder). Serve publishes the working
// media there, workers render into it, and serve streams what players fetch from it: segments that match an embedded
// render frame for frame, byte ranges, the mp4, opaque forensic segments; deleting removes the objects.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWmark } from '../../harness/cli-helpers.js';
import { frameHashes, killSpawned, type SpawnedWorker, spawnWorker } from '../../harness/cluster.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { bearer, call, freePort, ingestOverHttp, keyHeaders, parseM3u8, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { decodesCleanly } from '../helpers/media.js';

const BUCKET = 'wmark-farm';
const MEDIA = `s3://${BUCKET}/farm`;

let redis: TestRedis;
let s3: TestS3;
let store: MediaStore;
let source: string;
let work: string;
const serves: SpawnedServe[] = [];
const workers: SpawnedWorker[] = [];

interface Served {
  proc: SpawnedServe;
  base: string;
  headers: Record<string, string>;
  dataDir: string;
}

let farm: Served;

beforeAll(async () => {
  [redis, s3, source] = await Promise.all([startRedis(), startS3({ buckets: [BUCKET] }), natural(20)]);
  work = tempDir('farm-s3');
  // The test's own view of the bucket, to check what is (and is not) in it.
  store = openMediaStore(MEDIA, { endpoint: s3.endpoint, credentials: s3.credentials });
  farm = await serve('farm', ['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint]);
  for (const name of ['w1', 'w2']) {
    const home = path.join(work, `${name}-home`);
    workers.push(
      await spawnWorker(['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint, '--threads', '1', '--lock-timeout', '2'], {
        ...s3.env,
        WMARK_HOME: home,
        WMARK_CONFIG_DIR: path.join(home, 'config'),
      }),
    );
  }
});

afterAll(async () => {
  await killSpawned(workers, serves);
  store?.close();
  await s3?.stop();
  await redis?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** `wmark serve` on a fresh data folder, one encoder thread (so an embedded render matches a worker's --threads 1), full renders. */
async function serve(label: string, extra: string[]): Promise<Served> {
  const dataDir = path.join(work, label);
  mkdirSync(dataDir, { recursive: true });
  const proc = spawnServe(dataDir, ['--port', String(await freePort()), '--workers', '1', '--render', 'full', ...extra], s3.env);
  serves.push(proc);
  const base = await proc.url;
  const clientId = /client id:\s+(wmc_\S+)/.exec(proc.stderr())![1]!;
  const apiKey = /API key:\s+(wmk_\S+)/.exec(proc.stderr())![1]!;
  const token = (await call(base, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders({ clientId, apiKey }) })).json.token as string;
  return { proc, base, headers: bearer(token), dataDir };
}

/** Asks for a watermark and polls it like a client until READY with every container; its resource. */
async function watermarkReady(s: Served, body: Record<string, unknown>): Promise<{ id: string; m3u8: string; mp4?: string }> {
  const posted = await call(s.base, 'POST', '/1.0/watermark', { headers: s.headers, body });
  expect(posted.status, posted.text).toBe(201);
  const wantsMp4 = !Array.isArray(body.containers) || body.containers.includes('mp4');
  return waitFor(
    async () => {
      const r = await call(s.base, 'GET', posted.json.href as string);
      expect(r.json.status, r.text).not.toBe('FAILED');
      return r.json.status === 'READY' && r.json.containers.m3u8 && (!wantsMp4 || r.json.containers.mp4)
        ? { id: posted.json.id as string, m3u8: r.json.containers.m3u8 as string, mp4: r.json.containers.mp4 as string | undefined }
        : undefined;
    },
    'the watermark to be READY',
    240_000,
    250,
  );
}

/**
 * The whole playlist through its signed URL (1.0's READY means playable, so it is polled until it ends), and each
 * segment it lists fetched through serve, saved under `dir`.
 */
async function fetchPlaylist(m3u8: string, dir: string): Promise<{ text: string; files: string[]; urls: string[] }> {
  const text = await waitFor(
    async () => {
      const playlist = await fetch(m3u8);
      expect(playlist.status).toBe(200);
      const body = await playlist.text();
      return body.includes('#EXT-X-ENDLIST') ? body : undefined;
    },
    'the whole playlist',
    400_000,
    500,
  );
  mkdirSync(dir, { recursive: true });
  const urls = parseM3u8(text).segments.map((s) => new URL(s.uri, m3u8).toString());
  const files: string[] = [];
  for (const [i, url] of urls.entries()) {
    const res = await fetch(url);
    expect(res.status, url).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp2t');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    const file = path.join(dir, `seg_${String(i).padStart(5, '0')}.ts`);
    writeFileSync(file, bytes);
    files.push(file);
  }
  return { text, files, urls };
}

async function objectBytes(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRange(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const localSegments = (dir: string) => {
  try {
    return readdirSync(dir).filter((f) => /^seg_\d{5}\.ts$/.test(f));
  } catch {
    return [];
  }
};

describe('wmark serve --queue --media s3://… with workers that share only the bucket', () => {
  let videoId: string;
  let segments: number;
  let watermark: { id: string; m3u8: string; mp4?: string };
  let fetched: { text: string; files: string[]; urls: string[] };

  it('renders on the workers into the bucket; the segments fetched through serve decode and match an embedded render frame for frame', async () => {
    expect(farm.proc.stderr()).toContain(`media: ${MEDIA}/`);
    expect(farm.proc.stderr()).toContain(`wmark worker --queue ${redis.url} --media ${MEDIA}/ --s3-endpoint ${s3.endpoint}`);
    const { video } = await ingestOverHttp(farm.base, farm.headers, source, 'farm-s3-clip', '1.0');
    videoId = video.id as string;
    segments = video.segments as number;
    // The ingest published the working segments: the workers read them from the bucket.
    expect(await store.list(`videos/${videoId}/seg_`)).toHaveLength(segments);

    watermark = await watermarkReady(farm, { key: 'farm-s3-clip', settings: [{ content: 'rendered into the bucket' }] });
    const prefix = `watermarks/${videoId}/${watermark.id}/`;
    const keys = await store.list(prefix);
    expect(keys.filter((k) => /\/seg_\d{5}\.ts$/.test(k))).toHaveLength(segments);
    expect(keys).toContain(`${prefix}video.m3u8`);
    expect(keys).toContain(`${prefix}video.mp4`);
    // Rendered segments live in the bucket only: nothing came back to serve's disk.
    expect(localSegments(path.join(farm.dataDir, 'media', 'watermarks', videoId, watermark.id))).toEqual([]);

    fetched = await fetchPlaylist(watermark.m3u8, path.join(work, 'fetched-farm'));
    expect(fetched.files).toHaveLength(segments);
    expect(fetched.text).toContain('#EXT-X-ENDLIST');
    // What serve streamed is the object, byte for byte.
    for (const [i, file] of fetched.files.entries())
      expect((await objectBytes(`${prefix}${segmentName(i)}`)).equals(readFileSync(file)), segmentName(i)).toBe(true);

    // The same request on a serve without --queue or --media, rendering in its own process.
    const embedded = await serve('embedded', []);
    await ingestOverHttp(embedded.base, embedded.headers, source, 'farm-s3-clip', '1.0');
    const reference = await watermarkReady(embedded, { key: 'farm-s3-clip', settings: [{ content: 'rendered into the bucket' }] });
    const expected = await fetchPlaylist(reference.m3u8, path.join(work, 'fetched-embedded'));
    expect(parseM3u8(fetched.text).segments.map((x) => x.duration)).toEqual(parseM3u8(expected.text).segments.map((x) => x.duration));
    for (const [i, file] of fetched.files.entries()) {
      await decodesCleanly(file);
      expect(await frameHashes(file), segmentName(i)).toEqual(await frameHashes(expected.files[i]!));
    }
  }, 400_000);

  it('answers Range (206, 416), HEAD and If-None-Match for a segment in the bucket as for a file', async () => {
    const url = fetched.urls[1]!;
    const whole = readFileSync(fetched.files[1]!);
    const full = await fetch(url);
    const etag = full.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(Date.parse(full.headers.get('last-modified')!)).toBeGreaterThan(Date.now() - 3_600_000);
    await full.arrayBuffer();

    const part = await fetch(url, { headers: { range: 'bytes=100-1099' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-1099/${whole.length}`);
    expect(part.headers.get('content-length')).toBe('1000');
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(100, 1100))).toBe(true);

    const tail = await fetch(url, { headers: { range: 'bytes=-188' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 188))).toBe(true);

    const beyond = await fetch(url, { headers: { range: `bytes=${whole.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${whole.length}`);
    await beyond.arrayBuffer();

    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(whole.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    const cached = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);

    // The signature is still checked by serve itself: a forged one streams nothing from the bucket.
    const forged = await fetch(url.replace(/signature=[^&]+/, 'signature=AAAA'));
    expect(forged.status).toBe(403);
  });

  it('joins the mp4 from the segments in the bucket: it plays the same frames as the segments, in order', async () => {
    expect(watermark.mp4).toBeDefined();
    const res = await fetch(watermark.mp4!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const file = path.join(work, 'fetched-farm', 'video.mp4');
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    await decodesCleanly(file);
    const perSegment = await Promise.all(fetched.files.map((f) => frameHashes(f)));
    expect(await frameHashes(file)).toEqual(perSegment.flat());
  });

  it("wmark watermark rm (another process on the data folder) removes the watermark's objects from the bucket", async () => {
    const prefix = `watermarks/${videoId}/${watermark.id}/`;
    expect((await store.list(prefix)).length).toBeGreaterThan(segments);
    const rm = startWmark(['--data-dir', farm.dataDir, '--json', 'watermark', 'rm', watermark.id], {
      env: { ...s3.env, WMARK_CONFIG_DIR: path.join(work, 'cli-config') },
    });
    const done = await rm.done;
    expect(done.code, rm.stderr()).toBe(0);
    expect(JSON.parse(rm.stdout())).toEqual({ deleted: [watermark.id] });
    expect(await store.list(prefix)).toEqual([]);
    // The video's working media stays for its other watermarks; the link is gone.
    expect(await store.list(`videos/${videoId}/seg_`)).toHaveLength(segments);
    expect((await fetch(fetched.urls[0]!)).status).toBe(404);
  });

  it("a forensic viewer's playlist names its segments as any other: the variant each is shows nowhere, and two viewers differ in the bytes only", async () => {
    const created = await call(farm.base, 'POST', '/1.0/videos', {
      headers: farm.headers,
      body: { sourceUrl: await natural(300), key: 'farm-s3-forensic', enableForensic: true },
    });
    expect(created.status, created.text).toBe(201);
    const forensicId = created.json.id as string;
    await waitFor(
      async () => {
        const r = await call(farm.base, 'GET', `/1.0/videos/${forensicId}`, { headers: farm.headers });
        expect(r.json.status, r.text).not.toMatch(/^FAILED/);
        return r.json.status === 'INGESTED' ? true : undefined;
      },
      'the forensic video to be INGESTED',
      300_000,
      500,
    );
    const variants = await store.list(`videos/${forensicId}/forensic/`);
    expect(variants.some((k) => /\/(a|b|aa|ab|ba|bb)_\d{5}\.ts$/.test(k))).toBe(true);
    expect(variants).toContain(`videos/${forensicId}/forensic/sidecar.bin.gz`);

    const viewers = await Promise.all(
      ['AB', 'yz'].map((payload) =>
        watermarkReady(farm, { key: 'farm-s3-forensic', settings: [{ type: 'FORENSIC', content: payload }], containers: ['m3u8'] }),
      ),
    );
    const [one, two] = await Promise.all(viewers.map((v, i) => fetchPlaylist(v.m3u8, path.join(work, `forensic-${i}`))));
    for (const p of [one!, two!]) {
      expect(p.text).not.toMatch(/forensic|_shared|(^|\/)(a|b|aa|ab|ba|bb)_\d{5}/m);
      for (const url of p.urls) expect(new URL(url).pathname).toMatch(/\/seg_\d{5}\.ts$/);
    }
    // The same file names, and the same names as a TEXT viewer's; the bytes say which variant.
    expect(one!.urls.map((u) => new URL(u).pathname.split('/').pop())).toEqual(two!.urls.map((u) => new URL(u).pathname.split('/').pop()));
    const differ = one!.files.filter((f, i) => !readFileSync(f).equals(readFileSync(two!.files[i]!))).length;
    expect(differ).toBeGreaterThan(0);
    // Each viewer segment is one of that segment's prepared variants, byte for byte.
    // Read one at a time: hundreds of GETs at once on a loaded machine can outlast the store's call deadline, and the
    // store then (rightly) reports itself down for the rest of the test.
    const variantBytes = new Map<string, Buffer>();
    for (const k of variants.filter((v) => v.endsWith('.ts'))) variantBytes.set(k, await objectBytes(k));
    for (const [i, file] of one!.files.entries()) {
      const bytes = readFileSync(file);
      const match = [...variantBytes].find(([k, b]) => k.endsWith(`_${String(i).padStart(5, '0')}.ts`) && b.equals(bytes));
      expect(match, segmentName(i)).toBeDefined();
    }
    await decodesCleanly(one!.files[0]!);

    // Visible text over the variants: the workers render each (text, variant, segment) once into the bucket, and the
    // viewer's segments are copies of those under its own names.
    const texted = await watermarkReady(farm, {
      key: 'farm-s3-forensic',
      settings: [{ content: 'seen by viewer AB' }, { type: 'FORENSIC', content: 'AB' }],
      containers: ['m3u8'],
    });
    const seen = await fetchPlaylist(texted.m3u8, path.join(work, 'forensic-texted'));
    expect(seen.files).toHaveLength(one!.files.length);
    expect(seen.text).not.toMatch(/forensic|_shared/);
    const shared = await store.list(`watermarks/${forensicId}/_shared/`);
    expect(shared).toHaveLength(seen.files.length);
    for (const [i, file] of seen.files.entries()) {
      const ending = `_${String(i).padStart(5, '0')}.ts`;
      const source = shared.find((k) => k.endsWith(ending))!;
      expect(readFileSync(file).equals(await objectBytes(source)), segmentName(i)).toBe(true);
      // The same variant choice as the forensic-only viewer with the same payload.
      expect(path.basename(source)).toBe(path.basename([...variantBytes].find(([, b]) => b.equals(readFileSync(one!.files[i]!)))![0]));
    }
    await decodesCleanly(seen.files[seen.files.length - 1]!);
  }, 900_000);
});

describe('wmark serve --media: what it refuses, at start', () => {
  /** `wmark --json serve` on a fresh data folder; it must exit before it listens. */
  async function refused(args: string[]): Promise<{ code: number | null; error: { code: string; message: string; hint?: string } }> {
    const dataDir = path.join(work, `refused-${Math.random().toString(36).slice(2, 8)}`);
    const proc = startWmark(['--data-dir', dataDir, '--json', 'serve', '--port', '0', ...args], {
      env: { ...s3.env, WMARK_CONFIG_DIR: path.join(dataDir, 'config') },
    });
    const done = await proc.done;
    const line = proc
      .stdout()
      .split('\n')
      .find((l) => l.startsWith('{"error"'));
    expect(line, `${proc.stdout()}\n${proc.stderr()}`).toBeDefined();
    expect(proc.stderr()).not.toMatch(/\n\s+at /);
    return { code: done.code, error: JSON.parse(line!).error };
  }

  it('--media without --queue: nothing would render into the store, so it is a usage error naming both flags', async () => {
    const r = await refused(['--media', MEDIA, '--s3-endpoint', s3.endpoint]);
    expect(r.code).toBe(2);
    expect(r.error.code).toBe('BAD_FLAG');
    expect(r.error.message).toContain('--media needs --queue');
    expect(r.error.hint).toContain('--queue redis://HOST:PORT');
  });

  it('a --media that is no store URL is BAD_MEDIA_URL; a bucket that does not exist is MEDIA_STORE_FAILED (exit 5) with its reason', async () => {
    const bad = await refused(['--queue', redis.url, '--media', 'relative/dir']);
    expect(bad.code).toBe(2);
    expect(bad.error.code).toBe('BAD_MEDIA_URL');
    const missing = await refused(['--queue', redis.url, '--media', 's3://no-such-bucket/farm', '--s3-endpoint', s3.endpoint]);
    expect(missing.code).toBe(5);
    expect(missing.error).toMatchObject({ code: 'MEDIA_STORE_FAILED', message: expect.stringContaining('the bucket does not exist') });
    const endpoint = await refused(['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', 'minio:9000']);
    expect(endpoint.code).toBe(2);
    expect(endpoint.error.code).toBe('BAD_FLAG');
  });
});

const segmentName = (i: number) => `seg_${String(i).padStart(5, '0')}.ts`;
