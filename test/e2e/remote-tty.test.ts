// Remote mode at a real terminal: the built CLI under a pty (script(1)) prompts for credentials with the key masked, and poll shows a spinner with elapsed time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, onPty } from '../../harness/cli-helpers.js';

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

let dir: string;
let server: http.Server | undefined;
const seen: http.IncomingHttpHeaders[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-tty-'));
  seen.length = 0;
});
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function serve(handler: http.RequestListener): Promise<string> {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    handler(req, res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Runs `wmark <args>` on a 100x40 pty with CI unset; `answers` are typed when their prompt text shows up. */
function onTerminal(args: string[], answers: [RegExp, string][] = []): Promise<{ code: number | null; output: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', NO_COLOR: '1', WMARK_CONFIG_DIR: dir };
  const typed = answers.map(([prompt, answer]): [RegExp, string] => [prompt, `${answer}\r`]);
  return onPty(`exec ${quoted}`, typed, { env, cwd: process.cwd(), timeoutMs: 20_000 });
}

describe.skipIf(!HAS_SCRIPT)('remote mode on a terminal', () => {
  it('auth login prompts for the client id and the API key (masked), then stores a 0600 token file without the key', async () => {
    const url = await serve((req, res) => {
      res.writeHead(req.url === '/1.0/authenticate/accessToken' ? 200 : 404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ token: 'tok-tty', expiresIn: 600 }));
    });
    const r = await onTerminal(
      ['auth', 'login', '--remote', url, '--api', '1.0'],
      [
        [/Client id/, 'tty-client'],
        [/API key/, 'tty-secret-key'],
      ],
    );
    expect(r.code, r.output).toBe(0);
    expect(seen.find((h) => h['x-api-key'])).toMatchObject({ 'x-api-client-id': 'tty-client', 'x-api-key': 'tty-secret-key' });
    expect(r.output).toContain('**************');
    expect(r.output).not.toContain('tty-secret-key');
    expect(r.output).toContain(`logged in to ${url} as tty-client`);
    const file = path.join(dir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('tty-secret-key');
  });

  it('poll shows a spinner with the status and elapsed time, then the final state', async () => {
    let polls = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(++polls < 5 ? { status: 'PENDING' } : { status: 'READY', containers: { href: 'http://p/player', m3u8: 'http://p/v.m3u8' } }));
    });
    const r = await onTerminal(['poll', `${url}/1.0/watermark/v/h?expiration=1&signature=s`, '--interval', '400ms']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.output).toMatch(/watermark: PENDING {2}1\.\d s/);
    expect(r.output).toContain('playlist  http://p/v.m3u8');
  });
});
