// The control-plane suite's options and its world: the requests it measures, PostgreSQL, Redis, HAProxy and the serves
// it starts, and the installation each serve is given (a clip ingested, one watermark READY with every segment).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type SpawnedWorker, spawnWorker } from '../harness/cluster.js';
import type { TestHaproxy } from '../harness/haproxy.js';
import { startPostgres, type TestPostgres } from '../harness/postgres.js';
import { startRedis, type TestRedis } from '../harness/redis.js';
import { call, freePort, keyHeaders, parseM3u8, type SpawnedServe, spawnServe, waitFor } from '../harness/serve-helpers.js';
import { numberOption, type SuiteContext } from './lib/suite.js';
import { type SourceClip, sourceClip } from './lib/video.js';

export const OPS = ['POST existing watermark', 'GET 2.0 href', 'signed segment GET'] as const;
export type Op = (typeof OPS)[number];
export const INSTANCES = [1, 2, 3] as const;
export const PROJECTED = [10, 100] as const;
/** The repeated POST sent to an instance that keeps nothing (every request a miss). */
export const UNCACHED = 'POST existing watermark, nothing kept';
export type CountedOp = Op | typeof UNCACHED;
/** Shares of repeated POSTs answered from what an instance kept, for the projection by hit rate. */
export const HIT_SHARES = [0, 0.5, 0.9, 0.99, 1] as const;
export const ONE_PG = 'PostgreSQL, 1 instance';
/** Sequential calls of each request whose transactions and statements are counted. */
export const PER_CALL = 300;

export interface Options {
  /** Requests in flight at once during a throughput run. */
  concurrency: number;
  /** Seconds each throughput run lasts (after a 1-s warm-up). */
  seconds: number;
  /** Sequential requests per latency figure. */
  samples: number;
}

export function parseOptions(ctx: SuiteContext): Options {
  return {
    concurrency: numberOption(ctx.args.options.concurrency, 16, 'concurrency'),
    seconds: numberOption(ctx.args.options.seconds, 4, 'seconds'),
    samples: numberOption(ctx.args.options.samples, 200, 'samples'),
  };
}

/** The three requests of one installation: credentials, the body of its watermark, and signed paths (no origin). */
export interface Target {
  headers: Record<string, string>;
  body: unknown;
  watermarkId: string;
  href: string;
  segment: string;
}

/** A link's path and query, to be sent to an instance or the load balancer: links name the public URL. */
const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

export class World {
  readonly serves: SpawnedServe[] = [];
  readonly workers: SpawnedWorker[] = [];
  pg?: TestPostgres;
  redis?: TestRedis;
  lb?: TestHaproxy;

  async stop(): Promise<void> {
    await this.lb?.stop();
    for (const w of this.workers) w.child.kill('SIGKILL');
    for (const s of this.serves) s.kill('SIGKILL');
    await Promise.all([...this.workers.map((w) => w.done), ...this.serves.map((s) => s.exited)]);
    await Promise.all([this.redis?.stop(), this.pg?.stop()]);
  }
}

/** Starts a serve on a port of its own, and answers its origin and the key pair it printed (if it made one). */
export async function serveOn(world: World, dataDir: string, args: string[], env: Record<string, string> = {}) {
  const port = await freePort();
  await mkdir(dataDir, { recursive: true });
  const proc = spawnServe(dataDir, ['--port', String(port), ...args], env);
  world.serves.push(proc);
  const base = await proc.url;
  const clientId = /client id:\s+(wmc_\S+)/.exec(proc.stderr())?.[1];
  const apiKey = /API key:\s+(wmk_\S+)/.exec(proc.stderr())?.[1];
  return { proc, port, base, cred: clientId && apiKey ? { clientId, apiKey } : undefined };
}

/** Ingests the clip and makes one watermark through `base`, waiting until it is READY with every segment. */
async function prepare(base: string, cred: { clientId: string; apiKey: string }, source: string, key: string): Promise<Target> {
  const headers = keyHeaders(cred);
  const made = await call(base, 'POST', '/2.0/videos', { headers, body: { sourceUrl: source, key } });
  if (made.status !== 201) throw new Error(`ingest through ${base}: ${made.status} ${made.text}`);
  await waitFor(
    async () => ((await call(base, 'GET', `/2.0/videos/${made.json.id}`, { headers })).json.status === 'INGESTED' ? true : undefined),
    'the ingest',
    120_000,
    200,
  );
  const body = { key, containers: ['m3u8'], settings: [{ content: 'control plane bench viewer' }] };
  const w = await call(base, 'POST', '/2.0/watermark', { headers, body });
  if (w.json?.status !== 'READY') throw new Error(`watermark through ${base}: ${w.status} ${w.text}`);
  const m3u8 = base + pathOf(w.json.containers.m3u8 as string);
  const text = await waitFor(
    async () => {
      const t = await (await fetch(m3u8)).text();
      return t.includes('#EXT-X-ENDLIST') ? t : undefined;
    },
    'every segment',
    120_000,
    200,
  );
  return {
    headers,
    body,
    watermarkId: w.json.id as string,
    href: pathOf(w.json.href as string),
    segment: pathOf(new URL(parseM3u8(text).segments[1]!.uri, m3u8).toString()),
  };
}

type ServeOn = Awaited<ReturnType<typeof serveOn>>;

/** What the suite measures: the database, the serves on it and the SQLite one, each with its installation, behind one public URL. */
export interface Installation {
  clip: SourceClip;
  pg: TestPostgres;
  /** The database the serves share. */
  url: string;
  /** The media folder the serves and the worker share. */
  media: string;
  /** HAProxy's port, and the public URL every serve names in its links. */
  lbPort: number;
  publicUrl: string;
  /** The arguments of every serve on PostgreSQL. */
  shared: string[];
  pgServes: ServeOn[];
  sqlite: ServeOn;
  pgTarget: Target;
  sqliteTarget: Target;
}

/** Starts PostgreSQL, Redis, three serves on the database, a worker and a SQLite serve, and gives each side its installation. */
export async function install(ctx: SuiteContext, world: World, runDir: string): Promise<Installation> {
  const clip = await sourceClip(ctx.tools, { width: 640, height: 360, seconds: 12, fps: 30, audio: false }, ctx.log);
  ctx.log('starting PostgreSQL, Redis, 3 serves on the database, a worker and a SQLite serve ...');
  [world.pg, world.redis] = await Promise.all([startPostgres({ statementStats: true }), startRedis()]);
  const pg = world.pg;
  const url = await pg.createDatabase();
  const media = path.join(runDir, 'media');
  await mkdir(media, { recursive: true });
  const lbPort = await freePort();
  const publicUrl = `http://127.0.0.1:${lbPort}`;
  const shared = ['--db', url, '--queue', world.redis.url, '--media', media, '--render', 'full', '--trust-proxy', '127.0.0.1', '--public-url', publicUrl];
  const pgServes: ServeOn[] = [];
  for (const i of [1, 2, 3]) pgServes.push(await serveOn(world, path.join(runDir, `serve-${i}`), shared));
  world.workers.push(await spawnWorker(['--queue', world.redis.url, '--media', media], { WMARK_HOME: path.join(runDir, 'worker') }));
  const sqlite = await serveOn(world, path.join(runDir, 'serve-sqlite'), ['--render', 'full', '--trust-proxy', '127.0.0.1', '--public-url', publicUrl]);
  const pgCred = pgServes[0]!.cred!;
  const pgTarget = await prepare(pgServes[0]!.base, pgCred, clip.path, 'bench-pg');
  const sqliteTarget = await prepare(sqlite.base, sqlite.cred!, clip.path, 'bench-sqlite');
  return { clip, pg, url, media, lbPort, publicUrl, shared, pgServes, sqlite, pgTarget, sqliteTarget };
}
