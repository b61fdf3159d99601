// The pages around the API, in-process: GET / is an HTML index for a browser and JSON for a client that asks for it,
// its doc links work, the icon exists, and the player page's CSP lets hls.js start its worker from its own assets.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEngine } from '../../harness/engine.js';
import { flat, REPO } from '../../harness/fixtures.js';
import { call, IN_PROCESS_HOST, ingestOverHttp, type TestApp } from '../../harness/serve-helpers.js';
import { signPlayerUrl } from '../../src/core/watermark-urls.js';
import { prefersHtml } from '../../src/server/routes/home.js';
import { VERSION } from '../../src/version.js';
import { expectError, inProcessAppPerFile } from '../helpers/serve-in-tests.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
let engine: TestEngine;
let s: TestApp;

inProcessAppPerFile((e, app) => {
  engine = e;
  s = app;
});

describe('GET /', () => {
  it('answers JSON to Accept: application/json (and to curl), with the version, docs and a status that counts', async () => {
    const before = await call(s.app, 'GET', '/', { headers: { accept: 'application/json' } });
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toMatch(/^application\/json/);
    expect(before.json).toMatchObject({ service: 'wmark', version: VERSION, apiVersions: ['1.0', '2.0'], status: { videos: 0, watermarks: 0 } });
    expect(before.json.docs).toMatchObject({ api: `http://${IN_PROCESS_HOST}/docs/api.md`, settings: `http://${IN_PROCESS_HOST}/docs/settings.md` });
    expect((await call(s.app, 'GET', '/', { headers: { accept: '*/*' } })).json.service).toBe('wmark');

    const { video } = await ingestOverHttp(s.app, s.v2, await flat('446688', 4), 'home-clip');
    await call(s.app, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: video.key, settings: [{ content: 'home' }], containers: ['m3u8'] } });
    const after = await call(s.app, 'GET', '/', { headers: { accept: 'application/json' } });
    expect(after.json.status).toMatchObject({ videos: 1, ingested: 1, watermarks: 1 });
  });

  it('answers a browser with an HTML page: version, status and working links to the docs', async () => {
    const r = await call(s.app, 'GET', '/', { headers: { accept: BROWSER_ACCEPT } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('vary')).toBe('Accept');
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(r.text).toContain(`<title>wmark ${VERSION}</title>`);
    expect(r.text).toMatch(/<dt>Videos<\/dt><dd>\d+ \(\d+ ingested\)<\/dd>/);
    const links = [...r.text.matchAll(/href="([^"]+\.md)"/g)].map((m) => m[1]!);
    expect(links).toEqual(expect.arrayContaining([`http://${IN_PROCESS_HOST}/docs/api.md`, `http://${IN_PROCESS_HOST}/docs/settings.md`]));
    for (const link of links) {
      const doc = await call(s.app, 'GET', link);
      expect(doc.status, link).toBe(200);
      expect(doc.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(doc.text).toBe(readFileSync(path.join(REPO, 'docs', path.basename(link)), 'utf8'));
    }
    expect((await call(s.app, 'HEAD', '/', { headers: { accept: BROWSER_ACCEPT } })).body.length).toBe(0);
  });

  it('tells a browser from a JSON client by Accept', () => {
    expect(prefersHtml(BROWSER_ACCEPT)).toBe(true);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('application/json, text/plain, */*')).toBe(false);
    expect(prefersHtml(undefined)).toBe(false);
  });
});

describe('the files around the pages', () => {
  it('serves the icon at /favicon.ico and beside the player', async () => {
    for (const route of ['/favicon.ico', '/player/assets/favicon.svg']) {
      const r = await call(s.app, 'GET', route);
      expect(r.status, route).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/svg+xml');
      expect(r.text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it('serves the doc pictures and refuses anything else under /docs', async () => {
    const png = await call(s.app, 'GET', '/docs/img/corners.png');
    expect(png.status).toBe(200);
    expect(png.body.subarray(1, 4).toString('latin1')).toBe('PNG');
    expectError(await call(s.app, 'GET', '/docs/nope.md'), 404, 'NOT_FOUND');
    expectError(await call(s.app, 'GET', '/docs/api.ts'), 404, 'NOT_FOUND');
    expectError(await call(s.app, 'GET', '/docs/%2e%2e%2fpackage.json'), 400, 'BAD_PATH');
  });

  it("the player page allows hls.js's worker from its own assets (no blob:) and links its icon", async () => {
    const url = signPlayerUrl(engine.secret, `http://${IN_PROCESS_HOST}/player/2.0/?sourceUrl=x`, Date.now() + 60_000);
    const r = await call(s.app, 'GET', url);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toMatch(/(^|; )worker-src 'self'(;|$)/);
    expect(r.headers.get('content-security-policy')).not.toMatch(/worker-src[^;]*blob:/);
    expect(r.text).toContain('href="../assets/favicon.svg"');
  });
});
