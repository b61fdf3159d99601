// `wmark serve --queue` with real processes: a private redis-server, serve, and `wmark worker`s on the same media
// folder (the shared-mount case). Serve renders no segment itself; every segment is rendered once, by the workers, and
// matches an embedded render frame for frame; a worker SIGKILLed mid-job and a serve restarted mid-job lose nothing.
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { until } from '../../harness/cli-helpers.js';
import { frameHashes, killSpawned, renderLines, type SpawnedWorker, spawnWorker } from '../../harness/cluster.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { bearer, call, freePort, ingestOverHttp, keyHeaders, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { FFMPEG } from '../../harness/tools.js';
import { VERSION } from '../../src/version.js';
import { decodesCleanly } from '../helpers/media.js';

let redis: TestRedis;
let source: string;
const dirs: string[] = [];
const serves: SpawnedServe[] = [];
const workers: SpawnedWorker[] = [];

beforeAll(async () => {
  [redis, source] = await Promise.all([startRedis(), natural(20)]);
});
afterEach(async () => {
  await killSpawned(workers, serves);
});
afterAll(async () => {
  await redis?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDir(label: string): string {
  const dir = tempDir(label);
  dirs.push(dir);
  return dir;
}

/** An ffmpeg stand-in that logs each call and sleeps before each segment render (a worker's, or serve's own), then runs the real one. */
function wrapper(dir: string, name: string, sleepSeconds: number): { ffmpeg: string; log: string } {
  const file = path.join(dir, `${name}.sh`);
  const log = path.join(dir, `${name}.log`);
  writeFileSync(
    file,
    ['#!/bin/sh', `printf '%s %s\\n' "$$" "$*" >> '${log}'`, `case "$*" in *filter_script*) sleep ${sleepSeconds};; esac`, `exec '${FFMPEG}' "$@"`, ''].join(
      '\n',
    ),
  );
  chmodSync(file, 0o755);
  return { ffmpeg: file, log };
}

interface Served {
  proc: SpawnedServe;
  base: string;
  headers: Record<string, string>;
}

/** `wmark serve` on `dataDir`, one encoder thread (so an embedded render matches a worker's `--threads 1`), full renders. */
async function serve(dataDir: string, extra: string[], env: Record<string, string> = {}, port?: number): Promise<Served> {
  const proc = spawnServe(dataDir, ['--port', String(port ?? (await freePort())), '--workers', '1', '--render', 'full', ...extra], env);
  serves.push(proc);
  const base = await proc.url;
  const clientId = /client id:\s+(wmc_\S+)/.exec(proc.stderr())?.[1] ?? credentials.get(dataDir)?.clientId;
  const apiKey = /API key:\s+(wmk_\S+)/.exec(proc.stderr())?.[1] ?? credentials.get(dataDir)?.apiKey;
  credentials.set(dataDir, { clientId: clientId!, apiKey: apiKey! });
  const token = (await call(base, 'GET', '/1.0/authenticate/accessToken', { headers: keyHeaders({ clientId: clientId!, apiKey: apiKey! }) })).json
    .token as string;
  return { proc, base, headers: bearer(token) };
}
const credentials = new Map<string, { clientId: string; apiKey: string }>();

/** A worker on serve's media folder; every worker notices a dead worker's task after 2 s (see render-farm-workers). */
async function worker(dataDir: string, ffmpeg: string): Promise<SpawnedWorker> {
  const home = newDir('farm-worker-home');
  const w = await spawnWorker(['--queue', redis.url, '--media', path.join(dataDir, 'media'), '--threads', '1', '--lock-timeout', '2'], {
    WMARK_FFMPEG: ffmpeg,
    WMARK_HOME: home,
    WMARK_CONFIG_DIR: path.join(home, 'config'),
  });
  workers.push(w);
  return w;
}

/** Ingests the 20 s clip and asks for one watermark; returns where its segments go. */
async function watermark(s: Served, dataDir: string, text: string): Promise<{ href: string; dir: string; segments: number }> {
  const { video } = await ingestOverHttp(s.base, s.headers, source, 'farm-clip', '1.0');
  const posted = await call(s.base, 'POST', '/1.0/watermark', { headers: s.headers, body: { key: 'farm-clip', settings: [{ content: text }] } });
  expect(posted.status, posted.text).toBe(201);
  return { href: posted.json.href as string, dir: path.join(dataDir, 'media', 'watermarks', video.id, posted.json.id), segments: video.segments as number };
}

const finished = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /^seg_\d{5}\.ts$/.test(f))
        .sort()
    : [];

/** Polls the job like a client until it is READY with every segment and the mp4. */
async function ready(s: Served, href: string): Promise<void> {
  await waitFor(
    async () => {
      const r = await call(s.base, 'GET', href);
      expect(r.json.status).not.toBe('FAILED');
      return r.json.status === 'READY' && r.json.containers.mp4 ? true : undefined;
    },
    'the watermark to be READY',
    120_000,
    250,
  );
}

const segmentRenders = (log: string) => renderLines(log).length;
/** serve's own segment renders: ffmpeg calls with a filter script (ingest and the mp4 join have none). */
const ownRenders = (log: string) =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('filter_script')).length
    : 0;

describe('wmark serve --queue', () => {
  it('two workers render every segment exactly once between them, serve none, and the result matches an embedded render', async () => {
    const farmDir = newDir('farm-serve');
    const own = wrapper(farmDir, 'serve-ffmpeg', 0);
    const s = await serve(farmDir, ['--queue', redis.url], { WMARK_FFMPEG: own.ffmpeg });
    expect(s.proc.stderr()).toMatch(/render farm: segment renders, ingests and forensic preparation go to redis:\/\/127\.0\.0\.1/);
    const logs = [wrapper(farmDir, 'w1', 0.5), wrapper(farmDir, 'w2', 0.5)];
    const started = await Promise.all(logs.map((l) => worker(farmDir, l.ffmpeg)));
    expect(started[0]!.id).not.toBe(started[1]!.id);

    const job = await watermark(s, farmDir, 'rendered by the farm');
    await ready(s, job.href);
    expect(finished(job.dir)).toHaveLength(job.segments);
    const perWorker = logs.map((l) => segmentRenders(l.log));
    expect(
      perWorker.reduce((a, b) => a + b, 0),
      JSON.stringify(perWorker),
    ).toBe(job.segments);
    expect(
      perWorker.every((n) => n > 0),
      JSON.stringify(perWorker),
    ).toBe(true);
    expect(ownRenders(own.log)).toBe(0);

    // The same request on a serve without --queue.
    const embeddedDir = newDir('farm-embedded');
    const e = await serve(embeddedDir, []);
    const reference = await watermark(e, embeddedDir, 'rendered by the farm');
    await ready(e, reference.href);
    expect(finished(reference.dir)).toEqual(finished(job.dir));
    for (const name of finished(job.dir)) {
      await decodesCleanly(path.join(job.dir, name));
      expect(await frameHashes(path.join(job.dir, name)), name).toEqual(await frameHashes(path.join(reference.dir, name)));
    }

    // `wmark status` on each data folder: where the renders go.
    const farmStatus = await runCli(['--data-dir', farmDir, '--json', 'status']);
    expect(farmStatus.code, farmStatus.stderr).toBe(0);
    expect(farmStatus.json()).toEqual({
      url: s.base,
      pid: s.proc.child.pid,
      ok: true,
      ready: true,
      dependencies: [{ name: 'queue', up: true, location: redis.url }],
      queue: {
        url: redis.url,
        media: path.join(farmDir, 'media'),
        reachable: true,
        depth: { waiting: 0, active: 0 },
        workers: started.map((w) => ({ id: w.id, version: VERSION })).sort((a, b) => a.id.localeCompare(b.id)),
      },
    });
    const text = await runCli(['--data-dir', farmDir, 'status']);
    expect(text.stdout).toContain(
      `workers: 2 (${started
        .map((w) => `${w.id} wmark ${VERSION}`)
        .sort()
        .join(', ')})`,
    );
    const embeddedStatus = await runCli(['--data-dir', embeddedDir, 'status']);
    expect(embeddedStatus.code).toBe(0);
    expect(embeddedStatus.stdout).toContain('renders: in its own process (no --queue)');
    expect(embeddedStatus.stdout).toContain('dependencies: none (state in a SQLite file, renders in its own process)');
    const none = await runCli(['--data-dir', newDir('farm-nobody'), '--json', 'status']);
    expect(none.code).toBe(5);
    expect(none.stderr + none.stdout).toContain('no wmark serve runs on');
  });

  it('a worker SIGKILLed mid-job: another finishes its segment and the job ends READY', async () => {
    const farmDir = newDir('farm-kill');
    const s = await serve(farmDir, ['--queue', redis.url]);
    const slow = wrapper(farmDir, 'doomed', 30);
    const doomed = await worker(farmDir, slow.ffmpeg);
    const job = await watermark(s, farmDir, 'survives a dead worker');
    await until(() => segmentRenders(slow.log) >= 1, 'the doomed worker to start a segment', 60_000, 50);
    doomed.child.kill('SIGKILL');
    expect((await doomed.done).signal).toBe('SIGKILL');

    const fine = wrapper(farmDir, 'rescuer', 0);
    await worker(farmDir, fine.ffmpeg);
    await ready(s, job.href);
    expect(finished(job.dir)).toHaveLength(job.segments);
    expect(segmentRenders(fine.log)).toBe(job.segments);
    for (const name of finished(job.dir)) await decodesCleanly(path.join(job.dir, name));
  });

  it('serve restarted while workers run: the job resumes, no segment is lost or rendered twice', async () => {
    const farmDir = newDir('farm-restart');
    const port = await freePort();
    const first = await serve(farmDir, ['--queue', redis.url], {}, port);
    const logged = wrapper(farmDir, 'steady', 0.7);
    await worker(farmDir, logged.ffmpeg);
    const job = await watermark(first, farmDir, 'survives a serve restart');
    await waitFor(() => (finished(job.dir).length > 0 ? true : undefined), 'the first farm-rendered segment', 60_000, 25);
    first.proc.kill('SIGKILL');
    await first.proc.exited;
    expect(finished(job.dir).length).toBeLessThan(job.segments);

    const second = await serve(farmDir, ['--queue', redis.url], {}, port);
    await ready(second, job.href);
    expect(finished(job.dir)).toHaveLength(job.segments);
    expect(segmentRenders(logged.log)).toBe(job.segments);
  });

  it('Redis restarted empty mid-job: serve queues the segments it still waits for again, and the job ends READY', async () => {
    const farmDir = newDir('farm-redis-restart');
    const s = await serve(farmDir, ['--queue', redis.url]);
    const logged = wrapper(farmDir, 'patient', 0.7);
    await worker(farmDir, logged.ffmpeg);
    const job = await watermark(s, farmDir, 'survives a Redis restart');
    await waitFor(() => (finished(job.dir).length > 0 ? true : undefined), 'the first farm-rendered segment', 60_000, 25);
    await redis.restart();
    expect(finished(job.dir).length).toBeLessThan(job.segments);
    await ready(s, job.href);
    expect(finished(job.dir)).toHaveLength(job.segments);
    for (const name of finished(job.dir)) await decodesCleanly(path.join(job.dir, name));
  });

  it('runs many watermark jobs at once, so that short videos keep many workers busy', async () => {
    const farmDir = newDir('farm-many');
    const s = await serve(farmDir, ['--queue', redis.url]);
    const slow = wrapper(farmDir, 'slow', 3);
    await worker(farmDir, slow.ffmpeg);
    await ingestOverHttp(s.base, s.headers, source, 'farm-clip', '1.0');
    const posted = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(s.base, 'POST', '/1.0/watermark', { headers: s.headers, body: { key: 'farm-clip', settings: [{ content: `reviewer ${i}` }] } }),
      ),
    );
    expect(posted.every((p) => p.status === 201)).toBe(true);
    // Each job queues its opening one segment at a time: more tasks at once than the 8 jobs an embedded serve runs.
    const depth = await waitFor(
      async () => {
        const q = (await call(s.base, 'GET', '/healthz')).json.queue as { depth: { waiting: number; active: number } };
        return q.depth.waiting + q.depth.active >= 12 ? q.depth : undefined;
      },
      'a task from each of the 12 jobs on the queue',
      20_000,
      100,
    );
    expect(depth.active).toBe(1);
  });
});
