// Forensic viewers in a real browser: a 5-minute clip ingested with enableForensic, then a forensic-only watermark
// (READY at once, no encode) played through hls.js past 2 s: its 2.0 playlist from a cross-origin page, and its 1.0
// player link. The segments the browser receives are exactly the A/B variants the viewer's codeword names.
import { linkSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type OpenedPage, openPage, saveScreenshot, videoFrameStats, waitForPlayback } from '../../harness/browser.js';
import { ingestVideo, type TestEngine, testEngine, videoDir } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { call, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { codeword, forensicKey } from '../../src/core/forensic/keyed-bits.js';
import { type ForensicLayout, variantFileFor } from '../../src/core/forensic/title-layout.js';
import { encodeForensicContent } from '../../src/core/forensic-payload.js';
import { FORENSIC_DIR } from '../../src/engine/data-folder/layout.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { readTitleLayout } from '../../src/engine/watermark/watermark-segments.js';

const require = createRequire(import.meta.url);
const HLS_JS = path.join(path.dirname(require.resolve('hls.js/package.json')), 'dist', 'hls.min.js');

const KEY = 'browser-forensic-5min';
/** A frame of the natural clip has a luma spread far above this; a blank or flat one is near 0. */
const MIN_STDDEV = 12;

let engine: TestEngine;
let server: TestServer;
let browser: Browser;
let video: VideoRecord;
let layout: ForensicLayout;
let work: string;
let pageServer: Server;
let pageOrigin: string;
const pages: OpenedPage[] = [];

async function newPage(): Promise<OpenedPage> {
  const opened = await openPage(browser);
  pages.push(opened);
  return opened;
}

/** The variant file viewer `payload` must receive as segment k (one code bit per slot, up to two slots a segment). */
function variantFor(payload: number, k: number): string {
  const code = codeword(forensicKey(engine.secret), video.id, payload, layout.slots);
  return path.join(videoDir(engine, video.id), FORENSIC_DIR, variantFileFor(layout, code, k));
}

beforeAll(async () => {
  work = tempDir('forensic-browser');
  const source = path.join(work, 'natural-5min.mp4');
  linkSync(await natural(300), source);
  engine = await testEngine();
  ({ video } = await ingestVideo(engine, { source, key: KEY, enableForensic: true }));
  expect(video).toMatchObject({ status: 'INGESTED', enableForensic: true });
  layout = await readTitleLayout(engine, video);
  server = await serveEngine(engine);
  browser = await launchBrowser();

  const hlsSource = readFileSync(HLS_JS);
  // A third-party page on its own origin that plays ?src= with hls.js (and fails loudly when hls.js is unsupported).
  const html = `<!doctype html><meta charset="utf-8"><title>forensic hls.js page</title>
<body style="margin:0;background:#000">
<video id="video" muted autoplay playsinline style="display:block;width:640px;height:360px"></video>
<script src="/hls.min.js"></script>
<script>
  var src = new URLSearchParams(location.search).get('src');
  var video = document.getElementById('video');
  window.engineUsed = window.Hls && Hls.isSupported() ? 'hls.js' : 'none';
  if (window.engineUsed === 'hls.js') {
    var hls = new Hls();
    hls.on(Hls.Events.MANIFEST_PARSED, function () { var p = video.play(); if (p && p.catch) p.catch(function () {}); });
    hls.loadSource(src);
    hls.attachMedia(video);
  }
</script>`;
  pageServer = createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    if (pathname === '/hls.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(hlsSource);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
}, 600_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && server?.logs.length) console.error(`server log:\n${server.logs.join('\n')}`);
  await Promise.all(pages.splice(0).map((p) => p.close().catch(() => {})));
});

afterAll(async () => {
  await browser?.close();
  pageServer?.closeAllConnections();
  await new Promise((resolve) => (pageServer ? pageServer.close(resolve) : resolve(undefined)));
  await server?.close();
  await engine?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a forensic viewer in the browser', () => {
  it('plays its 2.0 playlist through hls.js past 2 s, fed exactly the A/B variants its codeword names', async () => {
    const payload = 0xbeef;
    const before = engine.runner.encodes();
    const created = await call(server.url, 'POST', '/2.0/watermark', {
      headers: server.v2,
      body: { key: KEY, settings: [{ type: 'FORENSIC', content: encodeForensicContent(payload, '2.0') }], containers: ['m3u8'] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.status).toBe('READY');
    expect(engine.runner.encodes() - before).toBe(0);
    const m3u8 = created.json.containers.m3u8 as string;
    expect(new URL(m3u8).origin).toBe(server.url);

    const opened = await newPage();
    const { page } = opened;
    const segments: { k: number; status: number; body: Promise<Buffer>; allowOrigin: string | undefined }[] = [];
    page.on('response', (r) => {
      const m = /\/seg_(\d{5})\.ts$/.exec(new URL(r.url()).pathname);
      if (m && r.url().startsWith(server.url)) {
        const body = r.body();
        body.catch(() => {}); // awaited below; a page closed early must not leave an unhandled rejection
        segments.push({ k: Number(m[1]), status: r.status(), body, allowOrigin: r.headers()['access-control-allow-origin'] });
      }
    });
    await page.goto(`${pageOrigin}/?src=${encodeURIComponent(m3u8)}`);
    const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 90_000 });
    expect(await page.evaluate(() => (window as unknown as { engineUsed?: string }).engineUsed)).toBe('hls.js');
    expect(playing.hlsInstances).toBe(1);
    expect(playing.src.startsWith('blob:')).toBe(true);
    expect(playing.fatal).toEqual([]);
    expect(playing.mediaError).toBeNull();

    const frame = await videoFrameStats(page, '#video');
    expect({ width: frame.width, height: frame.height }).toEqual({ width: 320, height: 180 });
    expect(frame.stddev, `the decoded frame looks blank: ${JSON.stringify(frame)}`).toBeGreaterThan(MIN_STDDEV);
    await saveScreenshot(page, 'forensic-hls-2.0.png');

    expect(segments.length).toBeGreaterThanOrEqual(1);
    for (const s of segments) {
      expect(s.status).toBe(200);
      expect(s.allowOrigin).toBe('*');
      const body = await s.body;
      expect(body.equals(readFileSync(variantFor(payload, s.k))), `segment ${s.k} is the codeword's variant`).toBe(true);
    }
  });

  it('plays from its 1.0 player link (player page + hls.js) past 2 s', async () => {
    const created = await call(server.url, 'POST', '/1.0/watermark', {
      headers: server.v1,
      body: { key: KEY, settings: [{ type: 'FORENSIC', content: 'Wm' }], containers: ['m3u8'] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.status).toBe('READY');
    expect((await engine.store.getWatermark(created.json.id))?.forensicPayload).toBe(0x576d);
    const opened = await newPage();
    expect((await opened.page.goto(created.json.containers.href))?.status()).toBe(200);
    const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 90_000 });
    expect(playing.hlsInstances).toBe(1);
    expect(playing.src.startsWith('blob:')).toBe(true);
    expect(playing.fatal).toEqual([]);
    expect(playing.player?.state).toBe('playing');
    const frame = await videoFrameStats(opened.page, '#video');
    expect(frame.stddev).toBeGreaterThan(MIN_STDDEV);
    await saveScreenshot(opened.page, 'forensic-player-1.0.png');
  });
});
