// The spawned binary on a newcomer's path: links follow the running `wmark serve`, and say so when nothing serves them.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, onPty, runWmark, type Sandbox, sandbox, startCommand, startWmark, until } from '../../harness/cli-helpers.js';
import { flat } from '../../harness/fixtures.js';

let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  box = sandbox('e2e-newcomer');
  env = { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir };
  const ingest = await wmark(['ingest', await flat('336699', 4), '--key', 'clip-1']);
  expect(ingest.code, ingest.stderr).toBe(0);
});

afterAll(() => box?.dispose());

const wmark = (args: string[], extraEnv: Record<string, string | undefined> = {}) => runWmark(args, { env: { ...env, ...extraEnv }, cwd: box.cwd });
const playerLink = (stdout: string) => /^ {2}player +(\S+)$/m.exec(stdout)?.[1];

describe('links point at the running service', () => {
  it('serve --port 0 records where it listens; watermark signs links for it; the record goes on a clean exit', async () => {
    const serve = startWmark(['serve', '--port', '0'], { env, cwd: box.cwd });
    try {
      const url = (await until(() => /^(http:\/\/\S+)$/m.exec(serve.stdout())?.[1], 'serve to print its URL', 30_000)).trim();
      expect(url).not.toBe('http://127.0.0.1:8080');
      const record = JSON.parse(readFileSync(path.join(box.dataDir, 'serve.json'), 'utf8')) as { url: string; baseUrl: string; pid: number };
      expect(record).toMatchObject({ url, baseUrl: url, pid: serve.child.pid });

      const r = await wmark(['watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8']);
      expect(r.code, r.stderr).toBe(0);
      const link = playerLink(r.stdout);
      expect(link?.startsWith(`${url}/`), r.stdout).toBe(true);
      // The link plays: the service it names answers it, signature and all.
      expect((await fetch(link!)).status).toBe(200);
      expect(r.stderr).not.toContain('nothing answers');

      // --public-url given on the command line still wins.
      const own = await wmark(['watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8', '--public-url', 'https://videos.example.com']);
      expect(playerLink(own.stdout)).toMatch(/^https:\/\/videos\.example\.com\//);
    } finally {
      serve.child.kill('SIGINT');
    }
    const done = await serve.done;
    expect(done.code, done.stderr).toBe(0);
    expect(existsSync(path.join(box.dataDir, 'serve.json'))).toBe(false);
  });

  it('bound to every interface (--host 0.0.0.0), the recorded link base is loopback', async () => {
    const serve = startWmark(['serve', '--port', '0', '--host', '0.0.0.0'], { env, cwd: box.cwd });
    try {
      const url = (await until(() => /^(http:\/\/\S+)$/m.exec(serve.stdout())?.[1], 'serve to print its URL', 30_000)).trim();
      const port = new URL(url).port;
      const record = JSON.parse(readFileSync(path.join(box.dataDir, 'serve.json'), 'utf8')) as { url: string; baseUrl: string };
      expect(record).toEqual(expect.objectContaining({ url, baseUrl: `http://127.0.0.1:${port}` }));
      const r = await wmark(['watermark', '--key', 'clip-1', '--text', 'for erin', '--containers', 'm3u8']);
      expect(playerLink(r.stdout)?.startsWith(`http://127.0.0.1:${port}/`)).toBe(true);
      expect(r.stderr).not.toContain('nothing answers');
    } finally {
      serve.child.kill('SIGINT');
    }
    expect((await serve.done).code).toBe(0);
  });

  it('a record left by a serve that died is ignored; with nothing answering, a warning names the address', async () => {
    const serve = startWmark(['serve', '--port', '0'], { env, cwd: box.cwd });
    await until(() => /^http:\/\/\S+$/m.test(serve.stdout()), 'serve to print its URL', 30_000);
    serve.child.kill('SIGKILL');
    await serve.done;
    expect(existsSync(path.join(box.dataDir, 'serve.json'))).toBe(true);

    // Port 9 (discard) has no HTTP service on a test machine.
    const r = await wmark(['watermark', '--key', 'clip-1', '--text', 'for bob', '--containers', 'm3u8'], { WMARK_PUBLIC_URL: 'http://127.0.0.1:9' });
    expect(r.code, r.stderr).toBe(0);
    expect(playerLink(r.stdout)).toMatch(/^http:\/\/127\.0\.0\.1:9\//);
    expect(r.stderr).toContain('warning: nothing answers at http://127.0.0.1:9, so these links will not play until a service runs there');
    // --json keeps stderr for errors: the links are data there.
    const json = await wmark(['--json', 'watermark', '--key', 'clip-1', '--text', 'for bob', '--containers', 'm3u8'], {
      WMARK_PUBLIC_URL: 'http://127.0.0.1:9',
    });
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
  });
});

describe('wmark completion', () => {
  const bash = (script: string) =>
    startCommand('bash', ['--norc', '--noprofile', '-c', script], { env: { PATH: process.env.PATH!, HOME: box.root, WMARK_BIN: BIN } }).done;
  // What bash does on TAB: set COMP_WORDS/COMP_CWORD, call the function, read COMPREPLY.
  const complete = (words: string[]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _wmark; echo "\${COMPREPLY[*]}"`;

  it('bash: sourcing the script registers wmark; subcommands, nested subcommands and flags complete', async () => {
    const r = await bash(
      [
        'source <(node "$WMARK_BIN" completion bash)',
        'complete -p wmark',
        'compgen -W "$(_wmark_subcommands \'\')" -- wa',
        complete(['wmark', '']),
        complete(['wmark', 'watermark', 'l']),
        complete(['wmark', 'auth', 'keys', 'r']),
        complete(['wmark', 'ingest', '--re']),
        complete(['wmark', '--data-dir', '/tmp/x', 'video', 'list', '--js']),
        complete(['wmark', 'completion', 'f']),
      ].join('\n'),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('complete -o default -F _wmark wmark');
    expect(lines[1]).toBe('watermark');
    expect(lines[2]!.split(' ')).toEqual(
      expect.arrayContaining(['ingest', 'video', 'template', 'watermark', 'serve', 'detect', 'auth', 'poll', 'doctor', 'demo', 'completion']),
    );
    expect(lines[2]).not.toContain('job');
    expect(lines[3]).toBe('list');
    expect(lines[4]).toBe('revoke');
    expect(lines[5]!.split(' ').sort()).toEqual(['--remote', '--replace']);
    expect(lines[6]).toBe('--json');
    expect(lines[7]).toBe('fish');
  });

  it('zsh and fish scripts are printed for their shells', async () => {
    const zsh = await wmark(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _wmark wmark');
    const fish = await wmark(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toMatch(/^complete -c wmark -n '__fish_use_subcommand' -a watermark -d /m);
    expect(fish.stdout).toMatch(/^complete -c wmark -n '__fish_seen_subcommand_from ingest' -l replace /m);
    const bad = await wmark(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.");
  });
});

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

/** Runs `wmark <args>` on a 100x40 pty (script(1)); each answer is typed when its prompt shows up. */
function onTerminal(args: string[], answers: [RegExp, string][], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return onPty(`exec ${quoted}`, answers, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', NO_COLOR: '1', ...env, ...extraEnv },
    cwd: box.cwd,
  });
}

describe.skipIf(!HAS_SCRIPT)('prompts at a terminal only', () => {
  it('wmark watermark with no arguments picks a video from the list and asks for the text', async () => {
    const second = await wmark(['ingest', await flat('669933', 4), '--key', 'clip-2']);
    expect(second.code, second.stderr).toBe(0);
    const r = await onTerminal(
      ['watermark', '--containers', 'm3u8'],
      [
        [/Which video\?/, '\u001b[B'],
        [/clip-2/, '\r'],
        [/Text to draw/, 'for dave\r'],
      ],
    );
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/Which video\?.*clip-2/s);
    expect(r.output).toContain('✔ Which video? clip-2');
    expect(r.output).toContain("✔ Text to draw (e.g. the viewer's email) for dave");
    expect(r.output).toMatch(/watermark \S+ +READY/);
    const list = JSON.parse((await wmark(['--json', 'watermark', 'list', '--key', 'clip-2'])).stdout) as { text: string }[];
    expect(list.map((w) => w.text)).toContain('for dave');
  });

  it('never with CI set or --json, even at a terminal: the usage error says what is missing', async () => {
    const ci = await onTerminal(['watermark'], [], { CI: '1' });
    expect(ci.code, ci.output).toBe(2);
    expect(ci.output).toContain('which video? give --key KEY or --video-id ID');
    expect(ci.output).not.toContain('Which video?');
    const json = await onTerminal(['--json', 'watermark'], []);
    expect(json.code, json.output).toBe(2);
    expect(json.output).toContain('"code":"VIDEO_REQUIRED"');
    expect(json.output).not.toContain('Which video?');
  });

  it('never without a terminal (piped, CI unset)', async () => {
    const r = await wmark(['watermark', '--key', 'clip-1'], { CI: undefined });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: say what to draw');
  });
});
