// Several `wmark serve` instances behind the sample HAProxy (docs/haproxy.cfg) on one PostgreSQL database, one Redis and
// one shared media folder, with render-farm workers, as the README's several-instances set-up has them; clients' load
// through HAProxy (new watermarks by API 1.0 and 2.0, status links, playlists, segments) that learns its links from the
// answers; and what must hold after a fault: every watermark READY with every segment decodable through HAProxy, and
// each segment rendered once.
import { expect } from 'vitest';
import { freePort } from '../../harness/free-port.js';
import { startHaproxy, type TestHaproxy } from '../../harness/haproxy.js';
import type { TestPostgres } from '../../harness/postgres.js';
import type { TestRedis } from '../../harness/redis.js';
import { bearer, call, ingestOverHttp, keyHeaders, parseM3u8, waitFor } from '../../harness/serve-helpers.js';
import { type FarmWorker, faultFarm, readyAndDecodes } from './fault-farm.js';
import { finishedRenders, type Load, type Sample, startLoad } from './fault-load.js';
import { type ServeInstances, startServeInstances } from './serve-instances.js';

const KEY = 'balanced-clip';

export interface BalancedFarmOptions {
  pg: TestPostgres;
  redis: TestRedis;
  /** The clip every watermark is made of. */
  source: string;
  instances: number;
  workers: number;
  /** Names the temp folders. */
  label: string;
  /** `serve`'s arguments besides the shared ones (e.g. --drain-seconds). */
  serveArgs?: string[];
}

export interface BalancedFarm {
  lb: TestHaproxy;
  serves: ServeInstances;
  workers: FarmWorker[];
  /** The database every instance keeps its state in. */
  database: string;
  /** 2.0 headers (the key pair) and 1.0 headers (a token, good on every instance). */
  v2: Record<string, string>;
  v1: Record<string, string>;
  /** Whether every instance is UP in HAProxy's eyes, with its health check passing. */
  allUp(states: Awaited<ReturnType<TestHaproxy['servers']>>): boolean;
  /** A new watermark's request body (a viewer text never asked for before). */
  newWatermark(api: '1.0' | '2.0'): unknown;
  /** Segment renders the workers finished. */
  rendered(): number;
  /** Every watermark the database holds, with its status. */
  watermarkRows(): Promise<{ id: string; status: string }[]>;
  /** A temp folder, removed by `stop`. */
  newDir(label: string): string;
  /** Everything it started stopped, its folders removed (a test's teardown, pass or fail). */
  stop(): Promise<void>;
}

/** Starts the instances (one after another), the workers and HAProxy in front, then ingests the clip through HAProxy. */
export async function balancedFarm(options: BalancedFarmOptions): Promise<BalancedFarm> {
  const { pg, redis, label } = options;
  const database = await pg.createDatabase();
  let media = '';
  const farm = faultFarm({ queue: () => redis.url, database: () => database, mediaFolder: () => media });
  media = farm.newDir(`${label}-media`);
  let serves: ServeInstances | undefined;
  let lb: TestHaproxy | undefined;
  const stop = async () => {
    await lb?.stop();
    await serves?.stopAll();
    await farm.cleanup();
    farm.dispose();
  };
  try {
    // Promised to the instances as their public URL before HAProxy binds it.
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const dirs = Array.from({ length: options.instances }, (_, i) => farm.newDir(`${label}-serve${i + 1}`));
    const shared = ['--db', database, '--queue', redis.url, '--media', media, '--trust-proxy', '127.0.0.1', '--public-url', publicUrl];
    serves = await startServeInstances(options.instances, {
      dataDir: (i) => dirs[i]!,
      // Full renders, so every watermark ends READY without a player; serve encodes nothing itself on a farm.
      args: () => [...shared, '--workers', '1', '--render', 'full', ...(options.serveArgs ?? [])],
    });
    const workers: FarmWorker[] = [];
    // Renders as fast as ffmpeg goes; no worker dies here, so the usual lock timeout (nothing is taken twice).
    for (let i = 0; i < options.workers; i++) workers.push(await farm.worker(farm.newDir(`${label}-w${i + 1}`), `w${i + 1}`, 0, ['--lock-timeout', '30']));
    lb = await startHaproxy({ backends: serves.instances.map((s) => s.port), port });
    const allUp = (states: Record<string, { status: string; check: string }>) =>
      Object.keys(states).length === options.instances && Object.values(states).every((s) => s.status === 'UP' && s.check === 'L7OK');
    await lb.untilServers(allUp, 'every instance UP', 30_000);
    const v2 = keyHeaders(serves.credentials!);
    const token = await call(lb.url, 'GET', '/1.0/authenticate/accessToken', { headers: v2 });
    expect(token.status, token.text).toBe(200);
    await ingestOverHttp(lb.url, v2, options.source, KEY);
    let viewers = 0;
    return {
      lb,
      serves,
      workers,
      database,
      v2,
      v1: bearer(token.json.token as string),
      allUp,
      newWatermark: (api) => ({ key: KEY, containers: ['m3u8'], settings: [{ content: `viewer ${++viewers} by API ${api}` }] }),
      rendered: () => workers.reduce((n, w) => n + finishedRenders(w.log), 0),
      watermarkRows: () => pg.query<{ id: string; status: string }>(database, 'SELECT id, status FROM watermarks'),
      newDir: farm.newDir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface ClientLoad extends Load {
  /** Watermarks the answers named so far, by id: each one's status link. */
  watermarks: Map<string, string>;
  /** Sends a request of the load again, as it was, and learns from its answer as the load does. */
  resend(sample: Sample): Promise<{ status: number; json: any }>;
}

/** A 2xx answer: what every request of the load should get. */
export const succeeded = (s: Sample) => s.status !== undefined && s.status >= 200 && s.status < 300;

/**
 * Clients through HAProxy, each kind in its own loop: new watermarks by API 1.0 (answered at once) and 2.0 (answered
 * once playable; two loops, so there are usually some waiting), and GETs of the status links, playlists and segments
 * the answers so far named. A first watermark is made, and plays, before the loops start.
 */
export async function clientLoad(f: BalancedFarm): Promise<ClientLoad> {
  const watermarks = new Map<string, string>();
  const playlists = new Set<string>();
  const segments = new Set<string>();
  const pick = (from: Set<string> | Map<string, string>) => {
    const all = [...from.values()];
    return all[Math.floor(Math.random() * all.length)]!;
  };
  const learn = (status: number, text: string) => {
    if (status < 200 || status >= 300) return;
    const body = JSON.parse(text) as { id: string; href: string; status: string; containers?: { m3u8?: string } };
    if (!watermarks.has(body.id)) watermarks.set(body.id, body.href);
    if (body.status === 'READY' && body.containers?.m3u8) playlists.add(body.containers.m3u8);
  };
  const learnSegments = (m3u8: string) => (status: number, text: string) => {
    if (status === 200) for (const s of parseM3u8(text).segments) segments.add(new URL(s.uri, m3u8).href);
  };
  // The first watermark, playing, so every kind of GET has a link from the start.
  const first = await call(f.lb.url, 'POST', '/2.0/watermark', { headers: f.v2, body: f.newWatermark('2.0') });
  expect(first.status, first.text).toBe(201);
  learn(first.status, first.text);
  const m3u8 = first.json.containers.m3u8 as string;
  learnSegments(m3u8)(200, (await call(f.lb.url, 'GET', m3u8)).text);
  expect(segments.size).toBeGreaterThan(0);

  const headers: Record<string, Record<string, string>> = { 'watermark 1.0': f.v1, 'watermark 2.0': f.v2 };
  let playlist = '';
  const load = startLoad(
    f.lb.url,
    [
      // Paced so the two workers keep up: about one new watermark (four segments) a second in all.
      { kind: 'watermark 1.0', method: 'POST', target: '/1.0/watermark', headers: f.v1, body: () => f.newWatermark('1.0'), pauseMs: 3_000, onAnswer: learn },
      { kind: 'watermark 2.0', method: 'POST', target: '/2.0/watermark', headers: f.v2, body: () => f.newWatermark('2.0'), pauseMs: 2_000, onAnswer: learn },
      { kind: 'watermark 2.0', method: 'POST', target: '/2.0/watermark', headers: f.v2, body: () => f.newWatermark('2.0'), pauseMs: 2_000, onAnswer: learn },
      { kind: 'status link', method: 'GET', target: () => pick(watermarks), onAnswer: learn },
      {
        kind: 'playlist',
        method: 'GET',
        target: () => (playlist = pick(playlists)),
        onAnswer: (status, text) => learnSegments(playlist)(status, text),
      },
      { kind: 'segment', method: 'GET', target: () => pick(segments) },
    ],
    100,
    // A new watermark whose job a killed instance had taken waits until its lease is stale (20 s) and another
    // instance takes over: slow, not failed. Its own limit is the 2.0 wait's (120 s), under HAProxy's 150 s.
    130_000,
  );
  return {
    ...load,
    watermarks,
    async resend(sample) {
      const r = await call(f.lb.url, sample.method, sample.url, { headers: headers[sample.kind] ?? {}, body: sample.body });
      if (sample.kind.startsWith('watermark')) learn(r.status, r.text);
      return { status: r.status, json: r.json };
    },
  };
}

/**
 * Every watermark in the database is one the answers named (none unknown, none missing), every one ends READY, and
 * every segment of each, fetched through HAProxy as a player would, decodes (`played` counts those). Then the workers
 * have finished exactly one render per segment: `renderedTwice` counts the renders beyond that.
 */
export async function everyWatermarkPlays(
  f: BalancedFarm,
  known: Map<string, string>,
): Promise<{ watermarks: number; played: number; segments: number; renderedTwice: number }> {
  // A dead instance's jobs are taken over once their lease goes stale, so this may take a while.
  const rows = await waitFor(
    async () => {
      const all = await f.watermarkRows();
      const failed = all.filter((w) => w.status === 'FAILED');
      expect(failed, JSON.stringify(failed)).toEqual([]);
      return all.every((w) => w.status === 'READY') ? all : undefined;
    },
    'every watermark to be READY',
    180_000,
    500,
  );
  expect(rows.map((w) => w.id).sort()).toEqual([...known.keys()].sort());
  const work = f.newDir('balanced-fetched');
  let segments = 0;
  let played = 0;
  for (const href of known.values()) {
    segments += await readyAndDecodes({ base: f.lb.url }, href, work);
    played++;
  }
  // A render still under way (of a segment already there) would finish within moments.
  await waitFor(() => (f.rendered() >= segments ? true : undefined), 'every render to finish', 60_000, 250);
  await new Promise((r) => setTimeout(r, 1_000));
  return { watermarks: rows.length, played, segments, renderedTwice: f.rendered() - segments };
}
