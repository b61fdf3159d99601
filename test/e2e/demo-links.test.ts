// What `wmark demo` leaves a newcomer: links that play again when its advice is followed (whatever port it served on,
// 8080 taken or not), an API key printed once, and, while it serves, a record of where, so other commands link to it.
// And a wmark that npm started (npx wmark serve) stops when npm is stopped.
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runWmark, type Sandbox, sandbox, startWmark, until } from '../../harness/cli-helpers.js';
import { startProcess } from '../../harness/start-process.js';

let box: Sandbox;
let env: Record<string, string>;
let holder: net.Server;
let heldPort: number;
let demo: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  box = sandbox('demo-links');
  env = { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir };
  // The port the demo is told to use is taken, as 8080 often is.
  holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  heldPort = (holder.address() as net.AddressInfo).port;
  demo = await runWmark(['demo', '--port', String(heldPort), '--no-keep-serving'], { env, cwd: box.cwd });
  expect(demo.code, demo.stderr).toBe(0);
}, 300_000);

afterAll(() => {
  holder?.close();
  box?.dispose();
});

const line = (label: string) => new RegExp(`^${label} +(\\S+)`, 'm').exec(demo.stdout)?.[1];

/** GETs a playlist and its first segment: what a player does first. */
async function plays(playlistUrl: string): Promise<void> {
  const playlist = await fetch(playlistUrl);
  expect(playlist.status, playlistUrl).toBe(200);
  const text = await playlist.text();
  expect(text).toContain('#EXTM3U');
  const first = text.split('\n').find((l) => l && !l.startsWith('#'))!;
  const segment = await fetch(new URL(first, playlistUrl));
  expect(segment.status).toBe(200);
  expect(segment.headers.get('content-type')).toBe('video/mp2t');
  const bytes = Buffer.from(await segment.arrayBuffer());
  // MPEG-TS packets start with the sync byte 0x47 every 188 bytes.
  expect(bytes.length).toBeGreaterThan(188 * 10);
  expect([bytes[0], bytes[188], bytes[376]]).toEqual([0x47, 0x47, 0x47]);
}

describe('wmark demo on a taken port', () => {
  it('says it serves elsewhere, prints an API key once, and names the port its links need', () => {
    const port = new URL(line('service')!).port;
    expect(port).not.toBe(String(heldPort));
    expect(demo.stderr).toContain(`port ${heldPort} is in use, so the demo serves on port ${port}: its links name that port`);
    expect(demo.stderr).toMatch(
      /No API credentials existed, so one pair was created\. It is shown only this once:\n {2}client id: wmc_\w+\n {2}API key: {3}wmk_\S+/,
    );
    expect(demo.stdout).toContain(`\`wmark serve --port ${port}\` plays these links again`);
    expect(line('playlist')!.startsWith(`http://127.0.0.1:${port}/`)).toBe(true);
    // Nothing listens once it is done, and it left no record of a serve.
    expect(existsSync(path.join(box.dataDir, 'serve.json'))).toBe(false);
  });

  it('following its advice plays the links again; the key it printed opens the API; watermark view gives fresh links', async () => {
    const advice = /`(wmark serve --port \d+)`/.exec(demo.stdout)![1]!;
    const serve = startWmark(advice.split(' ').slice(1), { env, cwd: box.cwd });
    try {
      const url = await until(() => /^(http:\/\/\S+)$/m.exec(serve.stdout())?.[1], 'serve to print its URL', 60_000);
      expect(url).toBe(line('service'));
      // The demo printed the first key: this serve has one already and prints none.
      expect(serve.stderr()).not.toContain('No API credentials existed');
      await plays(line('playlist')!);

      const clientId = /client id: (wmc_\w+)/.exec(demo.stderr)![1]!;
      const apiKey = /API key: {3}(wmk_\S+)/.exec(demo.stderr)![1]!;
      const token = await fetch(`${url}/1.0/authenticate/accessToken`, { headers: { 'x-api-client-id': clientId, 'x-api-key': apiKey } });
      expect(token.status).toBe(200);
      expect(((await token.json()) as { token: string }).token).toMatch(/^ey/);

      const fresh = /`(wmark watermark view \w+)`/.exec(demo.stdout)![1]!;
      const view = await runWmark(['--json', ...fresh.split(' ').slice(1)], { env, cwd: box.cwd });
      expect(view.code, view.stderr).toBe(0);
      const m3u8 = (JSON.parse(view.stdout) as { containers: { m3u8: string } }).containers.m3u8;
      expect(m3u8.startsWith(`${url}/`)).toBe(true);
      await plays(m3u8);
    } finally {
      serve.child.kill('SIGINT');
    }
    expect((await serve.done).code).toBe(0);
  });

  it('while it keeps serving, it records where, so other commands link to it; Ctrl-C removes the record', async () => {
    const kept = startWmark(['--json', 'demo', '--port', '0', '--keep-serving'], { env, cwd: box.cwd });
    try {
      const summary = await until(
        () => {
          try {
            return JSON.parse(kept.stdout()) as { server: string; ready: { id: string }; serveAgain: string; freshLinks: string };
          } catch {
            return undefined;
          }
        },
        'the demo to print its summary',
        240_000,
      );
      expect(summary.serveAgain).toBe(`wmark serve --port ${new URL(summary.server).port}`);
      expect(summary.freshLinks).toBe(`wmark watermark view ${summary.ready.id}`);
      const record = JSON.parse(readFileSync(path.join(box.dataDir, 'serve.json'), 'utf8')) as { url: string; pid: number; startedOn: number };
      expect(record).toMatchObject({ url: summary.server, pid: kept.child.pid });
      expect(typeof record.startedOn).toBe('number');
      const view = await runWmark(['--json', 'watermark', 'view', summary.ready.id], { env, cwd: box.cwd });
      const m3u8 = (JSON.parse(view.stdout) as { containers: { m3u8: string } }).containers.m3u8;
      expect(m3u8.startsWith(`${summary.server}/`)).toBe(true);
      await plays(m3u8);
    } finally {
      kept.child.kill('SIGINT');
    }
    expect((await kept.done).code).toBe(0);
    expect(existsSync(path.join(box.dataDir, 'serve.json'))).toBe(false);
  });
});

describe('started by npm', () => {
  it('a serve under npm (npm -> sh -c -> wmark) stops, cleanly, when npm is stopped', async () => {
    // What `npx wmark serve` makes: npm runs the bin through a shell and passes SIGTERM to the shell only, which does
    // not pass it on. This launcher does the same, with the variable npm sets for what it runs.
    const launcher = startProcess({
      name: 'the npm-like launcher',
      command: process.execPath,
      args: [
        '-e',
        `const c = require('child_process').spawn('sh', ['-c', ${JSON.stringify(`"${process.execPath}" "${BIN}" serve --port 0`)}], { stdio: 'inherit', env: { ...process.env, npm_lifecycle_event: 'npx' } });
         process.on('SIGTERM', () => { c.kill('SIGTERM'); process.exit(143); });`,
      ],
      env: { PATH: process.env.PATH!, HOME: box.root, CI: '1', NO_COLOR: '1', ...env },
      cwd: box.cwd,
      ready: { line: /^http:\/\/\S+$/, stream: 'either', what: 'serve to print its URL' },
      timeoutMs: 60_000,
    });
    await launcher.ready;
    const record = JSON.parse(readFileSync(path.join(box.dataDir, 'serve.json'), 'utf8')) as { pid: number };
    launcher.proc.kill('SIGTERM');
    const alive = () => {
      try {
        process.kill(record.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), 'the serve to stop with its launcher', 15_000, 100);
    // It stopped as on Ctrl-C: requests finished, the record of where it served removed.
    expect(existsSync(path.join(box.dataDir, 'serve.json'))).toBe(false);
    await until(() => /shutting down: requests in flight get \d+ s/.test(launcher.output()), 'its shutdown message', 5_000);
  });
});
