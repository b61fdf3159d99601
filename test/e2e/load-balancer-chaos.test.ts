// Faults behind a real load balancer (HAProxy with the sample docs/haproxy.cfg) in front of three `wmark serve`
// instances on one PostgreSQL, Redis and media folder, with two workers, under clients' load through HAProxy. kill -9
// of one instance: only the requests in flight on it fail, sending them again succeeds (the same watermark for the
// same request), and no watermark is lost or rendered twice. A rolling restart of every instance (SIGTERM with a
// drain, start again, back in HAProxy): no request fails at all.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { natural } from '../../harness/fixtures.js';
import type { Stream } from '../../harness/haproxy.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { type BalancedFarm, balancedFarm, clientLoad, everyWatermarkPlays, succeeded } from '../helpers/balanced-farm.js';
import { type Sample, summary } from '../helpers/fault-load.js';

const INSTANCES = 3;
/** The drain the README advises with the sample config: above its checks' inter × fall (1 s × 2). */
const DRAIN_SECONDS = 3;

let pg: TestPostgres;
let redis: TestRedis;
let source: string;
let farm: BalancedFarm | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A readable account of requests, for a failed assertion. */
const shown = (samples: readonly Sample[]) =>
  JSON.stringify(samples.map((s) => ({ kind: s.kind, start: s.start, ms: s.ms, status: s.status, error: s.error, hung: s.hung })));

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'serve instances behind HAProxy, under load', () => {
  beforeAll(async () => {
    [pg, redis, source] = await Promise.all([startPostgres(), startRedis(), natural(8)]);
  }, 120_000);
  afterEach(async () => {
    await farm?.stop();
    farm = undefined;
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), pg?.stop()]);
  });

  it('kill -9 of one instance mid-load: only requests in flight on it fail, they succeed when sent again, and no watermark is lost or rendered twice', async () => {
    const f = await balancedFarm({ pg, redis, source, instances: INSTANCES, workers: 2, label: 'kill9' });
    farm = f;
    const load = await clientLoad(f);
    await sleep(6_000);
    // The victim is killed while a new watermark's POST waits on it for its answer: frozen first (SIGSTOP), so
    // nothing it was doing can finish, then asked of HAProxy; killed if so, else let go on and tried again shortly.
    const victim = f.serves.instances[1]!.proc;
    const name = 'wmark2';
    let doomed: Stream[] = [];
    let killedAt = 0;
    for (const deadline = Date.now() + 60_000; !killedAt; ) {
      expect(Date.now(), `no POST seen waiting on ${name}`).toBeLessThan(deadline);
      victim.kill('SIGSTOP');
      // What it had already sent reaches HAProxy meanwhile.
      await sleep(100);
      doomed = (await f.lb.streams()).filter((s) => s.server === name && s.waiting);
      if (doomed.some((s) => s.method === 'POST')) {
        killedAt = Date.now();
        victim.kill('SIGKILL');
      } else {
        victim.kill('SIGCONT');
        await sleep(300);
      }
    }
    await victim.exited;
    // Long enough for the dead instance's jobs to go stale (20 s) and be taken over, under load.
    await sleep(25_000);
    await load.stop();
    await f.lb.untilServers((s) => s[name]!.status === 'DOWN', `${name} DOWN`);

    const all = load.samples;
    const failed = all.filter((s) => !succeeded(s));
    // Every failure was in flight at the kill: sent before it, and over after it. Each is a POST, since HAProxy sends
    // a GET that met a dead instance to another one; and each POST waiting on the victim at the kill failed.
    const inFlight = failed.filter((s) => s.start < killedAt && s.start + s.ms >= killedAt);
    expect(inFlight, shown(failed)).toEqual(failed);
    // (HAProxy answers 502, or closes the client's connection as the instance did, for a client to decide.)
    expect(failed.filter((s) => s.method !== 'POST' || s.hung || (s.status !== undefined && s.status !== 502))).toEqual([]);
    const posts = doomed.filter((s) => s.method === 'POST').length;
    expect(failed.length, shown(failed)).toBeGreaterThanOrEqual(posts);
    // Sent again, each succeeds; a watermark's POST once more returns the same watermark.
    let retried = 0;
    for (const s of failed) {
      const again = await load.resend(s);
      expect(again.status, `${s.kind} ${s.url}: ${JSON.stringify(again.json)}`).toBeGreaterThanOrEqual(200);
      expect(again.status).toBeLessThan(300);
      if (s.method === 'POST') {
        const once = await load.resend(s);
        expect([once.status, once.json.id]).toEqual([200, again.json.id]);
      }
      retried++;
    }
    const { watermarks, played, renderedTwice } = await everyWatermarkPlays(f, load.watermarks);
    const masked = Object.values(await f.lb.servers()).reduce((n, s) => n + s.redispatches, 0);
    console.log(
      `kill -9 figures: ${all.length} requests, ${failed.length} failed (all in flight at the kill), ${retried} retried ok, ` +
        `${watermarks} watermarks, ${watermarks - played} lost, ${renderedTwice} rendered twice`,
    );
    console.log(`kill -9 failures: ${JSON.stringify(summary(failed))}; requests HAProxy sent to another instance after a failure: ${masked}`);
    expect(posts).toBeGreaterThan(0);
    expect(retried).toBe(failed.length);
    expect(played).toBe(watermarks);
    expect(renderedTwice).toBe(0);
    expect(watermarks).toBeGreaterThan(10);
    expect(all.filter((s) => s.start >= killedAt).length).toBeGreaterThan(100);
  }, 300_000);

  it('rolling restart of every instance under load, each drained first: not one request fails', async () => {
    const f = await balancedFarm({
      pg,
      redis,
      source,
      instances: INSTANCES,
      workers: 2,
      label: 'rolling',
      serveArgs: ['--drain-seconds', String(DRAIN_SECONDS)],
    });
    farm = f;
    const load = await clientLoad(f);
    await sleep(4_000);
    for (let i = 0; i < INSTANCES; i++) {
      const name = `wmark${i + 1}`;
      const { proc } = f.serves.instances[i]!;
      await f.serves.stop(i);
      expect(await proc.exited, proc.stderr()).toBe(0);
      await f.serves.start(i);
      await f.lb.untilServers((s) => s[name]!.status === 'UP', `${name} UP again`, 30_000);
    }
    await sleep(4_000);
    await load.stop();

    const all = load.samples;
    const failed = all.filter((s) => !succeeded(s));
    const longest = Math.max(...all.map((s) => s.ms));
    console.log(`rolling restart figures: ${all.length} requests, ${failed.length} failed, ${INSTANCES} instances restarted, longest answer ${longest} ms`);
    expect(failed, shown(failed)).toEqual([]);
    // HAProxy took each instance out on its /readyz (the drain's 503), before it stopped listening (a Layer4 failure).
    for (let i = 1; i <= INSTANCES; i++) expect(f.lb.log()).toMatch(new RegExp(`Server wmark/wmark${i} is DOWN, reason: Layer7 `));
    expect(f.lb.log()).not.toMatch(/is DOWN, reason: Layer4/);
    // So no request met a closed port: not one needed HAProxy to try it again elsewhere.
    const states = Object.values(await f.lb.servers());
    expect(
      states.map((s) => [s.retries, s.redispatches]),
      JSON.stringify(states),
    ).toEqual(states.map(() => [0, 0]));
    expect(all.length).toBeGreaterThan(300);
    const { watermarks, played, renderedTwice } = await everyWatermarkPlays(f, load.watermarks);
    expect([played, renderedTwice]).toEqual([watermarks, 0]);
  }, 300_000);
});
