// A title rendered in bands plays in a real browser: hls.js in headless Chromium plays a spliced watermark (every
// segment a band spliced into the shared encode) from start to end, and seeks back into it, with no fatal error, no
// media error and no stall. Skipped, saying why, without the patched x264.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type OpenedPage, openPage, playbackState, waitForPage, waitForPlayback } from '../../harness/browser.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import { ingestFixture, renderWith } from '../helpers/watermark-helpers.js';

const require = createRequire(import.meta.url);
const HLS_JS = path.join(path.dirname(require.resolve('hls.js/package.json')), 'dist', 'hls.min.js');
const X264 = locateBandX264();
if (!X264) console.warn('band player test skipped: no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)');
const TITLE = X264 ? 'a band-rendered title in hls.js (patched x264)' : 'a band-rendered title in hls.js: skipped, no patched x264';

const PAGE = `<!doctype html><meta charset="utf-8"><title>band playback</title>
<video id="video" muted autoplay playsinline></video>
<script src="/hls.min.js"></script>
<script>
  var video = document.getElementById('video');
  window.stalls = 0;
  var hls = new Hls();
  hls.on(Hls.Events.ERROR, function (_e, data) { if (data.details === 'bufferStalledError') window.stalls++; });
  hls.on(Hls.Events.MANIFEST_PARSED, function () { video.play().catch(function () {}); });
  hls.loadSource('/video.m3u8');
  hls.attachMedia(video);
</script>`;

describe.skipIf(!X264)(TITLE, () => {
  let engine: TestEngine;
  let server: Server;
  let browser: Browser;
  let opened: OpenedPage | undefined;
  let dir = '';

  beforeAll(async () => {
    engine = await testEngine({ band: { x264: X264! } });
    await ingestFixture(engine, await natural(8), 'band-browser');
    const r = await renderWith(engine, 'band-browser', [
      { type: 'TEXT', content: 'viewer · band', y: 0.985, verticalAlign: 'BOTTOM', fontSize: 0.1, fontOpacity: 0.9 },
    ]);
    expect(r.record.status).toBe('READY');
    expect(engine.renderer.bandStats().rendered).toBeGreaterThan(0);
    expect(engine.renderer.bandStats().fallbacks).toEqual({});
    dir = r.dir;
    const hls = readFileSync(HLS_JS);
    server = createServer((req, res) => {
      const name = (req.url ?? '/').split('?')[0]!;
      if (name === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      if (name === '/hls.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(hls);
      if (!/^\/(video\.m3u8|seg_\d+\.ts)$/.test(name)) return void res.writeHead(404).end();
      const type = name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t';
      res.writeHead(200, { 'content-type': type }).end(readFileSync(path.join(dir, name)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await opened?.close().catch(() => {});
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await engine?.dispose();
  });

  it('plays from start to end, seeks back, and plays on without an error or a stall', async () => {
    opened = await openPage(browser);
    await opened.page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await waitForPlayback(opened, { minTime: 2, timeoutMs: 90_000 });
    await waitForPage(opened, 'the end of the video', () => (document.getElementById('video') as HTMLVideoElement).ended, 90_000);
    await opened.page.evaluate(() => {
      const v = document.getElementById('video') as HTMLVideoElement;
      v.currentTime = 3.2;
      void v.play();
    });
    await waitForPlayback(opened, { minTime: 5, timeoutMs: 60_000 });
    const state = await playbackState(opened.page);
    expect(state.fatal).toEqual([]);
    expect(state.mediaError).toBeNull();
    expect(await opened.page.evaluate(() => (window as unknown as { stalls: number }).stalls)).toBe(0);
  });
});
