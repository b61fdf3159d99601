// The links a server hands out name --public-url, else where it listens (a wildcard bind: loopback), and never a host
// a request chose: a forged Host or X-Forwarded-Host on the 1.0, 0.1 and 2.0 create routes, the status links, the
// player page and the index page leaves no trace in any answer. Over real sockets, in-process, and from `wmark serve`.
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestVideo, type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import {
  bearer,
  freePort,
  keyHeaders,
  rawRequest,
  serveEngine,
  serveInProcess,
  spawnServe,
  type Target,
  type TestApp,
  type TestServer,
  waitFor,
} from '../../harness/serve-helpers.js';
import { serverService } from '../../src/engine/app/server-service.js';
import { type RunningServer, startServer } from '../../src/server/app/node-server.js';

const KEY = 'links-clip';
const FORGED = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https', forwarded: 'host=attacker.example' };
const URLS = /https?:\/\/[^"\s\\<>]+/g;

let engine: TestEngine;
let plain: TestServer;
let proxied: TestServer;
let inProcess: TestApp;

beforeAll(async () => {
  engine = await testEngine();
  await ingestVideo(engine, { source: await flat('336699', 4), key: KEY });
  plain = await serveEngine(engine);
  proxied = await serveEngine(engine, { publicUrl: 'https://videos.example.com/wm' });
  inProcess = await serveInProcess(engine);
});

afterAll(async () => {
  await plain?.close();
  await proxied?.close();
  await inProcess?.close();
  await engine?.dispose();
});

interface Answer {
  what: string;
  status: number;
  text: string;
}

/** Every route that hands out links, each asked with forged host headers; the answers' text. */
async function askEverything(target: Target, creds: { v1: Record<string, string>; v2: Record<string, string> }, content: string): Promise<Answer[]> {
  const ask = async (what: string, method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> => {
    const path = url.startsWith('http') ? url.slice(new URL(url).origin.length) : url;
    const json = body === undefined ? undefined : JSON.stringify(body);
    const r = await rawRequest(target, path, {
      method,
      headers: { ...headers, ...FORGED, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json,
    });
    return { what, status: r.status, text: r.text };
  };
  const settings = (version: string) => [{ content: `${content} ${version}` }];
  const v2 = await ask('POST /2.0/watermark', 'POST', '/2.0/watermark', creds.v2, { key: KEY, settings: settings('2.0'), containers: ['m3u8'] });
  const v1 = await ask('POST /1.0/watermark', 'POST', '/1.0/watermark', creds.v1, { key: KEY, settings: settings('1.0') });
  const v01 = await ask('POST /watermark (0.1)', 'POST', '/watermark', creds.v1, { key: KEY, settings: settings('0.1') });
  // Links under a public URL with a path are asked for without it, as the proxy in front strips it.
  const local = (link: string) => link.replace('https://videos.example.com/wm', '');
  const [b2, b1, b01] = [v2, v1, v01].map((a) => JSON.parse(a.text));
  const polled = [
    await ask('GET 2.0 href', 'GET', local(b2.href), {}),
    await ask('GET 1.0 href', 'GET', local(b1.href), {}),
    await ask('GET 0.1 href', 'GET', local(b01.href), {}),
  ];
  const player = await ask('GET player page', 'GET', local(b2.containers.href), {});
  const home = await ask('GET / (JSON)', 'GET', '/', { accept: 'application/json' });
  const homePage = await ask('GET / (HTML)', 'GET', '/', { accept: 'text/html' });
  return [v2, v1, v01, ...polled, player, home, homePage];
}

function expectLinksOn(answers: Answer[], base: string): void {
  let links = 0;
  for (const a of answers) {
    expect(a.status, `${a.what}: ${a.text}`).toBeLessThan(300);
    expect(a.text, a.what).not.toContain('attacker.example');
    for (const url of a.text.match(URLS) ?? []) {
      expect(url.startsWith(`${base}/`), `${a.what}: ${url}`).toBe(true);
      links++;
    }
  }
  expect(links).toBeGreaterThan(20);
}

describe('links never take their host from the request', () => {
  it('without --public-url: the address the server listens on', async () => {
    const answers = await askEverything(plain.url, plain, 'no public url');
    expectLinksOn(answers, plain.url);
    expect(plain.linkBase).toBe(plain.url);
  });

  it('with --public-url: that URL, its path included', async () => {
    expectLinksOn(await askEverything(proxied.url, proxied, 'public url'), 'https://videos.example.com/wm');
  });

  it('in-process (no socket): the base the app was made with', async () => {
    expectLinksOn(await askEverything(inProcess.app, inProcess, 'in process'), inProcess.url);
  });

  it('bound to every interface: loopback, the address that surely reaches it from this machine', async () => {
    let wide: RunningServer | undefined;
    try {
      wide = await startServer({ service: serverService(engine, { host: '0.0.0.0' }), host: '0.0.0.0', port: 0, tokenTtlSeconds: 600 });
      const port = new URL(wide.url).port;
      expect(wide.url).toBe(`http://0.0.0.0:${port}`);
      expect(wide.linkBase).toBe(`http://127.0.0.1:${port}`);
      const r = await rawRequest(`http://127.0.0.1:${port}`, '/2.0/watermark', {
        method: 'POST',
        headers: { ...keyHeaders(plain.cred), ...FORGED, 'content-type': 'application/json' },
        body: JSON.stringify({ key: KEY, settings: [{ content: 'wildcard' }], containers: ['m3u8'] }),
      });
      expect(r.status, r.text).toBe(201);
      const urls = r.text.match(URLS)!;
      expect(urls.length).toBeGreaterThan(2);
      for (const url of urls) expect(url.startsWith(`http://127.0.0.1:${port}/`), url).toBe(true);
    } finally {
      await wide?.close();
    }
  });
});

describe('wmark serve', () => {
  it('bound to every interface without --public-url says once that other machines need it, names loopback in its links and serve.json', async () => {
    const dir = tempDir('serve-links');
    const port = await freePort();
    const serve = spawnServe(dir, ['--host', '0.0.0.0', '--port', String(port)]);
    try {
      expect(await serve.url).toBe(`http://0.0.0.0:${port}`);
      const said = await waitFor(() => (/clients on other machines need --public-url/.test(serve.stderr()) ? serve.stderr() : undefined), 'the note');
      expect(said.match(/need --public-url/g)).toHaveLength(1);
      expect(said).toContain(`links name http://127.0.0.1:${port}, which only this machine reaches`);
      const record = JSON.parse(readFileSync(`${dir}/serve.json`, 'utf8'));
      expect(record).toMatchObject({ url: `http://0.0.0.0:${port}`, baseUrl: `http://127.0.0.1:${port}` });
      const creds = { clientId: /client id:\s+(wmc_\S+)/.exec(said)![1]!, apiKey: /API key:\s+(wmk_\S+)/.exec(said)![1]! };
      const token = JSON.parse((await rawRequest(`http://127.0.0.1:${port}`, '/1.0/authenticate/accessToken', { headers: keyHeaders(creds) })).text).token;
      const me = await rawRequest(`http://127.0.0.1:${port}`, '/', { headers: { ...bearer(token), ...FORGED, accept: 'application/json' } });
      expect(me.text).not.toContain('attacker.example');
      for (const url of me.text.match(URLS)!) expect(url.startsWith(`http://127.0.0.1:${port}/`), url).toBe(true);
    } finally {
      serve.kill('SIGTERM');
      await serve.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with --public-url says nothing of it', async () => {
    const dir = tempDir('serve-links');
    const serve = spawnServe(dir, ['--host', '0.0.0.0', '--port', String(await freePort()), '--public-url', 'https://videos.example.com']);
    try {
      await serve.url;
      await waitFor(() => (/API key:/.test(serve.stderr()) ? true : undefined), 'the first key');
      expect(serve.stderr()).not.toMatch(/--public-url/);
    } finally {
      serve.kill('SIGTERM');
      await serve.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
