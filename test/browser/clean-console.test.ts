// The service's pages in headless Chromium leave nothing in the console: the player plays a 1.0 and a 2.0 watermark
// through hls.js (its worker, from its own script, allowed by the CSP) and the index page loads, with no console error or warning,
// no CSP violation, no failed request and no answer of 400 or more (the favicon included).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type OpenedPage, openPage, waitForPlayback } from '../../harness/browser.js';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { createCredential, type IssuedCredential } from '../../src/engine/app/credentials.js';
import { serverService } from '../../src/engine/app/server-service.js';
import { type RunningServer, startServer } from '../../src/server/app/node-server.js';
import { VERSION } from '../../src/version.js';

const KEY = 'clean-console-10s';
let engine: TestEngine;
let server: RunningServer;
let browser: Browser;
let credential: IssuedCredential;

/** Every sign of trouble a page can leave: console errors and warnings, CSP violations, failed or refused requests. */
interface Watched extends OpenedPage {
  problems: string[];
  requests: string[];
}

async function watchedPage(): Promise<Watched> {
  const opened = await openPage(browser);
  const problems: string[] = [];
  const requests: string[] = [];
  const { page } = opened;
  // CSP violations are reported to the console too, but the event names the directive, which makes a failure plain.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`));
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => {
    requests.push(new URL(r.url()).pathname);
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return Object.assign(opened, { problems, requests });
}

beforeAll(async () => {
  engine = await testEngine();
  const { video } = await ingestVideo(engine, { source: await natural(10), key: KEY });
  expect(video.status).toBe('INGESTED');
  server = await startServer({ service: serverService(engine, { host: '127.0.0.1' }), host: '127.0.0.1', port: 0, tokenTtlSeconds: 600 });
  credential = await createCredential(engine, 'clean console test');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await engine?.dispose();
});

async function watermark(version: '1.0' | '2.0', text: string): Promise<{ containers: { href: string } }> {
  const keys = { 'x-api-client-id': credential.clientId, 'x-api-key': credential.apiKey };
  let auth: Record<string, string> = keys;
  if (version === '1.0') {
    const token = (await (await fetch(`${server.url}/1.0/authenticate/accessToken`, { headers: keys })).json()) as { token: string };
    auth = { authorization: `Bearer ${token.token}` };
  }
  const res = await fetch(`${server.url}/${version}/watermark`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ key: KEY, settings: [{ content: text, fontOpacity: 0.8 }] }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { containers: { href: string } };
}

describe('a clean console', () => {
  for (const version of ['1.0', '2.0'] as const) {
    it(`the ${version} player plays past 2 s through hls.js with an empty console`, async () => {
      const created = await watermark(version, `clean ${version}`);
      const opened = await watchedPage();
      try {
        expect((await opened.page.goto(created.containers.href))?.status()).toBe(200);
        const playing = await waitForPlayback(opened, { minTime: 2, timeoutMs: 60_000 });
        expect(playing.hlsInstances).toBe(1);
        expect(playing.src.startsWith('blob:')).toBe(true);
        // hls.js moved its transmuxing into a worker loaded from the small hls.worker.js beside it (a CSP without
        // worker-src 'self' refuses it, and hls.js falls back to the main thread with a violation in the console).
        const worker = await opened.page.evaluate(() => {
          const hls = (window as unknown as { wmarkPlayer?: { hls?: { config: { enableWorker: boolean; workerPath: string } } } }).wmarkPlayer?.hls;
          return hls && { enabled: hls.config.enableWorker, path: new URL(hls.config.workerPath).pathname };
        });
        expect(worker).toEqual({ enabled: true, path: '/player/assets/hls.worker.js' });
        expect(opened.requests).toContain('/player/assets/hls.worker.js');
        expect(opened.requests).toContain('/player/assets/favicon.svg');
        expect(opened.problems).toEqual([]);
      } finally {
        await opened.close();
      }
    });
  }

  it('the index page at / shows the version and docs with an empty console, and the icon loads', async () => {
    const opened = await watchedPage();
    try {
      expect((await opened.page.goto(`${server.url}/`))?.status()).toBe(200);
      expect(await opened.page.title()).toBe(`wmark ${VERSION}`);
      expect(await opened.page.locator('#docs a').allTextContents()).toEqual(expect.arrayContaining(['docs/api.md', 'docs/settings.md']));
      await expect.poll(() => opened.requests, { timeout: 5000 }).toContain('/player/assets/favicon.svg');
      await opened.page.locator('#docs a', { hasText: 'docs/api.md' }).click();
      await expect.poll(() => opened.page.url()).toBe(`${server.url}/docs/api.md`);
      expect(await opened.page.locator('body').textContent()).toContain('# The HTTP API of `wmark serve`');
      expect(opened.problems).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});
