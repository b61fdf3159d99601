// Runs the commands the docs show, as printed: the examples of every `--help` (src/cli/help-examples.ts) and the
// shell blocks of README.md. Each runs in bash in a world of its own: a temp data folder, config folder, home and
// working folder holding the files the examples name (movie.mp4, viewers.csv, ...), `wmark` and `npx wmark` on PATH
// (this checkout's bin/wmark.js), and on loopback what the examples reach for: a `wmark serve` as the remote service,
// a redis-server, an s3rver, an http server for source URLs. Only the addresses are substituted (SUBSTITUTIONS), and
// the placeholders a reader fills in (<id>, wmc_..., ...) get real values. `wmark serve` and `wmark worker` keep
// running until the block they are in ends, then stop on Ctrl-C (exit 0). A command that prompts ("# at a terminal")
// runs on a pty with answers typed. What cannot run here is in SKIPPED, each with its reason.
import { execFileSync } from 'node:child_process';
import { copyFileSync, createReadStream, existsSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BIN, onPty, until } from '../../harness/cli-helpers.js';
import { freePort } from '../../harness/free-port.js';
import { startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { type Started, type StartOptions, startProcess } from '../../harness/start-process.js';
import { gradedAlphaPng } from './images.js';

/** Commands that cannot run here, each with its reason. Kept short: everything else runs. */
export const SKIPPED: { match: RegExp; reason: string; when?: () => boolean }[] = [
  { match: /^npm ci\b/, reason: 'installs packages into the checkout under test; `wmark demo` itself runs in other examples' },
  { match: /^npm test\b/, reason: 'the whole test suite, this test included' },
  {
    match: /^npm pack\b|^npm install -g\b/,
    reason: 'packs and installs globally: test/e2e/install.test.ts packs the tarball and installs it into a temporary prefix',
  },
  {
    match: /^npm run (typecheck|lint|format|bench)\b|^npx vitest\b/,
    reason: "the development loop: the checks and benchmarks that run this suite, not a user's command",
  },
  { match: /\$\{fpath\[1\]\}/, reason: "zsh's completion folder: needs zsh, which this machine lacks", when: () => !hasCommand('zsh') },
];

export function skipReason(command: string): string | undefined {
  return SKIPPED.find((s) => s.match.test(command) && (s.when?.() ?? true))?.reason;
}

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** README.md's shell blocks: each a list of commands (continuation lines joined, comment lines dropped), with its heading. */
export function readmeBlocks(markdown: string): { heading: string; commands: string[] }[] {
  const blocks: { heading: string; commands: string[] }[] = [];
  let heading = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const h = /^#{2,4} (.+)$/.exec(lines[i]!);
    if (h) heading = h[1]!.replace(/`/g, '');
    if (lines[i] !== '```sh') continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    blocks.push({ heading, commands: shellCommands(body.join('\n')) });
  }
  return blocks;
}

/** The commands of a shell snippet: `\`-continued lines joined, blank and comment-only lines left out. */
function shellCommands(text: string): string[] {
  return text
    .replace(/[ \t]*\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** The world the examples run in, and the infrastructure they reach on loopback. */
export interface World {
  root: string;
  home: string;
  cwd: string;
  dataDir: string;
  configDir: string;
  /** Where `wmark serve` listens when no --port is given (the world's config file says so: 8080 may be taken here). */
  port: number;
  env: Record<string, string>;
  remote: { url: string; clientId: string; apiKey: string };
  redis: TestRedis;
  s3: TestS3;
  files: string;
  /** What --open handed to the "browser", one link a line. */
  opened: string;
  /** A new empty PostgreSQL database's URL (the server starts on first use). */
  database(): Promise<string>;
  close(): Promise<void>;
}

export interface WorldOptions {
  label: string;
  /** Files of the working folder (and of the source server) by name: a path to copy, or text to write. */
  files: Record<string, string | { text: string }>;
}

const SHIM = (target: string) => `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(target)} "$@"\n`;
// README: "In the examples below, `npx wmark` and `wmark` are the same command." (Inside a checkout npx runs it.)
const NPX = '#!/bin/sh\nif [ "$1" = wmark ]; then shift; exec wmark "$@"; fi\necho "npx (test shim): only wmark" >&2\nexit 127\n';

export async function openWorld(options: WorldOptions): Promise<World> {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), `wmark-${options.label}-`)));
  const dirs = { home: path.join(root, 'home'), cwd: path.join(root, 'cwd'), dataDir: path.join(root, 'data'), configDir: path.join(root, 'config') };
  const bin = path.join(root, 'bin');
  const files = path.join(root, 'sources');
  for (const d of [...Object.values(dirs), bin, files, path.join(dirs.home, '.config', 'fish', 'completions'), path.join(root, 'mnt-wmark')])
    mkdirSync(d, { recursive: true });
  writeFileSync(path.join(bin, 'wmark'), SHIM(BIN), { mode: 0o755 });
  writeFileSync(path.join(bin, 'npx'), NPX, { mode: 0o755 });
  const opened = path.join(root, 'opened.txt');
  writeFileSync(path.join(bin, 'opener'), `#!/bin/sh\nprintf '%s\\n' "$@" >> ${JSON.stringify(opened)}\n`, { mode: 0o755 });
  // The logo the IMAGE examples name, a PNG with graded transparency.
  const logo = gradedAlphaPng(path.join(root, 'logo.png'), 96, 48);
  const all: WorldOptions['files'] = { 'logo.png': logo, ...options.files };
  for (const [name, content] of Object.entries(all)) {
    for (const dir of [dirs.cwd, files]) {
      const to = path.join(dir, name);
      if (typeof content === 'string') {
        try {
          linkSync(content, to);
        } catch {
          copyFileSync(content, to);
        }
      } else writeFileSync(to, content.text);
    }
  }
  const port = await freePort();
  writeFileSync(path.join(dirs.cwd, 'wmark.config.json'), JSON.stringify({ server: { port } }));
  const [redis, s3] = await Promise.all([startRedis(), startS3({ buckets: ['wmark-media', 'media'] })]);
  const fileServer = await serveFiles(files);
  const env: Record<string, string> = {
    PATH: `${bin}${path.delimiter}${process.env.PATH}`,
    HOME: dirs.home,
    WMARK_HOME: dirs.dataDir,
    WMARK_CONFIG_DIR: dirs.configDir,
    WMARK_OPENER: path.join(bin, 'opener'),
    CI: '1',
    NO_COLOR: '1',
    // The stand-in for a bucket's endpoint and credentials, as a machine of the farm would have them in its environment.
    ...s3.env,
    WMARK_S3_ENDPOINT: s3.endpoint,
  };
  const remote = await startRemote(root, env);
  let postgres: Promise<TestPostgres> | undefined;
  const world: World = {
    root,
    ...dirs,
    port,
    env,
    remote: remote.service,
    redis,
    s3,
    files: fileServer.url,
    opened,
    database: async () => {
      postgres ??= startPostgres();
      return (await postgres).createDatabase();
    },
    close: async () => {
      await (await postgres)?.stop();
      await remote.serve.stop();
      await Promise.all([redis.stop(), s3.stop(), new Promise((r) => fileServer.server.close(r))]);
      rmSync(root, { recursive: true, force: true });
    },
  };
  return world;
}

/** Source URLs (https://example.com/clip.mp4) are served from here, on loopback. */
async function serveFiles(dir: string): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (!existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': statSync(file).size });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The remote service: a `wmark serve` with a data folder of its own and a key for the examples' credentials. */
async function startRemote(root: string, env: Record<string, string>) {
  const dataDir = path.join(root, 'remote-data');
  const wmark = (args: string[]) => execFileSync(process.execPath, [BIN, ...args], { env: { ...env, WMARK_HOME: dataDir }, encoding: 'utf8' });
  const key = JSON.parse(wmark(['--json', 'auth', 'keys', 'create', '--label', 'examples'])) as { clientId: string; apiKey: string };
  // API clients may ingest from the loopback source server (README's https://cdn.example.com/movie.mp4).
  const serve = startProcess({
    name: 'the remote wmark serve',
    command: process.execPath,
    args: [BIN, 'serve', '--port', '0', '--allow-private-sources'],
    env: { ...env, WMARK_HOME: dataDir },
    ready: { line: /^(http:\/\/\S+)$/, what: 'its URL on stdout' },
    timeoutMs: 60_000,
    stop: { signal: 'SIGINT', graceMs: 60_000 },
  });
  const [, url] = await serve.ready;
  return { serve, service: { url: url!, clientId: key.clientId, apiKey: key.apiKey } };
}

/** The PostgreSQL URL the examples print; each block that names it gets a new empty database of its own. */
const DATABASE_URL = 'postgres://wmark:PASSWORD@db.internal:5432/wmark';

/** The addresses of the examples' outside infrastructure, and where the world's stand-ins listen. */
function substitutions(w: World): [string, string][] {
  return [
    ['https://watermark.example.com', w.remote.url],
    ['http://videos.internal:8080', w.remote.url],
    ['http://serve.internal:8080', `http://127.0.0.1:${w.port}`],
    ['https://example.com/clip.mp4', `${w.files}/clip.mp4`],
    ['https://cdn.example.com/movie.mp4', `${w.files}/movie.mp4`],
    ['redis://:PASSWORD@redis.internal:6379', w.redis.url],
    ['redis://10.0.0.5:6379', w.redis.url],
    ['redis://farm:6379', w.redis.url],
    ['http://minio.internal:9000', w.s3.endpoint],
    ['http://minio:9000', w.s3.endpoint],
    ['--port 8080', `--port ${w.port}`],
    ['/mnt/wmark', path.join(w.root, 'mnt-wmark')],
    ['/srv/wmark', path.join(w.root, 'srv-wmark')],
  ];
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One block of examples: commands run in order, `serve`/`worker` kept running until the block ends. */
export class Block {
  private readonly running: { command: string; proc: Started }[] = [];
  private readonly env: Record<string, string> = {};
  private database: Promise<string> | undefined;

  constructor(private readonly w: World) {}

  /** Runs one example as printed (addresses and placeholders filled in); throws, saying what happened, when it fails. */
  async run(printed: string): Promise<RunResult | undefined> {
    const command = await this.fill(printed);
    const exported = /^export ([^#]+)/.exec(command);
    if (exported) {
      for (const [, k, v] of exported[1]!.matchAll(/(\w+)=(\S+)/g)) this.env[k!] = v!;
      return undefined;
    }
    await this.prepareFiles(command);
    if (/^wmark status$/.test(command)) await this.startLong('wmark serve --port 0');
    if (/^(?:npx )?wmark (?:--data-dir \S+ )?(?:serve|worker)\b/.test(command)) {
      await this.startLong(command);
      return undefined;
    }
    const result = /#\s*at a terminal/.test(printed) ? await this.onTerminal(command) : await this.shell(command);
    if (result.code !== 0) throw new Error(failure(printed, command, result));
    // A --no-wait request leaves a job running; the next example may remove its watermark.
    if (/--no-wait\b/.test(command)) await this.settle();
    return result;
  }

  /** Stops what still runs (Ctrl-C); each must exit 0. */
  async end(): Promise<void> {
    await this.stop(this.running.splice(0).reverse());
  }

  private async stop(running: { command: string; proc: Started }[]): Promise<void> {
    const problems: string[] = [];
    for (const r of running) {
      const exit = await r.proc.stop({ signal: 'SIGINT', graceMs: 60_000 });
      if (exit.code !== 0)
        problems.push(
          failure(r.command, r.command, {
            code: exit.code,
            stdout: `${r.proc.stdout()}\n${r.proc.stderr()}`,
            stderr: `(stopped by SIGINT: ${exit.signal ?? 'exited'})`,
          }),
        );
    }
    if (problems.length) throw new Error(problems.join('\n\n'));
  }

  /** The command in bash (zsh for zsh's completion folder), in the world's folder and environment, as a group of its own. */
  private startShell(command: string, more: Pick<StartOptions, 'ready' | 'timeoutMs' | 'keep'> = {}): Started {
    return startProcess({
      name: command,
      command: /\$\{fpath/.test(command) ? 'zsh' : 'bash',
      args: ['-c', command],
      cwd: this.w.cwd,
      env: { ...this.w.env, ...this.env },
      detached: true,
      ...more,
    });
  }

  async shell(command: string, timeoutMs = 900_000): Promise<RunResult> {
    const proc = this.startShell(command, { keep: Number.POSITIVE_INFINITY });
    const timer = setTimeout(() => void proc.stop({ signal: 'SIGKILL' }), timeoutMs);
    const { code } = await proc.closed;
    clearTimeout(timer);
    return { code, stdout: proc.stdout(), stderr: proc.stderr() };
  }

  /**
   * `wmark serve` and `wmark worker` run until the block ends: started, and ready once they print their first line.
   * A reader stops one serve (Ctrl-C) before trying the next, which wants the same port.
   */
  private async startLong(command: string): Promise<void> {
    if (isServe(command)) {
      const earlier = this.running.filter((r) => isServe(r.command));
      for (const r of earlier) this.running.splice(this.running.indexOf(r), 1);
      await this.stop(earlier);
    }
    const proc = this.startShell(`exec ${command}`, { ready: { line: /^/, what: 'its first line on stdout' }, timeoutMs: 120_000 });
    this.running.push({ command, proc });
    await proc.ready;
  }

  /** A command that asks at a terminal: run on a pty (script(1)), each prompt answered as a person would. */
  private async onTerminal(command: string): Promise<RunResult> {
    // The prompts in the order they come, each answered once.
    const pending: [RegExp, string][] = /\bauth login\b/.test(command)
      ? [
          [/Client id/, `${this.w.remote.clientId}\r`],
          [/API key/, `${this.w.remote.apiKey}\r`],
        ]
      : [
          [/Which video\?/, '\r'],
          [/Text to draw/, 'for dave\r'],
        ];
    const env: Record<string, string> = { ...this.w.env, ...this.env, TERM: 'xterm-256color' };
    delete env.CI;
    const { code, output } = await onPty(command, pending, { env, cwd: this.w.cwd, timeoutMs: 300_000 });
    return { code, stdout: output, stderr: '' };
  }

  /** Addresses substituted, placeholders given real values. */
  private async fill(printed: string): Promise<string> {
    let command = printed;
    // The examples' database: one empty PostgreSQL database for the block, as a reader's commands share theirs.
    if (command.includes(DATABASE_URL)) {
      this.database ??= this.w.database();
      command = command.split(DATABASE_URL).join(await this.database);
    }
    for (const [from, to] of substitutions(this.w)) command = command.split(from).join(to);
    const values: [string, () => Promise<string>][] = [
      ['<id>', () => this.watermarkId()],
      ['<video-id>', async () => ((await this.json(['video', 'list'])) as { id: string }[])[0]!.id],
      ['<template-id>', () => this.templateId()],
      ['<client-id>', async () => ((await this.json(['auth', 'keys', 'create', '--label', 'to revoke'])) as { clientId: string }).clientId],
      ['<href>', () => this.href()],
      ['wmc_...', async () => this.w.remote.clientId],
      ['wmk_...', async () => this.w.remote.apiKey],
    ];
    for (const [placeholder, value] of values) if (command.includes(placeholder)) command = command.split(placeholder).join(await value());
    return command;
  }

  /** `wmark --json ...` in this world. */
  async json(args: string[]): Promise<unknown> {
    const r = await this.shell(['wmark', '--json', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' '), 600_000);
    if (r.code !== 0) throw new Error(`setup: wmark --json ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  private async watermarkId(): Promise<string> {
    const list = (await this.json(['watermark', 'list'])) as { id: string }[];
    if (list.length) return list.at(-1)!.id;
    const videos = (await this.json(['video', 'list'])) as { key: string; status: string }[];
    const video = videos.find((v) => v.status === 'INGESTED')!;
    return ((await this.json(['watermark', '--key', video.key, '--text', 'an example watermark', '--containers', 'm3u8'])) as { id: string }).id;
  }

  private async templateId(): Promise<string> {
    const own = ((await this.json(['template', 'list'])) as { id: string; builtin?: boolean }[]).filter((t) => !t.builtin);
    if (own.length) return own.at(-1)!.id;
    return ((await this.json(['template', 'create', 'my-template.json'])) as { id: string }).id;
  }

  /** A 1.0 answer's long-poll href, from the remote service. */
  private async href(): Promise<string> {
    const remote = ['--remote', this.w.remote.url];
    const creds = `WMARK_CLIENT_ID=${this.w.remote.clientId} WMARK_API_KEY=${this.w.remote.apiKey}`;
    const run = async (args: string[]) => {
      const r = await this.shell(`${creds} wmark --json ${args.map((a) => `'${a}'`).join(' ')}`, 600_000);
      if (r.code !== 0) throw new Error(`setup: wmark ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout) as unknown;
    };
    let videos = (await run(['video', 'list', ...remote])) as { key: string }[];
    if (!videos.length) {
      await run(['ingest', path.join(this.w.cwd, 'movie.mp4'), ...remote]);
      videos = (await run(['video', 'list', ...remote])) as { key: string }[];
    }
    return ((await run(['watermark', ...remote, '--api', '1.0', '--key', videos[0]!.key, '--text', 'poll me'])) as { href: string }).href;
  }

  /** leaked.mp4 and leaked-copy.mp4: a forensic viewer's copy, made when an example first names it. */
  private async prepareFiles(command: string): Promise<void> {
    for (const name of ['leaked.mp4', 'leaked-copy.mp4']) {
      const file = path.join(this.w.cwd, name);
      if (!command.includes(name) || existsSync(file)) continue;
      const videos = (await this.json(['video', 'list'])) as { key: string; enableForensic?: boolean; status: string }[];
      const forensic = videos.find((v) => v.enableForensic && v.status === 'INGESTED');
      if (!forensic) throw new Error(`setup: ${name} is a forensic viewer's copy, but no forensic video is ingested`);
      const marked = (await this.json(['watermark', 'list', '--key', forensic.key])) as { id: string; forensic: number | null; containers: string[] }[];
      let viewer = marked.find((m) => m.forensic !== null && m.containers.includes('mp4'))?.id;
      viewer ??= ((await this.json(['watermark', '--key', forensic.key, '--forensic', '4711', '--containers', 'mp4'])) as { id: string }).id;
      const view = (await this.json(['watermark', 'view', viewer])) as { files: { mp4: string } };
      copyFileSync(view.files.mp4, file);
    }
  }

  /** Until no job of the data folder is queued or running. */
  private async settle(): Promise<void> {
    const db = new Database(path.join(this.w.dataDir, 'wmark.db'), { readonly: true, fileMustExist: true });
    try {
      await until(
        () => (db.prepare("SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')").get() as { n: number }).n === 0,
        'the jobs to finish',
        300_000,
        250,
      );
    } finally {
      db.close();
    }
  }
}

const isServe = (command: string) => /^(?:npx )?wmark (?:--data-dir \S+ )?serve\b/.test(command);

function failure(printed: string, command: string, r: RunResult): string {
  const tail = (s: string) => s.split('\n').slice(-25).join('\n');
  return `example failed (exit ${r.code}):\n  $ ${printed}${command !== printed ? `\n  ran as: ${command}` : ''}\n--- stdout\n${tail(r.stdout)}\n--- stderr\n${tail(r.stderr)}`;
}

/** Text files the examples name. */
export const TEXT_FILES = {
  'viewers.csv': { text: 'name,email\nAlice,alice@example.com\nBob,bob@example.com\n' },
  'reviewers.csv': { text: 'name,email\nCarol,carol@example.com\nDan,dan@example.com\n' },
  'settings.json': { text: `${JSON.stringify([{ type: 'TEXT', content: 'from settings.json', x: 0.05, y: 0.05, align: 'LEFT', verticalAlign: 'TOP' }])}\n` },
  'my-template.json': {
    text: `${JSON.stringify({ name: 'My template', description: 'the name, top left', settings: [{ type: 'TEXT', content: 'for %name%', x: 0.05, y: 0.05, align: 'LEFT', verticalAlign: 'TOP' }] })}\n`,
  },
};
