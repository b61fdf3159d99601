// The API from a browser page on another origin (README.md, "Security model"): headless Chromium runs fetch() with the
// headers the reference JS SDK sends (x-api-key / x-api-secret, JSON bodies, then a Bearer token), through real CORS
// preflights.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type OpenedPage, openPage } from '../../harness/browser.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { serveEngine, type TestServer } from '../../harness/serve-helpers.js';

let engine: TestEngine;
let s: TestServer;
let site: Server;
let siteUrl: string;
let browser: Browser;
let opened: OpenedPage;

beforeAll(async () => {
  engine = await testEngine();
  s = await serveEngine(engine);
  site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>sdk page</title><p>another origin'));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
  opened = await openPage(browser);
});
afterAll(async () => {
  await opened?.close();
  await browser?.close();
  await new Promise((r) => site?.close(r));
  await s?.close();
  await engine?.dispose();
});

describe('API calls from a page on another origin', () => {
  it('pass the preflight with the SDK headers and can read answers and errors', async () => {
    await opened.page.goto(siteUrl);
    const result = await opened.page.evaluate(
      async ({ api, key, secret }) => {
        const sdk = { 'x-api-key': key, 'x-api-secret': secret };
        const out: Record<string, unknown> = { origin: location.origin };
        const list = await fetch(`${api}/2.0/videos`, { headers: sdk });
        out.list = { status: list.status, body: await list.json() };
        const created = await fetch(`${api}/2.0/videos`, {
          method: 'POST',
          headers: { ...sdk, 'content-type': 'application/json' },
          body: JSON.stringify({ sourceUrl: '/nonexistent/clip.mp4' }),
        });
        out.create = { status: created.status, body: await created.json() };
        const token = await fetch(`${api}/1.0/authenticate/accessToken`, { headers: sdk });
        const { token: bearer } = await token.json();
        const me = await fetch(`${api}/1.0/`, { headers: { authorization: `Bearer ${bearer}` } });
        out.me = { status: me.status, body: await me.json() };
        try {
          await fetch(`${api}/2.0/videos`, { headers: { ...sdk, 'x-not-allowed': '1' } });
          out.unlisted = 'passed';
        } catch (error) {
          out.unlisted = String(error);
        }
        return out;
      },
      { api: s.url, key: s.cred.clientId, secret: s.cred.apiKey },
    );
    expect(result.origin).not.toBe(new URL(s.url).origin);
    expect(result.list).toEqual({ status: 200, body: [] });
    expect(result.create).toMatchObject({ status: 422, body: { code: 'SOURCE_NOT_FOUND' } });
    expect(result.me).toMatchObject({ status: 200, body: { service: 'wmark', client: s.cred.clientId } });
    // A header outside the allowed list fails the preflight: the browser, not the server, refuses it.
    expect(result.unlisted).toMatch(/TypeError|Failed to fetch/);
  });
});
