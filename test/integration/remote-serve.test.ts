// Remote mode end to end: the in-process CLI against a real `wmark serve` on a free loopback port (auth, ingest, templates, watermark in 1.0 and 2.0, batch, poll).
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { createCredential, type IssuedCredential } from '../../src/engine/app/credentials.js';
import { serverService } from '../../src/engine/app/server-service.js';
import { type RunningServer, startServer } from '../../src/server/app/node-server.js';

let engine: TestEngine;
let server: RunningServer;
let cred: IssuedCredential;
let root: string;
let configDir: string;
let cwd: string;
let source: string;
let templateId: string;
/** Every request the service saw: which credentials came with it. */
const seen: { method: string; path: string; bearer: boolean; apiKey: boolean; clientId: boolean }[] = [];
const lastPost = (p: string) => [...seen].reverse().find((r) => r.method === 'POST' && r.path === p);

const credentialsFile = () => path.join(configDir, 'credentials.json');

/** The CLI with an isolated config dir and cwd; CI=1 and NO_COLOR=1 come from runCli. */
function cli(argv: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(argv, { cwd, env: { WMARK_CONFIG_DIR: configDir, ...env } });
}

const keyEnv = () => ({ WMARK_CLIENT_ID: cred.clientId, WMARK_API_KEY: cred.apiKey });
const pathOf = (href: string) => new URL(href).pathname;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wmark-remote-')));
  configDir = path.join(root, 'config');
  cwd = path.join(root, 'cwd');
  for (const d of [configDir, cwd]) rmSync(d, { recursive: true, force: true });
  const { mkdirSync } = await import('node:fs');
  mkdirSync(configDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  source = await flat('2a4d6f', 4);
  engine = await testEngine({ workers: 2 });
  server = await startServer({ service: serverService(engine, { host: '127.0.0.1' }), host: '127.0.0.1', port: 0, tokenTtlSeconds: 3600 });
  cred = await createCredential(engine, 'remote test');
  server.server.prependListener('request', (req) => {
    seen.push({
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0]!,
      bearer: /^Bearer /.test(req.headers.authorization ?? ''),
      apiKey: Boolean(req.headers['x-api-key']),
      clientId: Boolean(req.headers['x-api-client-id']),
    });
  });
});

afterAll(async () => {
  await server?.close();
  await engine?.dispose();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('remote mode against a real wmark serve', () => {
  it('auth login without credentials and without a TTY is exit 4 naming the flags and variables', async () => {
    const r = await cli(['auth', 'login', '--remote', server.url]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('--client-id');
    expect(r.stderr).toContain('WMARK_CLIENT_ID');
    expect(r.stderr).toContain('--api-key');
    expect(r.stderr).toContain('WMARK_API_KEY');
    expect(existsSync(credentialsFile())).toBe(false);
  });

  it('auth login with a wrong key is exit 4 with the service message', async () => {
    const r = await cli(['auth', 'login', '--remote', server.url, '--client-id', cred.clientId, '--api-key', 'wrong']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('HTTP 401');
    // "wrong" is no wmark key at all, and the service says so.
    expect(r.stderr).toContain('x-api-key is not a wmark API key');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('auth login stores token, expiry and base URL in a 0600 file, without the API key', async () => {
    const r = await cli(['--json', 'auth', 'login', '--remote', `${server.url}/`, '--client-id', cred.clientId, '--api-key', cred.apiKey]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out).toMatchObject({ baseUrl: server.url, clientId: cred.clientId, api: '2.0', apiKeySaved: false });
    expect(out.expiresAt).toBeGreaterThan(Date.now() + 3000_000);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    const text = readFileSync(credentialsFile(), 'utf8');
    expect(text).not.toContain(cred.apiKey);
    const stored = JSON.parse(text);
    expect(stored.current).toBe(server.url);
    expect(stored.services[server.url]).toMatchObject({ baseUrl: server.url, clientId: cred.clientId, token: expect.stringMatching(/^ey/) });
    expect(r.stdout).not.toContain(stored.services[server.url].token);
  });

  it('auth status shows who, where and until when, never the token or key', async () => {
    const token = JSON.parse(readFileSync(credentialsFile(), 'utf8')).services[server.url].token as string;
    const human = await cli(['auth', 'status']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(server.url);
    expect(human.stdout).toContain(cred.clientId);
    expect(human.stdout).toMatch(/valid until \d{4}-/);
    const json = await cli(['--json', 'auth', 'status']);
    expect(json.json()).toMatchObject({ baseUrl: server.url, clientId: cred.clientId, token: { source: 'store', expired: false }, apiKey: 'none', api: '2.0' });
    for (const r of [human, json]) {
      expect(r.stdout + r.stderr).not.toContain(token);
      expect(r.stdout + r.stderr).not.toContain(cred.apiKey);
    }
  });

  it('ingest --remote registers the video and waits until it is ingested', async () => {
    const r = await cli(['--json', 'ingest', path.relative(cwd, source), '--key', 'movie-1', '--remote', '--interval', '200ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ key: 'movie-1', status: 'INGESTED', sourceUrl: source });
  });

  it('ingest --remote <path>: a value after --remote that is not a URL is the source, and the default service is used', async () => {
    const r = await cli(['--json', 'ingest', '--remote', path.relative(cwd, source), '--key', 'movie-1-again', '--interval', '200ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ key: 'movie-1-again', status: 'INGESTED', sourceUrl: source });
    const bad = await cli(['--json', 'watermark', '--remote', 'not-a-url', '--key', 'movie-1', '--text', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: 'BAD_REMOTE', message: '--remote: expected an http(s) URL, got "not-a-url"' });
  });

  it('template create/show/list --remote use the /templates routes', async () => {
    const file = path.join(cwd, 'tpl.json');
    writeFileSync(file, JSON.stringify({ name: 'viewer', settings: [{ content: 'for %name%', x: 0.1, y: 0.1, align: 'LEFT', verticalAlign: 'TOP' }] }));
    const created = await cli(['--json', 'template', 'create', 'tpl.json', '--remote', server.url]);
    expect(created.code, created.stderr).toBe(0);
    templateId = created.json().id;
    expect(created.json()).toMatchObject({ name: 'viewer', placeholders: ['name'] });
    const shown = await cli(['template', 'show', templateId, '--remote']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('placeholders  name');
    const list = await cli(['--json', 'template', 'list', '--remote']);
    expect(list.json().map((t: { id: string }) => t.id)).toContain(templateId);
    const missing = await cli(['template', 'show', 'no-such-template', '--remote']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('HTTP 404 Not Found (TEMPLATE_NOT_FOUND)');
  });

  describe('watermark --remote, every input form, in 1.0 (Bearer token) and 2.0 (API key headers)', () => {
    const settingsFile = () => {
      const file = path.join(cwd, 'settings.json');
      writeFileSync(file, JSON.stringify([{ content: 'from a file', x: 0.9, y: 0.9, align: 'RIGHT', verticalAlign: 'BOTTOM', fontColor: '#ffcc00' }]));
      return 'settings.json';
    };
    const forms: [string, () => string[], (w: any) => void][] = [
      [
        'flags',
        () => ['--text', 'alice@example.com', '--x', '0.2', '--font-size', '0.06'],
        (w) => expect(w.settings[0]).toMatchObject({ content: 'alice@example.com', x: 0.2, fontSize: 0.06 }),
      ],
      ['--settings', () => ['--settings', settingsFile()], (w) => expect(w.settings[0]).toMatchObject({ content: 'from a file', fontColor: 'FFCC00' })],
      ['--template + --map', () => ['--template', templateId, '--map', 'name=Bob'], (w) => expect(w.settings[0]).toMatchObject({ content: 'for Bob' })],
      ['--containers', () => ['--text', 'only hls', '--containers', 'm3u8'], (w) => expect(w.containers).toEqual(['m3u8'])],
      ['--expiration', () => ['--text', 'expiring', '--expiration', '7d'], (w) => expect(w.expiration).toBeGreaterThan(Date.now() + 6 * 86400_000)],
    ];

    for (const [name, args, check] of forms) {
      it(`${name}: 1.0 with --wait polls until READY, 2.0 returns READY`, async () => {
        const one = await cli(['--json', 'watermark', '--remote', '--api', '1.0', '--key', 'movie-1', '--wait', '--interval', '300ms', ...args()]);
        expect(one.code, one.stderr).toBe(0);
        const w1 = one.json();
        expect(w1.status).toBe('READY');
        expect(w1.containers.m3u8).toMatch(/\/1\.0\/watermark\/.+\/video\.m3u8\?expiration=\d+&signature=/);
        expect(w1.containers.iframe).toContain('<iframe');
        expect(lastPost('/1.0/watermark')).toMatchObject({ bearer: true, apiKey: false });
        const record = (await engine.store.getWatermark(w1.id))!;
        check(record);

        const two = await cli(['--json', 'watermark', '--remote', server.url, '--api', '2.0', '--key', 'movie-1', ...args()], keyEnv());
        expect(two.code, two.stderr).toBe(0);
        const w2 = two.json();
        expect(w2).toMatchObject({ status: 'READY', id: w1.id });
        expect(w2.containers).not.toHaveProperty('iframe');
        expect(w2.href).toMatch(/\/2\.0\/watermark\//);
        expect(lastPost('/2.0/watermark')).toMatchObject({ bearer: false, apiKey: true, clientId: true });
      });
    }

    it('human output shows the status and the URLs', async () => {
      const r = await cli(['watermark', '--remote', '--key', 'movie-1', '--text', 'alice@example.com', '--x', '0.2', '--font-size', '0.06']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/READY/);
      expect(r.stdout).toMatch(/player\s+http:\/\/127\.0\.0\.1:\d+\/player\/2\.0\//);
      expect(r.stdout).toMatch(/playlist\s+http.*video\.m3u8/);
      // No API key at hand (no env, none saved): 2.0 falls back to the stored Bearer token, which wmark serve accepts.
      expect(lastPost('/2.0/watermark')).toMatchObject({ bearer: true, apiKey: false });
    });
  });

  it('the same watermark twice returns the same href (same watermark, freshly signed)', async () => {
    const args = ['--json', 'watermark', '--remote', '--key', 'movie-1', '--text', 'same twice'];
    const a = await cli([...args, '--api', '1.0']);
    const b = await cli([...args, '--api', '1.0']);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(pathOf(b.json().href)).toBe(pathOf(a.json().href));
    const c = await cli([...args, '--api', '2.0'], keyEnv());
    const d = await cli([...args, '--api', '2.0'], keyEnv());
    expect(pathOf(d.json().href)).toBe(pathOf(c.json().href));
    expect(d.json().id).toBe(a.json().id);
  });

  it('a batch of 3 runs concurrently and streams one NDJSON line per row', async () => {
    writeFileSync(path.join(cwd, 'viewers.csv'), 'name\nAnn\nBen\n"Cy, Jr."\n');
    const r = await cli(
      ['--json', 'watermark', '--remote', '--key', 'movie-1', '--template', templateId, '--batch', 'viewers.csv', '--concurrency', '2'],
      keyEnv(),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.lines();
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.mappings.name).sort()).toEqual(['Ann', 'Ben', 'Cy, Jr.']);
    for (const l of lines) expect(l).toMatchObject({ status: 'READY', line: expect.any(Number), containers: { m3u8: expect.stringContaining('video.m3u8') } });
    expect(new Set(lines.map((l) => l.id)).size).toBe(3);
  });

  it('poll follows a 1.0 long-poll href to READY', async () => {
    const created = await cli(['--json', 'watermark', '--remote', '--api', '1.0', '--key', 'movie-1', '--text', 'polled viewer']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json().status).toBe('PENDING');
    const href = created.json().href as string;
    const human = await cli(['poll', href, '--interval', '250ms', '--timeout', '60s']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/READY/);
    expect(human.stdout).toContain('video.m3u8');
    const json = await cli(['--json', 'poll', href]);
    expect(json.json()).toMatchObject({ status: 'READY', containers: { m3u8: expect.any(String) } });
    expect(json.json()).not.toHaveProperty('href');
  });

  it('WMARK_API_URL and WMARK_TOKEN are enough, without a stored login', async () => {
    const token = JSON.parse(readFileSync(credentialsFile(), 'utf8')).services[server.url].token as string;
    const r = await runCli(['--json', 'watermark', '--remote', '--api', '1.0', '--key', 'movie-1', '--text', 'same twice'], {
      cwd,
      env: { WMARK_CONFIG_DIR: path.join(root, 'empty-config'), WMARK_API_URL: server.url, WMARK_TOKEN: token },
    });
    expect(r.code, r.stderr).toBe(0);
    const bad = await runCli(['watermark', '--remote', '--api', '1.0', '--key', 'movie-1', '--text', 'x'], {
      cwd,
      env: { WMARK_CONFIG_DIR: path.join(root, 'empty-config'), WMARK_API_URL: server.url, WMARK_TOKEN: 'not-a-token' },
    });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('HTTP 401 Unauthorized (TOKEN_INVALID): invalid access token');
  });

  it('a validation error from the service is shown as sent, with its status, exit 2', async () => {
    const r = await cli(['--json', 'watermark', '--remote', '--key', 'no-such-video', '--text', 'x']);
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'VIDEO_NOT_FOUND', message: expect.stringContaining('HTTP 404') });
  });

  it('auth logout removes the stored token; status is then exit 4', async () => {
    const r = await cli(['auth', 'logout']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`logged out of ${server.url}`);
    expect(existsSync(credentialsFile())).toBe(false);
    const status = await cli(['auth', 'status']);
    expect(status.code).toBe(4);
    const again = await cli(['watermark', '--remote', server.url, '--api', '1.0', '--key', 'movie-1', '--text', 'x']);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('not logged in');
  });
});
