// Band rendering on the render farm, with real processes: a private redis-server, an S3-protocol server (s3rver) on
// loopback, `wmark serve --queue --media s3://…` and `wmark worker`s sharing only the bucket. A worker with the patched
// x264 ingests the title and makes its band media in the bucket; a mark that fits the bottom band is rendered by
// that worker as the band alone, spliced into the shared encode (decoded: the shared encode's pixels outside the
// band, the mark inside it, where the settings put it); `watermark view` says `band`, and serve's /metrics counts the
// workers' band renders. A worker without the patched x264 renders the same kind of mark in full and says why once.
// Skipped, saying why, without the patched x264.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWmark } from '../../harness/cli-helpers.js';
import { killSpawned, type SpawnedWorker, spawnWorker } from '../../harness/cluster.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { bearer, call, freePort, ingestOverHttp, keyHeaders, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { bandKeys } from '../../src/engine/band/band-media.js';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { FITS_BOTTOM_BAND, redPixels, SMALL_TITLE_BANDS, stripMd5s } from '../helpers/band-helpers.js';
import { decodeFrame, decodesCleanly } from '../helpers/media.js';

const X264 = locateBandX264({ ...process.env, WMARK_BAND: undefined });
if (!X264) console.warn('farm band render tests skipped: no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)');
const TITLE = X264
  ? 'band renders on farm workers (patched x264)'
  : 'band renders on farm workers: skipped, no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)';

const BUCKET = 'wmark-band';
const MEDIA = `s3://${BUCKET}/farm`;
const [W, H] = [320, 180];
/** The bottom band of a 320x180 title: macroblock rows 9-12, pixel rows 144-180. */
const BAND = { y: 144, h: H - 144 };
const ABOVE = { y: 0, h: 144 };
/** A red mark inside the bottom band; each watermark gives it its own text. */
const FITS = FITS_BOTTOM_BAND;

let redis: TestRedis;
let s3: TestS3;
let store: MediaStore;
let work: string;
let serve: { proc: SpawnedServe; base: string; headers: Record<string, string>; dataDir: string };
const serves: SpawnedServe[] = [];
const workers: SpawnedWorker[] = [];

/** A worker on the bucket; band rendering on unless its x264 is not there. */
async function worker(name: string, x264: string): Promise<SpawnedWorker> {
  const home = path.join(work, `${name}-home`);
  const w = await spawnWorker(['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint, '--threads', '1'], {
    ...s3.env,
    WMARK_BAND: 'on',
    WMARK_X264: x264,
    WMARK_HOME: home,
    WMARK_CONFIG_DIR: path.join(home, 'config'),
  });
  workers.push(w);
  return w;
}

async function stopWorkers(): Promise<void> {
  await killSpawned(workers, []);
}

const md5s = (file: string, crop: { y: number; h: number }) => stripMd5s(file, crop, W);

/** The rows of a frame's strongly red pixels (the mark), and their mean x. */
async function redRows(file: string): Promise<{ count: number; top: number; bottom: number; cx: number }> {
  const red = redPixels(await decodeFrame(file, 0.1, { width: W, height: H }));
  const ys = red.map((p) => p.y);
  return { count: red.length, top: Math.min(...ys), bottom: Math.max(...ys), cx: red.reduce((n, p) => n + p.x, 0) / red.length };
}

async function metric(name: string): Promise<string[]> {
  const r = await call(serve.base, 'GET', '/metrics');
  return r.text.split('\n').filter((line) => line.startsWith(name));
}

/** The lines of `name` once they are `expected` (a task's result is counted just after its segment is stored). */
async function metricSettles(name: string, expected: string[]): Promise<void> {
  let last: string[] = [];
  await waitFor(
    async () => {
      last = await metric(name);
      return JSON.stringify(last) === JSON.stringify(expected) ? true : undefined;
    },
    `${name} to be ${expected.join(', ')}`,
    15_000,
    200,
  ).catch(() => expect(last).toEqual(expected));
}

/** Waits until `worker`'s log has `count` lines matching `pattern` (a global regex), and no more. */
async function logSettles(worker: SpawnedWorker, pattern: RegExp, count: number): Promise<void> {
  const found = () => worker.stderr().match(pattern)?.length ?? 0;
  await waitFor(() => (found() >= count ? true : undefined), `${count} log lines like ${pattern}`, 15_000, 100).catch(() => undefined);
  expect(found(), worker.stderr()).toBe(count);
}

/** A watermark of `text` in the bottom band, every segment rendered (serve --render full: its playlist ends); its id. */
async function watermark(text: string, key = 'band-clip'): Promise<string> {
  const posted = await call(serve.base, 'POST', '/1.0/watermark', {
    headers: serve.headers,
    body: { key, containers: ['m3u8'], settings: [{ ...FITS, content: text }] },
  });
  expect(posted.status, posted.text).toBe(201);
  // 1.0's READY means playable: the playlist is then polled until it ends.
  const m3u8 = await waitFor(
    async () => {
      const r = await call(serve.base, 'GET', posted.json.href as string);
      expect(r.json.status, r.text).not.toBe('FAILED');
      return r.json.status === 'READY' ? (r.json.containers.m3u8 as string) : undefined;
    },
    'the watermark to be READY',
    240_000,
    250,
  );
  await waitFor(async () => ((await (await fetch(m3u8)).text()).includes('#EXT-X-ENDLIST') ? true : undefined), 'the whole playlist', 240_000, 250);
  return posted.json.id as string;
}

/** `wmark watermark view` on serve's data folder: which render the watermark gets, and why. */
async function view(id: string): Promise<{ strategy: string; reason: string }> {
  const proc = startWmark(['--data-dir', serve.dataDir, '--json', 'watermark', 'view', id], {
    env: { ...s3.env, WMARK_BAND: 'on', WMARK_X264: X264!, WMARK_CONFIG_DIR: path.join(work, 'cli-config') },
  });
  const done = await proc.done;
  expect(done.code, proc.stderr()).toBe(0);
  return JSON.parse(proc.stdout()).render;
}

describe.skipIf(!X264)(TITLE, () => {
  let videoId: string;
  let segments: number;

  beforeAll(async () => {
    let source: string;
    [redis, s3, source] = await Promise.all([startRedis(), startS3({ buckets: [BUCKET] }), natural(4)]);
    work = tempDir('farm-band');
    store = openMediaStore(MEDIA, { endpoint: s3.endpoint, credentials: s3.credentials });
    const dataDir = path.join(work, 'serve');
    mkdirSync(dataDir, { recursive: true });
    const proc = spawnServe(
      dataDir,
      ['--port', String(await freePort()), '--workers', '1', '--render', 'full', '--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint],
      { ...s3.env, WMARK_BAND: 'on' },
    );
    serves.push(proc);
    const base = await proc.url;
    const clientId = /client id:\s+(wmc_\S+)/.exec(proc.stderr())![1]!;
    const apiKey = /API key:\s+(wmk_\S+)/.exec(proc.stderr())![1]!;
    const token = (await call(base, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders({ clientId, apiKey }) })).json.token as string;
    serve = { proc, base, headers: bearer(token), dataDir };
    await worker('banded', X264!);
    const { video } = await ingestOverHttp(serve.base, serve.headers, source, 'band-clip', '1.0');
    videoId = video.id as string;
    segments = video.segments as number;
  }, 300_000);

  afterAll(async () => {
    await killSpawned(workers, serves);
    store?.close();
    await s3?.stop();
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the worker that ingests makes the band media in the bucket: the bands, and per segment a shared segment, its frame types and the rows', async () => {
    const meta = JSON.parse((await store.read(bandKeys.meta(videoId))).toString('utf8'));
    expect(meta).toMatchObject({
      width: W,
      height: H,
      bands: SMALL_TITLE_BANDS,
      rows: 'nut',
    });
    const keys = await store.list(`videos/${videoId}/band/`);
    for (let k = 0; k < segments; k++) {
      expect(keys).toContain(bandKeys.shared(videoId, k));
      expect(keys).toContain(bandKeys.qpfile(videoId, k));
      for (const b of [0, 1]) expect(keys).toContain(bandKeys.rows(videoId, b, k, 'nut'));
    }
    expect((await store.read(bandKeys.qpfile(videoId, 0))).toString('utf8')).toMatch(/^0 I -1\n1 P -1\n/);
  });

  it('a mark that fits the bottom band: the view says band, the worker splices every segment, the shared encode outside the band and the mark inside it', async () => {
    const id = await watermark('farm band 42');
    expect(await view(id)).toEqual({ strategy: 'band', reason: expect.stringMatching(/^the mark reaches rows \d+-\d+, inside the band at rows 144-180$/) });
    await metricSettles('wmark_band_renders_total', [`wmark_band_renders_total ${segments}`]);
    expect(await metric('wmark_band_fallbacks_total{')).toEqual([]);
    expect(workers[0]!.stderr()).toContain(`band rendering with ${X264}`);
    const spliced = new RegExp(`rendered watermarks/${videoId}/${id}/seg_\\d{5}\\.ts \\(band\\)`, 'g');
    await logSettles(workers[0]!, spliced, segments);
    for (const k of [0, segments - 1]) {
      const name = `seg_${String(k).padStart(5, '0')}.ts`;
      const [spliced, shared] = [path.join(work, `band-${name}`), path.join(work, `shared-${name}`)];
      writeFileSync(spliced, await store.read(`watermarks/${videoId}/${id}/${name}`));
      writeFileSync(shared, await store.read(bandKeys.shared(videoId, k)));
      await decodesCleanly(spliced);
      // The gate's outside half, bit for bit: above the band the spliced segment decodes as the shared encode.
      expect(await md5s(spliced, ABOVE)).toEqual(await md5s(shared, ABOVE));
      expect(await md5s(spliced, BAND)).not.toEqual(await md5s(shared, BAND));
      // The mark's red pixels: in the band, centred.
      const red = await redRows(spliced);
      expect(red.count).toBeGreaterThan(40);
      expect(red.top).toBeGreaterThanOrEqual(BAND.y);
      expect(red.bottom).toBeLessThanOrEqual(Math.ceil(0.985 * H));
      expect(Math.abs(red.cx - W / 2)).toBeLessThan(12);
    }
  });

  it('a worker without the patched x264 renders such a mark in full, says why once, and serve counts it; its ingests make no band media', async () => {
    await stopWorkers();
    const plain = await worker('plain', path.join(work, 'no-such-x264'));
    const id = await watermark('farm full 42');
    expect(await view(id)).toMatchObject({ strategy: 'band' });
    await metricSettles('wmark_band_fallbacks_total{', [`wmark_band_fallbacks_total{reason="BAND_OFF"} ${segments}`]);
    const said = plain.stderr().match(/band rendering off: patched x264 not found[^\n]*/g);
    expect(said).toEqual([expect.stringContaining('segments that fit a band are rendered in full on this worker')]);
    expect(plain.stderr()).not.toContain('(band)');
    const name = 'seg_00000.ts';
    const [full, shared] = [path.join(work, `full-${name}`), path.join(work, `shared-full-${name}`)];
    writeFileSync(full, await store.read(`watermarks/${videoId}/${id}/${name}`));
    writeFileSync(shared, await store.read(bandKeys.shared(videoId, 0)));
    await decodesCleanly(full);
    // A whole picture encoded again: nothing of it is the shared encode's, and the mark is where the settings put it.
    expect(await md5s(full, ABOVE)).not.toEqual(await md5s(shared, ABOVE));
    const red = await redRows(full);
    expect(red.count).toBeGreaterThan(40);
    expect(red.top).toBeGreaterThanOrEqual(BAND.y);

    // Its ingest makes no band media, so a mark on that title renders in full, and the view says why.
    const { video } = await ingestOverHttp(serve.base, serve.headers, await natural(2), 'plain-clip', '1.0');
    expect(await store.list(`videos/${video.id as string}/band/`)).toEqual([]);
    const onPlain = await watermark('farm plain 42', 'plain-clip');
    expect(await view(onPlain)).toEqual({ strategy: 'full', reason: 'the title has no band encode (it was ingested without the patched x264)' });
  });

  it('a worker whose band render fails renders that segment in full: logged and counted by its reason', async () => {
    await stopWorkers();
    // An x264 that names the several-band form in its help (so the worker takes it) and fails every encode.
    const broken = path.join(work, 'broken-x264.sh');
    writeFileSync(
      broken,
      "#!/bin/sh\ncase \"$1\" in --fullhelp) echo '  --band-rows <top,bottom[,top,bottom...]>';; *) echo 'x264 [error]: broken on purpose' >&2; exit 1;; esac\n",
    );
    chmodSync(broken, 0o755);
    const failing = await worker('failing', broken);
    const before = await metric('wmark_band_fallbacks_total{');
    const id = await watermark('farm fallback 42');
    await metricSettles('wmark_band_fallbacks_total{reason="FFMPEG_FAILED"}', [`wmark_band_fallbacks_total{reason="FFMPEG_FAILED"} ${segments}`]);
    expect(before.some((line) => line.includes('FFMPEG_FAILED'))).toBe(false);
    await logSettles(failing, /band render of \S+ failed \(FFMPEG_FAILED: x264 exited with code 1[^\n]*; rendering it in full/g, segments);
    const file = path.join(work, 'fallback.ts');
    writeFileSync(file, await store.read(`watermarks/${videoId}/${id}/seg_00000.ts`));
    await decodesCleanly(file);
    expect((await redRows(file)).count).toBeGreaterThan(40);
  });
});
