// A render farm of real processes for fault tests: `wmark serve --queue` and `wmark worker`s on a private Redis, sharing
// serve's media folder or a bucket, each worker with a logging ffmpeg stand-in; jobs asked for over HTTP and followed
// until READY, every segment fetched through serve and decoded. Everything started is killed after each test.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { killSpawned, type SpawnedWorker, spawnWorker } from '../../harness/cluster.js';
import { tempDir } from '../../harness/fixtures.js';
import { bearer, call, freePort, ingestOverHttp, keyHeaders, parseM3u8, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { finishedRenders, type Load, type Sample, slowWorkerFfmpeg, startedBetween, startLoad, summary } from './fault-load.js';
import { decodesCleanly } from './media.js';

export interface Served {
  proc: SpawnedServe;
  base: string;
  headers: Record<string, string>;
  credentials: { clientId: string; apiKey: string };
}

export interface FarmWorker extends SpawnedWorker {
  /** Its ffmpeg stand-in's log (see slowWorkerFfmpeg). */
  log: string;
}

export interface FaultFarmOptions {
  /** The queue's URL (the test's Redis, which may restart on another process). */
  queue: () => string;
  /** A bucket shared by serve and workers; without it, workers mount serve's media folder. */
  bucket?: { media: string; endpoint: string; env: Record<string, string> };
  /** A folder every serve and worker shares as its media store (several serve instances need one). */
  mediaFolder?: () => string;
  /** The PostgreSQL database every serve keeps its state in: serves then share keys, records and the secret. */
  database?: () => string;
}

export type FaultFarm = ReturnType<typeof faultFarm>;

export function faultFarm(options: FaultFarmOptions) {
  const dirs: string[] = [];
  const serves: SpawnedServe[] = [];
  const workers: SpawnedWorker[] = [];
  const keys = new Map<string, { clientId: string; apiKey: string }>();
  const { bucket } = options;
  const storeArgs = (dataDir: string) =>
    bucket ? ['--media', bucket.media, '--s3-endpoint', bucket.endpoint] : ['--media', options.mediaFolder?.() ?? path.join(dataDir, 'media')];
  const shared = bucket !== undefined || options.mediaFolder !== undefined;

  const newDir = (label: string): string => {
    const dir = tempDir(label);
    dirs.push(dir);
    return dir;
  };

  /** `wmark serve --queue` (full renders, one encoder thread) on `dataDir`, with its store; the same key pair on a restart. */
  const serve = async (dataDir: string, extra: string[] = [], port?: number): Promise<Served> => {
    const args = ['--port', String(port ?? (await freePort())), '--workers', '1', '--render', 'full', '--queue', options.queue()];
    const database = options.database ? ['--db', options.database()] : [];
    const proc = spawnServe(dataDir, [...args, ...(shared ? storeArgs(dataDir) : []), ...database, ...extra], bucket?.env ?? {});
    serves.push(proc);
    const base = await proc.url;
    // Serves on one database share the key the first of them made.
    const scope = options.database ? 'database' : dataDir;
    const credentials = keys.get(scope) ?? {
      clientId: /client id:\s+(wmc_\S+)/.exec(proc.stderr())![1]!,
      apiKey: /API key:\s+(wmk_\S+)/.exec(proc.stderr())![1]!,
    };
    keys.set(scope, credentials);
    const token = (await call(base, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders(credentials) })).json.token as string;
    return { proc, base, headers: bearer(token), credentials };
  };

  /** A worker on serve's store whose segment renders each sleep `sleepSeconds` first; its dead peers' tasks are retaken after 2 s. */
  const worker = async (dataDir: string, name: string, sleepSeconds: number, extra: string[] = [], queue = options.queue()): Promise<FarmWorker> => {
    const home = newDir(`fault-${name}-home`);
    const ffmpeg = slowWorkerFfmpeg(dataDir, name, sleepSeconds);
    const w = await spawnWorker(['--queue', queue, ...storeArgs(dataDir), '--threads', '1', '--lock-timeout', '2', ...extra], {
      ...bucket?.env,
      WMARK_FFMPEG: ffmpeg.ffmpeg,
      WMARK_HOME: home,
      WMARK_CONFIG_DIR: path.join(home, 'config'),
    });
    workers.push(w);
    return { ...w, log: ffmpeg.log };
  };

  return {
    newDir,
    serve,
    worker,
    /** Kills what is still running (after each test). */
    cleanup: () => killSpawned(workers, serves),
    dispose(): void {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Asks for a full render of one viewer's watermark (API 1.0: answered at once); its status link and id. */
export async function startJob(s: Served, key: string, text: string): Promise<{ href: string; id: string }> {
  const posted = await call(s.base, 'POST', '/1.0/watermark', { headers: s.headers, body: { key, containers: ['m3u8'], settings: [{ content: text }] } });
  expect(posted.status, posted.text).toBe(201);
  return { href: posted.json.href as string, id: posted.json.id as string };
}

async function statusOf(s: Pick<Served, 'base'>, href: string): Promise<{ status: string; m3u8?: string }> {
  const r = await call(s.base, 'GET', href);
  return { status: r.json.status as string, m3u8: r.json.containers?.m3u8 as string | undefined };
}

/** Waits until every job plays (1.0 READY) and returns its playlist link. */
async function allPlaying(s: Served, jobs: { href: string }[]): Promise<string[]> {
  return waitFor(
    async () => {
      const states = await Promise.all(jobs.map((j) => statusOf(s, j.href)));
      return states.every((st) => st.status === 'READY' && st.m3u8) ? states.map((st) => st.m3u8!) : undefined;
    },
    'every job to play',
    90_000,
    100,
  );
}

/** Polls until READY with its whole playlist, then fetches every segment through serve and decodes it; how many. */
export async function readyAndDecodes(s: Pick<Served, 'base'>, href: string, work: string): Promise<number> {
  const m3u8 = await waitFor(
    async () => {
      const { status, m3u8 } = await statusOf(s, href);
      expect(status).not.toBe('FAILED');
      return status === 'READY' && m3u8 ? m3u8 : undefined;
    },
    'the watermark to be READY',
    180_000,
    250,
  );
  const text = await waitFor(
    async () => {
      const res = await fetch(m3u8);
      const body = await res.text();
      return res.status === 200 && body.includes('#EXT-X-ENDLIST') ? body : undefined;
    },
    'the whole playlist',
    180_000,
    250,
  );
  const segments = parseM3u8(text).segments;
  for (const [i, seg] of segments.entries()) {
    const res = await fetch(new URL(seg.uri, m3u8));
    expect(res.status).toBe(200);
    const file = path.join(work, `${path.basename(new URL(href).pathname)}-${i}.ts`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    await decodesCleanly(file);
  }
  return segments.length;
}

/** Sends SIGTERM (twice, 300 ms apart, when asked) and resolves with how long the process took to exit. */
export async function stopTimed(signal: (s: NodeJS.Signals) => void, exited: Promise<unknown>, signals = 1): Promise<number> {
  const started = Date.now();
  signal('SIGTERM');
  if (signals > 1) {
    await new Promise((r) => setTimeout(r, 300));
    signal('SIGTERM');
  }
  await exited;
  const ms = Date.now() - started;
  console.log(`shutdown figure: exited ${ms} ms after the ${signals > 1 ? 'first of two SIGTERMs' : 'SIGTERM'}`);
  return ms;
}

/** The lines of `text` that match. */
const linesMatching = (text: string, pattern: RegExp) => text.split('\n').filter((l) => pattern.test(l));

/** Load on every kind of request that exists before the fault: health routes, the API, a status link, signed media. */
async function loadEveryKind(s: Served, statusLink: string, playlist: string): Promise<Load> {
  const segment = new URL(parseM3u8(await (await fetch(playlist)).text()).segments[0]!.uri, playlist).toString();
  const key = keyHeaders(s.credentials);
  return startLoad(s.base, [
    { kind: 'readyz', method: 'GET', target: '/readyz' },
    { kind: 'healthz', method: 'GET', target: '/healthz' },
    { kind: 'token', method: 'GET', target: '/1.0/authenticate/accessToken', headers: key },
    { kind: 'videos', method: 'GET', target: '/2.0/videos', headers: key },
    { kind: 'status link', method: 'GET', target: statusLink },
    { kind: 'playlist', method: 'GET', target: playlist },
    { kind: 'segment', method: 'GET', target: segment },
  ]);
}

/** New work asked for again and again, as a client that retries would: a 2.0 watermark of `key`, and an ingest of `source`. */
export function askForWork(s: Served, key: string, source: string, text: string): Load {
  const headers = keyHeaders(s.credentials);
  const body = { key, containers: ['m3u8'], settings: [{ content: text }] };
  return startLoad(s.base, [
    { kind: 'new watermark 2.0', method: 'POST', target: '/2.0/watermark', headers, body },
    { kind: 'ingest', method: 'POST', target: '/2.0/videos', headers, body: { sourceUrl: source, key: `${key}-later` } },
  ]);
}

/** The first answer of `kind` sent at `since` or later with `status` (any 2xx for 200), once there is one. */
export function answered(load: Load, kind: string, since: number, status: number, what: string, timeoutMs = 20_000): Promise<Sample> {
  const matches = (x: Sample) => x.status !== undefined && (status === 200 ? x.status >= 200 && x.status < 300 : x.status === status);
  return waitFor(() => load.samples.find((x) => x.kind === kind && x.start >= since && matches(x)), what, timeoutMs, 50);
}

/**
 * What the requests sent during an outage ([from, to)) were answered: none hung or failed to connect at all, none
 * took over 5 s, and each kind (more than 3 of it) was answered `expected[kind]` every time, a 503 with Retry-After.
 */
export function expectOutageAnswers(all: readonly Sample[], from: number, to: number, expected: Record<string, { status: number; code?: string }>): void {
  expect(
    all.filter((x) => x.hung || x.error),
    JSON.stringify(summary(all)),
  ).toEqual([]);
  const down = startedBetween(all, from, to);
  const shown = JSON.stringify(summary(down));
  // The figures the run measured, for the log (a report quotes them).
  const ms = down.map((x) => x.ms).sort((a, b) => a - b);
  console.log(
    `outage figures: ${all.length} requests, ${all.filter((x) => x.hung).length} hung; ${down.length} started while down: ` +
      `slowest ${ms.at(-1)} ms, median ${ms[Math.floor(ms.length / 2)]} ms`,
  );
  expect(Math.max(...down.map((x) => x.ms)), shown).toBeLessThanOrEqual(5_000);
  for (const [kind, { status, code }] of Object.entries(expected)) {
    const of = down.filter((x) => x.kind === kind);
    expect(of.length, `${kind}: ${shown}`).toBeGreaterThan(3);
    for (const x of of) expect({ status: x.status, code: code && x.code }, `${kind}: ${shown}`).toEqual({ status, code });
    if (status === 503) for (const x of of) expect(x.retryAfter, `${kind}: ${shown}`).toBe('5');
  }
}

/**
 * serve, two workers whose renders take 2 s each, a clip of `source` and three viewers' full renders of it that play
 * and are still rendering, and load on every kind of request that exists by then (running for a second already).
 */
export async function busyFarm(farm: FaultFarm, label: string, source: string) {
  const dir = farm.newDir(label);
  const s = await farm.serve(dir);
  const workers = [await farm.worker(dir, 'w1', 2), await farm.worker(dir, 'w2', 2)];
  const { video } = await ingestOverHttp(s.base, s.headers, source, 'fault-clip', '1.0');
  const jobs = await Promise.all(['first', 'second', 'third'].map((t) => startJob(s, 'fault-clip', `viewer ${t}`)));
  const [playlist] = await allPlaying(s, jobs);
  const load = await loadEveryKind(s, jobs[0]!.href, playlist!);
  await new Promise((r) => setTimeout(r, 1_000));
  /** Segment renders the two workers finished. */
  const rendered = () => workers.reduce((n, w) => n + finishedRenders(w.log), 0);
  return { s, workers, segments: video.segments, jobs, load, rendered };
}

/** Every job ends READY and every segment of each decodes; then `renders` renders in all are finished, and no more. */
export async function everyJobDecodes(
  farm: FaultFarm,
  s: Served,
  jobs: { href: string }[],
  rendered: () => number,
  renders: { atLeast: number; atMost: number },
) {
  const work = farm.newDir('fault-fetched');
  let segments = 0;
  for (const job of jobs) segments += await readyAndDecodes(s, job.href, work);
  await waitFor(() => (rendered() >= renders.atLeast ? true : undefined), 'every render to finish', 120_000, 250);
  await new Promise((r) => setTimeout(r, 1_000));
  expect(rendered()).toBeLessThanOrEqual(renders.atMost);
  return segments;
}

/** One line in each log when `label` was lost and one when it was back; no line per reconnect attempt. */
export function expectQuietReconnects(logs: string[], label: 'queue' | 'media store', scheme: 'redis' | 's3'): void {
  for (const text of logs) {
    expect(linesMatching(text, new RegExp(`${label}: lost ${scheme}:`)), text).toHaveLength(1);
    expect(linesMatching(text, new RegExp(`${label}: ${scheme}:\\S+ answers again after \\d+ s`)), text).toHaveLength(1);
    expect(
      linesMatching(text, /ECONNREFUSED|ECONNRESET/).filter((l) => !/: lost /.test(l)),
      text,
    ).toEqual([]);
  }
}
