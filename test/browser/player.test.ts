// The player page and signed HLS in a real browser: headless Chromium plays a fresh 1.0 watermark's player link (also
// late, and embedded as the iframe snippet) and a 2.0 containers.m3u8 from a cross-origin page, all through hls.js;
// forged and expired links end in an error state.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  imageStats,
  launchBrowser,
  type OpenedPage,
  openPage,
  playbackState,
  saveScreenshot,
  videoFrameStats,
  waitForPage,
  waitForPlayback,
} from '../../harness/browser.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { signPlayerUrl } from '../../src/core/watermark-urls.js';
import { STATUS_URL_GRACE_MS } from '../../src/engine/app/api-bodies.js';
import { createCredential, type IssuedCredential } from '../../src/engine/app/credentials.js';
import { serverService } from '../../src/engine/app/server-service.js';
import { type RunningServer, startServer } from '../../src/server/app/node-server.js';

const require = createRequire(import.meta.url);
const HLS_JS = path.join(path.dirname(require.resolve('hls.js/package.json')), 'dist', 'hls.min.js');

const KEY = 'browser-natural-14s';
/** A frame of the natural fixture (fractal + grain) has a luma spread far above this; a blank or flat one is near 0. */
const MIN_STDDEV = 12;
const ALICE = { key: KEY, settings: [{ type: 'TEXT', content: 'viewer 1.0 · alice', fontSize: 0.1, fontOpacity: 0.8, y: 0.85 }] };

interface WatermarkBody {
  status: string;
  containers: { href: string; iframe?: string; m3u8?: string; mp4?: string };
  href?: string;
  id: string;
  videoId: string;
}

interface PlayerWindow {
  wmarkPlayer?: { state: string; polls: number; error: string | null; hlsError: string | null; hls?: unknown };
}

/** The engine's clock runs this far ahead of the real one (time travel for expiry checks). */
let clockOffsetMs = 0;
let engine: TestEngine;
let server: RunningServer;
let browser: Browser;
let credential: IssuedCredential;
let token: string;
const serverLog: string[] = [];
const pages: OpenedPage[] = [];

async function api<T>(method: string, route: string, auth: 'bearer' | 'keys', body?: unknown): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> =
    auth === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-api-client-id': credential.clientId, 'x-api-key': credential.apiKey };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

async function newPage(): Promise<OpenedPage> {
  const opened = await openPage(browser);
  pages.push(opened);
  return opened;
}

/**
 * Holds every segment render of the engine until released, so a new watermark stays PENDING for as long as the test
 * needs to look at it; after release each render is still slowed by `delayMs`, so the playlist grows during playback.
 */
function holdSegmentRenders(delayMs: number): { release(): void; restore(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const original = engine.runner.ffmpeg;
  engine.runner.ffmpeg = async (args, options) => {
    if (args.includes('-filter_script:v')) {
      await gate;
      await new Promise((r) => setTimeout(r, delayMs));
    }
    return original(args, options);
  };
  return {
    release,
    restore: () => {
      release();
      engine.runner.ffmpeg = original;
    },
  };
}

async function waitReady(id: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await engine.store.getWatermark(id))?.status !== 'READY') {
    if (Date.now() > deadline) throw new Error(`watermark ${id} not READY after ${timeoutMs} ms: ${JSON.stringify(await engine.store.getWatermark(id))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  engine = await testEngine({ now: () => Date.now() + clockOffsetMs });
  const source = await natural(14);
  const { video } = await ingestVideo(engine, { source, key: KEY });
  expect(video.status).toBe('INGESTED');
  server = await startServer({
    service: serverService(engine, { host: '127.0.0.1' }),
    host: '127.0.0.1',
    port: 0,
    tokenTtlSeconds: 600,
    log: (line) => serverLog.push(line),
  });
  credential = await createCredential(engine, 'browser test');
  const tokenResponse = await fetch(`${server.url}/1.0/authenticate/accessToken`, {
    headers: { 'x-api-client-id': credential.clientId, 'x-api-key': credential.apiKey },
  });
  expect(tokenResponse.status).toBe(200);
  token = ((await tokenResponse.json()) as { token: string }).token;
  browser = await launchBrowser();
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && serverLog.length) console.error(`server log:\n${serverLog.join('\n')}`);
  await Promise.all(pages.splice(0).map((p) => p.close().catch(() => {})));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await engine?.dispose();
});

describe('the 1.0 player link', () => {
  it('shows the loading state while PENDING, then plays through hls.js past 2 s', async () => {
    const hold = holdSegmentRenders(1500);
    try {
      const created = await api<WatermarkBody>('POST', '/1.0/watermark', 'bearer', ALICE);
      expect(created.status).toBe(201);
      expect(created.body.status).toBe('PENDING');
      const href = created.body.containers.href;
      expect(href.startsWith(`${server.url}/player/1.0/?`)).toBe(true);

      const opened = await newPage();
      const { page } = opened;
      const response = await page.goto(href);
      expect(response?.status()).toBe(200);

      // The player polled the long-poll href and was told PENDING: renders are held, so this state cannot be skipped.
      await waitForPage(opened, 'the loading state after a PENDING poll', () => {
        const w = window as unknown as PlayerWindow;
        return document.body.dataset.wmarkState === 'loading' && (w.wmarkPlayer?.polls ?? 0) >= 1;
      });
      expect((await engine.store.getWatermark(created.body.id))?.status).toBe('PENDING');
      await expect.poll(() => page.locator('#overlay').isVisible()).toBe(true);
      expect(await page.locator('.spinner').isVisible()).toBe(true);
      expect(await page.locator('#message').textContent()).toBe('Preparing your video…');
      expect(await page.locator('#stage').getAttribute('data-state')).toBe('loading');
      const waiting = await playbackState(page);
      expect(waiting.hlsInstances).toBe(0);
      expect(waiting.currentTime).toBe(0);
      await saveScreenshot(page, 'player-1.0-loading.png');

      hold.release();
      const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 60_000 });
      // hls.js played it (MSE, a blob: source), not Chromium's native HLS, and without a single fatal error.
      expect(playing.hlsInstances).toBe(1);
      expect(playing.src.startsWith('blob:')).toBe(true);
      expect(playing.fatal).toEqual([]);
      expect(await page.evaluate(() => Boolean((window as unknown as PlayerWindow).wmarkPlayer?.hls))).toBe(true);
      expect(playing.player?.state).toBe('playing');
      expect(await page.evaluate(() => document.body.dataset.wmarkState)).toBe('playing');
      expect(await page.locator('#overlay').isVisible()).toBe(false);

      const shot = await saveScreenshot(page.locator('#video'), 'player-1.0.png');
      const shotStats = await imageStats(shot);
      expect(shotStats.stddev, `screenshot ${shot} looks blank: ${JSON.stringify(shotStats)}`).toBeGreaterThan(MIN_STDDEV);
      const frame = await videoFrameStats(page, '#video');
      expect({ width: frame.width, height: frame.height }).toEqual({ width: 320, height: 180 });
      expect(frame.stddev, `the decoded frame looks blank: ${JSON.stringify(frame)}`).toBeGreaterThan(MIN_STDDEV);
    } finally {
      hold.restore();
    }
  });

  it('still plays when opened after its long-poll href expired (10 min after READY)', async () => {
    const created = await api<WatermarkBody>('POST', '/1.0/watermark', 'bearer', { key: KEY, settings: [{ type: 'TEXT', content: 'viewer 1.0 · erin' }] });
    await waitReady(created.body.id);
    // Asked again once READY: the long-poll href now expires STATUS_URL_GRACE_MS after READY, the player and playlist in 24 h.
    const ready = await api<WatermarkBody>('POST', '/1.0/watermark', 'bearer', { key: KEY, settings: [{ type: 'TEXT', content: 'viewer 1.0 · erin' }] });
    expect(ready.body.status).toBe('READY');
    const longPoll = new URL(ready.body.containers.href).searchParams.get('href')!;
    clockOffsetMs = STATUS_URL_GRACE_MS + 60_000;
    try {
      expect((await fetch(longPoll)).status).toBe(403);
      expect((await fetch(ready.body.containers.m3u8!)).status).toBe(200);
      const opened = await newPage();
      expect((await opened.page.goto(ready.body.containers.href))?.status()).toBe(200);
      const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 60_000 });
      expect(playing.hlsInstances).toBe(1);
      expect(playing.player?.state).toBe('playing');
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('from another site', () => {
  let pageServer: Server;
  let pageOrigin: string;
  let embedHtml = '';

  beforeAll(async () => {
    const hlsSource = readFileSync(HLS_JS);
    // A third-party page on its own origin: hls.js when supported (Chromium also claims native HLS), native otherwise.
    const html = `<!doctype html><meta charset="utf-8"><title>hls.js test page</title>
<body style="margin:0;background:#000">
<video id="video" muted autoplay playsinline style="display:block;width:640px;height:360px"></video>
<script src="/hls.min.js"></script>
<script>
  var src = new URLSearchParams(location.search).get('src');
  var video = document.getElementById('video');
  function start() { var p = video.play(); if (p && p.catch) p.catch(function () {}); }
  if (window.Hls && Hls.isSupported()) {
    window.engineUsed = 'hls.js';
    var hls = new Hls();
    window.hls = hls;
    hls.on(Hls.Events.MANIFEST_PARSED, start);
    hls.loadSource(src);
    hls.attachMedia(video);
  } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
    window.engineUsed = 'native';
    video.src = src;
    start();
  }
</script>`;
    pageServer = createServer((req, res) => {
      const pathname = (req.url ?? '/').split('?')[0];
      if (pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return void res.end(html);
      }
      if (pathname === '/embed') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return void res.end(embedHtml);
      }
      if (pathname === '/hls.min.js') {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
        return void res.end(hlsSource);
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    pageServer?.closeAllConnections();
    await new Promise((resolve) => pageServer?.close(resolve));
  });

  it('plays from a cross-origin page through hls.js past 2 s (CORS, signed segment URIs)', async () => {
    const created = await api<WatermarkBody>('POST', '/2.0/watermark', 'keys', {
      key: KEY,
      settings: [{ type: 'TEXT', content: 'viewer 2.0 · bob', fontSize: 0.1, fontOpacity: 0.8, y: 0.15 }],
      containers: ['m3u8'],
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('READY');
    const m3u8 = created.body.containers.m3u8;
    expect(m3u8).toBeDefined();
    expect(new URL(m3u8!).origin).toBe(server.url);
    expect(pageOrigin).not.toBe(server.url);

    const opened = await newPage();
    const { page } = opened;
    const media: { url: string; status: number; allowOrigin: string | undefined }[] = [];
    page.on('response', (r) => {
      if (r.url().startsWith(server.url)) media.push({ url: r.url(), status: r.status(), allowOrigin: r.headers()['access-control-allow-origin'] });
    });
    await page.goto(`${pageOrigin}/?src=${encodeURIComponent(m3u8!)}`);

    const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { engineUsed?: string }).engineUsed)).toBe('hls.js');
    expect(playing.hlsInstances).toBe(1);
    expect(playing.src.startsWith('blob:')).toBe(true);
    expect(playing.fatal).toEqual([]);

    const playlist = media.filter((m) => new URL(m.url).pathname.endsWith('/video.m3u8'));
    const segments = media.filter((m) => /\/seg_\d{5}\.ts$/.test(new URL(m.url).pathname));
    expect(playlist.length).toBeGreaterThanOrEqual(1);
    expect(segments.length).toBeGreaterThanOrEqual(1);
    for (const m of [...playlist, ...segments]) {
      expect(m.status, m.url).toBe(200);
      expect(m.allowOrigin, m.url).toBe('*');
      // Every segment URI came out of the playlist already signed.
      expect(new URL(m.url).searchParams.get('signature'), m.url).toBeTruthy();
    }

    const frame = await videoFrameStats(page, '#video');
    expect(frame.stddev, `the decoded frame looks blank: ${JSON.stringify(frame)}`).toBeGreaterThan(MIN_STDDEV);
    await saveScreenshot(page, 'hls-test-page-2.0.png');
  });

  it('a default-containers watermark (m3u8 and mp4) plays within the bound of an m3u8-only one: its playlist never waits on the mp4', async () => {
    /** From the POST to 4 s played in hls.js, and the first playlist the page got. */
    const playFromCreate = async (content: string, containers?: string[]) => {
      const started = Date.now();
      const created = await api<WatermarkBody>('POST', '/2.0/watermark', 'keys', {
        key: KEY,
        settings: [{ type: 'TEXT', content, fontSize: 0.1, fontOpacity: 0.8, y: 0.5 }],
        ...(containers ? { containers } : {}),
      });
      expect(created.status).toBe(201);
      await waitFor(async () => ((await engine.store.getWatermark(created.body.id))?.status !== 'PENDING' ? true : undefined), 'playable');
      const ready = await api<WatermarkBody>('POST', '/2.0/watermark', 'keys', {
        key: KEY,
        settings: [{ type: 'TEXT', content, fontSize: 0.1, fontOpacity: 0.8, y: 0.5 }],
        ...(containers ? { containers } : {}),
      });
      const m3u8 = ready.body.containers.m3u8!;
      const firstPlaylist = await (await fetch(m3u8)).text();
      const opened = await newPage();
      await opened.page.goto(`${pageOrigin}/?src=${encodeURIComponent(m3u8)}`);
      await waitForPlayback(opened, { minTime: 4, timeoutMs: 60_000 });
      return { ms: Date.now() - started, firstPlaylist };
    };
    const m3u8Only = await playFromCreate('viewer 2.0 · m3u8 only', ['m3u8']);
    const both = await playFromCreate('viewer 2.0 · default containers');
    // The same VOD playlist: every segment listed and ended from the start, not an EVENT playlist growing render by render.
    for (const p of [m3u8Only.firstPlaylist, both.firstPlaylist]) {
      expect(p).toContain('#EXT-X-ENDLIST');
      expect(p).not.toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    }
    expect(both.firstPlaylist.match(/seg_\d{5}\.ts/g)?.length).toBe(m3u8Only.firstPlaylist.match(/seg_\d{5}\.ts/g)?.length);
    const bound = Math.max(2 * m3u8Only.ms, m3u8Only.ms + 4000);
    expect(both.ms, `default containers ${both.ms} ms, m3u8 only ${m3u8Only.ms} ms`).toBeLessThan(bound);
  });

  it("the 1.0 containers.iframe snippet plays when embedded in another site's page", async () => {
    const created = await api<WatermarkBody>('POST', '/1.0/watermark', 'bearer', ALICE);
    expect(created.body.status).toBe('READY');
    const snippet = created.body.containers.iframe!;
    expect(snippet).toMatch(/^<iframe src="[^"]+"/);
    embedHtml = `<!doctype html><meta charset="utf-8"><title>embed</title><body style="margin:0">${snippet}</body>`;

    const opened = await newPage();
    await opened.page.goto(`${pageOrigin}/embed`);
    await expect.poll(() => opened.page.frames().some((f) => f.url() === created.body.containers.href)).toBe(true);
    const frame = opened.page.frames().find((f) => f.url() === created.body.containers.href)!;
    const playing = await waitForPlayback({ page: frame, log: opened.log }, { minTime: 2, timeoutMs: 60_000 });
    expect(playing.hlsInstances).toBe(1);
    expect(playing.player?.state).toBe('playing');
    const frameStats = await videoFrameStats(frame, '#video');
    expect(frameStats.stddev).toBeGreaterThan(MIN_STDDEV);
    await saveScreenshot(opened.page, 'player-1.0-iframe.png');
  });
});

describe('links that are not valid', () => {
  async function playerLink(): Promise<string> {
    const created = await api<WatermarkBody>('POST', '/2.0/watermark', 'keys', {
      key: KEY,
      settings: [{ type: 'TEXT', content: 'viewer 2.0 · carol' }],
      containers: ['m3u8'],
    });
    expect(created.body.status).toBe('READY');
    return created.body.containers.href;
  }

  it('a forged or expired player link gets the 403 page', async () => {
    const href = await playerLink();
    const forged = new URL(href);
    const signature = forged.searchParams.get('signature')!;
    forged.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`);
    // Signed with this server's own secret, so genuine, but its expiration passed an hour ago.
    const expired = signPlayerUrl(engine.secret, new URL(href), Date.now() - 3_600_000);

    for (const [link, text, name] of [
      [forged.href, 'This link is not valid.', 'player-forged.png'],
      [expired, 'This link has expired. Ask for a new one.', 'player-expired.png'],
    ] as const) {
      const opened = await newPage();
      const response = await opened.page.goto(link);
      expect(response?.status(), link).toBe(403);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText(), the text as shown, not the DOM property
      expect((await opened.page.locator('body').innerText()).trim()).toBe(text);
      expect(await opened.page.evaluate(() => (window as unknown as PlayerWindow).wmarkPlayer)).toBeUndefined();
      await saveScreenshot(opened.page, name);
    }
  });

  it('a valid player link with a forged playlist signature shows the player error', async () => {
    const href = await playerLink();
    const player = new URL(href);
    const expirationMs = Number(player.searchParams.get('expiration'));
    const tamper = (signed: string) => {
      const url = new URL(signed);
      url.searchParams.set('signature', 'A'.repeat(43));
      return url.href;
    };

    // 2.0: hls.js is handed a playlist URL whose signature is forged.
    const forgedSource = new URL(player.href);
    forgedSource.searchParams.set('sourceUrl', tamper(player.searchParams.get('sourceUrl')!));
    // 1.0: both the long-poll href the player polls and the playlist behind it carry forged signatures.
    const v1 = await api<WatermarkBody>('POST', '/1.0/watermark', 'bearer', ALICE);
    const forgedStatus = new URL(v1.body.containers.href);
    forgedStatus.searchParams.set('href', tamper(forgedStatus.searchParams.get('href')!));
    forgedStatus.searchParams.set('sourceUrl', tamper(forgedStatus.searchParams.get('sourceUrl')!));

    const cases = [
      { name: 'player-forged-m3u8.png', url: signPlayerUrl(engine.secret, forgedSource, expirationMs), hlsError: 'manifestLoadError' },
      {
        name: 'player-forged-href.png',
        url: signPlayerUrl(engine.secret, forgedStatus, Number(forgedStatus.searchParams.get('expiration'))),
        hlsError: 'manifestLoadError',
      },
    ];
    for (const c of cases) {
      const opened = await newPage();
      const response = await opened.page.goto(c.url);
      expect(response?.status(), c.url).toBe(200);
      await waitForPage(opened, 'the player error state', () => document.body.dataset.wmarkState === 'error', 20_000);
      const state = await playbackState(opened.page);
      expect(state.player?.error).toBe('This link is no longer valid. Ask for a new one.');
      expect(state.player?.hlsError).toBe(c.hlsError);
      expect(state.fatal.map((f) => [f.details, f.code])).toEqual([[c.hlsError, 403]]);
      expect(state.currentTime).toBe(0);
      // The player gave up: nothing keeps loading behind the message (the native controls would show their spinner).
      expect(await opened.page.evaluate(() => document.querySelector('video')!.networkState)).not.toBe(2); // NETWORK_LOADING
      expect(await opened.page.locator('#overlay').isVisible()).toBe(true);
      expect(await opened.page.locator('.spinner').isVisible()).toBe(false);
      expect(await opened.page.locator('#message').textContent()).toBe('This link is no longer valid. Ask for a new one.');
      await saveScreenshot(opened.page, c.name);
    }
  });
});
