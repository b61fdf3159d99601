// The service for tests and benches: in-process (its app, no socket) or a real `wmark serve` on loopback (in-process or
// spawned), JSON and raw-path calls to either, ingest over HTTP, waits, playlist parsing, and gates that hold ffmpeg
// work at chosen points. The error-body expectations that need vitest are in test/helpers/serve-in-tests.ts.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RequestRecord } from '../src/core/log-record.js';
import { createCredential, type IssuedCredential } from '../src/engine/app/credentials.js';
import type { LocalService } from '../src/engine/app/local-service.js';
import { type ServerServiceOptions, serverService } from '../src/engine/app/server-service.js';
import type { Engine } from '../src/engine/engine.js';
import type { SourcePolicy } from '../src/engine/ingest/source-policy.js';
import type { JobQueue } from '../src/engine/jobs/job-queue.js';
import { type App, createApp } from '../src/server/app/app.js';
import { type RunningServer, type ServerOptions, startServer } from '../src/server/app/node-server.js';
import type { AuthLimitOptions } from '../src/server/auth-limit.js';
import { REPO } from './fixtures.js';
import { diesWithParent } from './server-process.js';
import { startProcess } from './start-process.js';
import type { Exit, StopOptions } from './stop-process.js';
import { FFMPEG } from './tools.js';

export interface Reply {
  status: number;
  headers: Headers;
  body: Buffer;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: any;
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** Sent as JSON with Content-Type: application/json. */
  body?: unknown;
  /** Sent as is (with `contentType` when given). */
  raw?: string | Buffer;
  contentType?: string;
}

/** Where calls go: a base URL (a real socket) or the app itself (in-process, no socket). */
export type Target = string | App;

/** The host of the links an in-process app hands out (its link base, as if it listened there). */
export const IN_PROCESS_HOST = 'wmark.test';

/** An absolute URL's request target (path and query, as written), or `target` itself when it is a path. */
function requestTarget(target: string): string {
  const m = /^https?:\/\/[^/]+(\/.*)?$/.exec(target);
  return m ? (m[1] ?? '/') : target;
}

/** One HTTP call; `target` is a path on `base` or an absolute URL. */
export async function call(base: Target, method: string, target: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  } else if (options.raw !== undefined) {
    body = options.raw;
    if (options.contentType) headers['content-type'] = options.contentType;
  }
  let status: number;
  let resHeaders: Headers;
  let bytes: Buffer;
  if (typeof base === 'string') {
    const url = /^https?:/.test(target) ? target : base + target;
    const res = await fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
    ({ status } = res);
    resHeaders = res.headers;
    bytes = Buffer.from(await res.arrayBuffer());
  } else {
    const res = await base.request(requestTarget(target), { method, headers, body });
    ({ status } = res);
    resHeaders = res.headers;
    bytes = res.body;
  }
  const text = bytes.toString('utf8');
  let json: any;
  if (text && (resHeaders.get('content-type') ?? '').includes('json')) json = JSON.parse(text);
  return { status, headers: resHeaders, body: bytes, text, json };
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/**
 * Sends the request target byte for byte (fetch/WHATWG URL would resolve `..`, `%2e%2e` and backslashes first), with
 * any headers (Host too), from `localAddress` when given (e.g. 127.0.0.2: another client on loopback).
 */
export async function rawRequest(
  base: Target,
  rawTarget: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawReply> {
  if (typeof base !== 'string') {
    const res = await base.request(rawTarget, { method: options.method ?? 'GET', headers: options.headers, body: options.body });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: res.body, text: res.text };
  }
  const url = new URL(base);
  const target = { host: url.hostname, port: url.port, method: options.method ?? 'GET', path: rawTarget, headers: options.headers };
  return new Promise((resolve, reject) => {
    const req = http.request({ ...target, ...(options.localAddress ? { localAddress: options.localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The messages of an error body as one array (a validation error may carry several). */
export function messagesOf(reply: Reply): string[] {
  const m = reply.json?.message as string | string[] | undefined;
  return Array.isArray(m) ? m : m === undefined ? [] : [m];
}

export const keyHeaders = (cred: { clientId: string; apiKey: string }) => ({ 'x-api-client-id': cred.clientId, 'x-api-key': cred.apiKey });
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Credentials {
  cred: IssuedCredential;
  token: string;
  /** Headers for 1.0 (Bearer) and 2.0 (API key) calls. */
  v1: Record<string, string>;
  v2: Record<string, string>;
  logs: string[];
}

export interface TestServer extends RunningServer, Credentials {
  queue: JobQueue;
  /** Every request it answered, as its access log hears them. */
  requests: RequestRecord[];
}

/** The service in-process: its app (call it with `call(s.app, ...)`), its job queue and credentials; no socket. */
export interface TestApp extends Credentials {
  app: App;
  service: LocalService;
  queue: JobQueue;
  /** The base of the links it hands out. */
  url: string;
  close(): Promise<void>;
}

async function withCredentials(engine: Engine, app: App, logs: string[]): Promise<Credentials> {
  const cred = await createCredential(engine, 'serve test');
  const t = await call(app, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(cred) });
  if (t.status !== 200) throw new Error(`token endpoint answered ${t.status}: ${t.text}`);
  return { cred, token: t.json.token as string, v1: bearer(t.json.token as string), v2: keyHeaders(cred), logs };
}

/**
 * A real `wmark serve` on a free loopback port, for what only a socket shows (players, slow clients, shutdown). Like
 * `wmark serve` it renders new TEXT watermarks on demand unless `render: 'full'` is given (every segment on disk).
 */
export async function serveEngine(
  engine: Engine,
  options: { tokenTtlSeconds?: number } & Pick<ServerServiceOptions, 'jobConcurrency' | 'playableTimeoutMs' | 'sourcePolicy' | 'render'> &
    Pick<ServerOptions, 'timeouts' | 'corsOrigins' | 'authLimit' | 'publicUrl' | 'trustProxy' | 'metricsPublic'> = {},
): Promise<TestServer> {
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const requests: RequestRecord[] = [];
  const host = '127.0.0.1';
  const server = await startServer({
    service: serverService(engine, {
      host,
      jobConcurrency: options.jobConcurrency ?? 2,
      playableTimeoutMs: options.playableTimeoutMs,
      sourcePolicy: options.sourcePolicy,
      render: options.render,
      log,
    }),
    host,
    port: 0,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    timeouts: options.timeouts,
    corsOrigins: options.corsOrigins,
    authLimit: options.authLimit,
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    metricsPublic: options.metricsPublic,
    log,
    logRequest: (record) => requests.push(record),
  });
  return Object.assign(server, { queue: server.service.queue, requests }, await withCredentials(engine, server.app, logs));
}

/** The same service without a socket: routes and handlers called in-process. */
export async function serveInProcess(
  engine: Engine,
  options: {
    tokenTtlSeconds?: number;
    jobConcurrency?: number;
    playableTimeoutMs?: number;
    publicUrl?: string;
    sourcePolicy?: SourcePolicy;
    corsOrigins?: string[];
    authLimit?: AuthLimitOptions;
  } = {},
): Promise<TestApp> {
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const url = options.publicUrl ?? `http://${IN_PROCESS_HOST}`;
  // The policy of a server on loopback, as `wmark serve` would have; rendered in full, as the in-process tests expect.
  const service = serverService(engine, {
    host: '127.0.0.1',
    jobConcurrency: options.jobConcurrency ?? 2,
    playableTimeoutMs: options.playableTimeoutMs,
    render: 'full',
    log,
    ...(options.sourcePolicy ? { sourcePolicy: options.sourcePolicy } : {}),
  })(url);
  const app = createApp({
    service,
    linkBase: url,
    publicUrl: options.publicUrl,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    log,
    corsOrigins: options.corsOrigins,
    authLimit: options.authLimit,
  });
  const queue = service.queue;
  await queue.resume();
  return { app, service, queue, url, ...(await withCredentials(engine, app, logs)), close: () => queue.close() };
}

/** Polls until `probe` returns a value other than undefined (or throws on timeout with the last state). */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** POST /{v}/videos, then polls GET /{v}/videos/{id} until INGESTED; returns the 201 reply and the final resource. */
export async function ingestOverHttp(base: Target, headers: Record<string, string>, sourceUrl: string, key?: string, version = '2.0') {
  const created = await call(base, 'POST', `/${version}/videos`, { headers, body: { sourceUrl, ...(key ? { key } : {}) } });
  if (created.status !== 201 && created.status !== 200) throw new Error(`ingest answered ${created.status}: ${created.text}`);
  const video = await waitFor(
    async () => {
      const r = await call(base, 'GET', `/${version}/videos/${created.json.id}`, { headers });
      if (r.json?.status?.startsWith('FAILED')) throw new Error(`ingest failed: ${r.text}`);
      return r.json?.status === 'INGESTED' ? r.json : undefined;
    },
    `video ${created.json.id} to be INGESTED`,
    90_000,
    150,
  );
  return { created, video };
}

export interface ParsedPlaylist {
  segments: Array<{ uri: string; duration: number }>;
  targetDuration?: number;
  endList?: boolean;
}
const { Parser } = createRequire(import.meta.url)('m3u8-parser') as {
  Parser: new () => { push(text: string): void; end(): void; manifest: ParsedPlaylist };
};

export function parseM3u8(text: string): ParsedPlaylist {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/** `url` with one query parameter replaced (or removed when value is undefined), other parameters kept in order. */
export function withParam(url: string, name: string, value: string | undefined): string {
  const u = new URL(url);
  if (value === undefined) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return u.href;
}

/** A signature with its first character changed (still well-formed base64url). */
export function forge(signature: string): string {
  return (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
}

export interface Gate {
  /** How many ffmpeg calls are being held right now. */
  held(): number;
  /** Lets every held call (and all later ones) through. */
  open(): void;
}

/** Holds the engine's ffmpeg calls whose arguments match `when` until the gate is opened. */
export function gateFfmpeg(engine: Engine, when: (args: readonly string[]) => boolean): Gate {
  const inner = engine.runner.ffmpeg.bind(engine.runner);
  let opened = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = 0;
  engine.runner.ffmpeg = async (args, options) => {
    if (!opened && when(args)) {
      held++;
      // A closing queue aborts its jobs: the held call gives up too, so a failed test cannot hang the teardown.
      const aborted = new Promise<void>((_, reject) =>
        options?.signal?.addEventListener('abort', () => reject(new Error('aborted while held')), { once: true }),
      );
      aborted.catch(() => {}); // an abort after the gate opened is nobody's business
      await Promise.race([gate, aborted]).finally(() => held--);
    }
    return inner(args, options);
  };
  return {
    held: () => held,
    open() {
      opened = true;
      release();
    },
  };
}

export const isSegmentRender = (args: readonly string[]) => args.includes('libx264') && args.some((a) => a.endsWith('.ts.part'));
export const isMp4Join = (args: readonly string[]) => args.some((a) => a.startsWith('concat:'));

/** A free loopback port (`wmark serve --port 0` is refused by the config schema, see the restart test). */
export { freePort } from './free-port.js';

/** An ffmpeg stand-in that logs every call and sleeps before each watermark segment render (so a job can be caught mid-way). */
export function slowFfmpeg(dir: string, log: string, sleepSeconds: number): string {
  const file = path.join(dir, 'slow-ffmpeg.sh');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    file,
    ['#!/bin/sh', `printf '%s\\n' "$*" >> ${q(log)}`, `case "$*" in *.ts.part*) sleep ${sleepSeconds};; esac`, `exec ${q(FFMPEG)} "$@"`, ''].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

export interface SpawnedServe {
  child: ChildProcess;
  /** The base URL printed on stdout. */
  url: Promise<string>;
  stderr(): string;
  exited: Promise<number | null>;
  /** Signals the whole process group (the server and any ffmpeg it started). */
  kill(signal: NodeJS.Signals): void;
  /** Stops the whole process group (SIGTERM, then SIGKILL after 10 s, unless told otherwise) and waits for the exit. */
  stop(options?: Partial<StopOptions>): Promise<Exit>;
}

/**
 * Spawns `node bin/wmark.js --data-dir DIR serve ...` as its own process group, stdout/stderr piped (not a TTY); it dies
 * with the test process if that ends first.
 */
export function spawnServe(dataDir: string, args: string[], env: Record<string, string> = {}): SpawnedServe {
  const [command, argv] = diesWithParent(process.execPath, [path.join(REPO, 'bin', 'wmark.js'), '--data-dir', dataDir, 'serve', ...args]);
  const serve = startProcess({
    name: 'wmark serve',
    command,
    args: argv,
    cwd: dataDir,
    env: { ...process.env, CI: '1', NO_COLOR: '1', ...env },
    detached: true,
    // Its first line is the URL; tests read its whole log (the credentials it printed, request lines).
    ready: { line: /^\s*(\S.*?)\s*$/, what: 'its URL (the first line on stdout)' },
    keep: Number.POSITIVE_INFINITY,
  });
  return {
    child: serve.proc,
    url: serve.ready.then((m) => m[1]!),
    stderr: serve.stderr,
    exited: serve.exited.then((e) => e.code),
    kill(signal) {
      if (serve.proc.exitCode !== null || serve.proc.signalCode !== null || serve.proc.pid === undefined) return;
      try {
        process.kill(-serve.proc.pid, signal);
      } catch {
        // already gone
      }
    },
    stop: serve.stop,
  };
}
