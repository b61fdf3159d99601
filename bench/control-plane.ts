// Suite `control-plane`: what the control plane on PostgreSQL costs and how it spreads, all in one run on this machine.
//   1. Throughput through HAProxy (the sample docs/haproxy.cfg) of three requests: a POST of a watermark that exists
//      (2.0), a GET of its 2.0 href, and a signed segment GET, with 1, 2 and 3 `wmark serve --db` instances (one
//      PostgreSQL, one Redis, one media folder), as ratios to one embedded SQLite serve behind the same HAProxy.
//   2. Latency per API call, straight to one instance: PostgreSQL against SQLite, one request at a time.
//   3. Database transactions per call and per new watermark (pg_stat_database, idle background subtracted), and a
//      projection to 10 and 100 instances against the PostgreSQL capacity measured here, naming what saturates first.
//   4. The repeated POST answered from what an instance keeps (a hit) against an instance that keeps nothing
//      (WMARK_REQUEST_CACHE_SECONDS=0: every POST a miss), under load, and the instances one PostgreSQL carries as a
//      function of the share of POSTs that hit.
// Every instance shares the machine's cores with PostgreSQL, HAProxy and the load generator: on a small machine more
// instances cannot mean more throughput, and the table says what the ratios are then worth.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pgDriver from 'pg';
import { spawnWorker } from '../harness/cluster.js';
import { startHaproxy } from '../harness/haproxy.js';
import { startPostgres } from '../harness/postgres.js';
import { startRedis } from '../harness/redis.js';
import { call, freePort, waitFor } from '../harness/serve-helpers.js';
import { commits, explainPrepared, roundTripCost } from './control-plane-database.js';
import { clockTick, closedLoop, cpuMeter, type Load, type SplitWindow, sender } from './control-plane-load.js';
import {
  type CountedOp,
  HIT_SHARES,
  INSTANCES,
  ONE_PG,
  OPS,
  type Op,
  PER_CALL,
  PROJECTED,
  parseOptions,
  prepare,
  serveOn,
  type Target,
  UNCACHED,
  World,
} from './control-plane-setup.js';
import { percentile, spread } from './lib/cluster-figures.js';
import { median } from './lib/measure.js';
import { PG_KINDS, type PgKind } from './lib/pg-processes.js';
import { projectByCpu, projectByHitShare } from './lib/process-cpu.js';
import { fmt, formatMachine, OUT_DIR, type Suite, type SuiteContext, table, warnIfDistStale } from './lib/suite.js';
import { sourceClip } from './lib/video.js';

export const suite: Suite = {
  name: 'control-plane',
  description: 'serve instances on PostgreSQL behind HAProxy (1-3) vs one SQLite serve: throughput, latency per call, database transactions, projection',
  async run(ctx: SuiteContext) {
    const o = parseOptions(ctx);
    warnIfDistStale(ctx.log);
    const runDir = path.join(OUT_DIR, 'control-plane-run');
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true });
    const world = new World();
    try {
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
      const pgServes: Awaited<ReturnType<typeof serveOn>>[] = [];
      for (const i of [1, 2, 3]) pgServes.push(await serveOn(world, path.join(runDir, `serve-${i}`), shared));
      world.workers.push(await spawnWorker(['--queue', world.redis.url, '--media', media], { WMARK_HOME: path.join(runDir, 'worker') }));
      const sqlite = await serveOn(world, path.join(runDir, 'serve-sqlite'), ['--render', 'full', '--trust-proxy', '127.0.0.1', '--public-url', publicUrl]);
      const pgCred = pgServes[0]!.cred!;
      const pgTarget = await prepare(pgServes[0]!.base, pgCred, clip.path, 'bench-pg');
      const sqliteTarget = await prepare(sqlite.base, sqlite.cred!, clip.path, 'bench-sqlite');

      // 1. Throughput through the load balancer, rounds alternating the configurations' order; with one instance on
      // PostgreSQL, the CPU that instance and PostgreSQL use too.
      const tickS = clockTick();
      // The LISTEN connections' client ports, to tell the instance's apart from its pool's (read again when one is new).
      let listenPorts = new Set<number>();
      const readListenPorts = async () => {
        const rows = await pg.query<{ port: number }>(url, "SELECT client_port AS port FROM pg_stat_activity WHERE query LIKE 'LISTEN %'");
        listenPorts = new Set(rows.map((r) => r.port));
      };
      await readListenPorts();
      const meter = cpuMeter(pgServes[0]!.proc.child.pid!, pg.serverPid(), tickS, () => listenPorts);
      const configs = [
        { name: 'SQLite, 1 instance', ports: [sqlite.port], target: sqliteTarget },
        ...INSTANCES.map((n) => ({ name: `PostgreSQL, ${n} instance${n > 1 ? 's' : ''}`, ports: pgServes.slice(0, n).map((s) => s.port), target: pgTarget })),
      ];
      const loads = new Map<string, Load[]>();
      for (let r = 1; r <= ctx.args.rounds; r++) {
        const order = r % 2 ? configs : [...configs].reverse();
        for (const c of order) {
          world.lb = await startHaproxy({ backends: c.ports, port: lbPort });
          await world.lb.untilServers((s) => Object.values(s).filter((x) => x.status === 'UP').length === c.ports.length, 'every instance UP', 30_000);
          for (const op of OPS) {
            const load = await closedLoop(sender(publicUrl, c.target, op), o.concurrency, o.seconds, c.name === ONE_PG ? meter : undefined);
            ctx.log(`round ${r}: ${c.name}, ${op}: ${fmt(load.perS, 0)}/s (p50 ${fmt(load.p50, 1)} ms, p95 ${fmt(load.p95, 1)} ms, ${load.failed} failed)`);
            const key = `${c.name}|${op}`;
            loads.set(key, [...(loads.get(key) ?? []), load]);
          }
          await world.lb.stop();
          world.lb = undefined;
        }
      }

      // 2. Latency per call, one request at a time, straight to one instance.
      const latency = async (base: string, t: Target, op: Op) => {
        const send = sender(base, t, op);
        const ms: number[] = [];
        for (let i = 0; i < o.samples; i++) {
          const start = performance.now();
          const status = await send();
          if (status >= 300) throw new Error(`${op} through ${base}: ${status}`);
          ms.push(performance.now() - start);
        }
        return ms;
      };
      const latencies = [];
      for (const op of OPS) {
        const [p, s] = [await latency(pgServes[0]!.base, pgTarget, op), await latency(sqlite.base, sqliteTarget, op)];
        latencies.push({ op, pg: { p50: median(p), p95: percentile(p, 95) }, sqlite: { p50: median(s), p95: percentile(s, 95) } });
      }

      // 3. Transactions, with one instance left: its idle background (sweeps for unfinished jobs) per second, then per
      // call and per new watermark with that subtracted.
      for (const extra of pgServes.slice(1)) extra.proc.kill('SIGTERM');
      await Promise.all(pgServes.slice(1).map((extra) => extra.proc.exited));
      // An instance that keeps no answer: every repeated POST it gets reads the database (what a miss costs).
      const uncached = await serveOn(world, path.join(runDir, 'serve-uncached'), shared, { WMARK_REQUEST_CACHE_SECONDS: '0' });
      const idleWindows: number[] = [];
      for (let i = 0; i < 3; i++) {
        const [from, t0] = [await commits(pg, url), Date.now()];
        await new Promise((r) => setTimeout(r, 3000));
        idleWindows.push(((await commits(pg, url)) - from) / ((Date.now() - t0) / 1000));
      }
      ctx.log(`idle transactions/s, 3 windows: ${idleWindows.map((x) => fmt(x, 1)).join(', ')}`);
      const idlePerS = median(idleWindows);
      const perCall = async (op: CountedOp) => {
        const send = op === UNCACHED ? sender(uncached.base, pgTarget, 'POST existing watermark') : sender(pgServes[0]!.base, pgTarget, op);
        const n = PER_CALL;
        const [from, t0] = [await commits(pg, url), Date.now()];
        for (let i = 0; i < n; i++) await send();
        return Math.max(0, (await commits(pg, url)) - from - (idlePerS * (Date.now() - t0)) / 1000) / n;
      };
      const txPerCall = {} as Record<CountedOp, number>;
      // Where PostgreSQL's time for each call goes: its statements' calls, planning and execution per call, and the
      // sessions opened meanwhile (a pool that churns connections pays for authentication on each).
      await pg.query(url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      const sessions = async () =>
        Number((await pg.query<{ n: string }>(url, 'SELECT sessions::text AS n FROM pg_stat_database WHERE datname = current_database()'))[0]?.n ?? 0);
      const spent: { op: CountedOp; sessions: number; roundTrips: number; statements: { query: string; perCall: number; planUs: number; execUs: number }[] }[] =
        [];
      let hottest = '';
      /** Each statement's calls during each kind of call's run. */
      const callsByOp = new Map<CountedOp, { query: string; calls: number }[]>();
      for (const op of [...OPS, UNCACHED] as const) {
        await pg.query(url, 'SELECT pg_stat_statements_reset()');
        const before = await sessions();
        txPerCall[op] = await perCall(op);
        const rows = await pg.query<{ query: string; calls: number; plan: number; exec: number }>(
          url,
          `SELECT regexp_replace(query, '[[:space:]]+', ' ', 'g') AS query, calls::int AS calls, total_plan_time AS plan, total_exec_time AS exec FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%xact_commit%'
           ORDER BY total_plan_time + total_exec_time DESC`,
        );
        // The lookup a repeated POST makes when it is not kept: the costliest statement of the instance that keeps nothing.
        if (op === UNCACHED) hottest = rows[0]?.query ?? '';
        callsByOp.set(op, rows);
        spent.push({
          op,
          sessions: (await sessions()) - before,
          // Every statement the instance sent (BEGIN, COMMIT, SET and SELECT 1 too: utility statements are tracked), each one round trip.
          roundTrips: rows.reduce((n, r) => n + r.calls, 0) / PER_CALL,
          statements: rows.slice(0, 5).map((r) => ({
            query: r.query.length > 110 ? `${r.query.slice(0, 107)}...` : r.query,
            perCall: r.calls / PER_CALL,
            planUs: (r.plan / r.calls) * 1000,
            execUs: (r.exec / r.calls) * 1000,
          })),
        });
      }
      // What the repeated POST's statement does on the server: its plan, rows and buffers, run as the instance runs it
      // (prepared, a generic plan after five runs).
      const explained = await explainPrepared(url, hottest, [pgTarget.watermarkId, 'bench-pg']);
      const fresh = 5;
      await pg.query(url, 'SELECT pg_stat_statements_reset()');
      const [from, t0] = [await commits(pg, url), Date.now()];
      const stopFresh = meter();
      for (let i = 0; i < fresh; i++) {
        const body = { ...(pgTarget.body as object), settings: [{ content: `new viewer ${randomBytes(4).toString('hex')}` }] };
        const w = await call(pgServes[0]!.base, 'POST', '/2.0/watermark', { headers: pgTarget.headers, body });
        // Watched in the shared media folder, not through the API: the count is the watermark's own, not the observer's.
        const playlist = path.join(media, 'watermarks', w.json.videoId as string, w.json.id as string, 'video.m3u8');
        await waitFor(
          async () => ((await readFile(playlist, 'utf8').catch(() => '')).includes('#EXT-X-ENDLIST') ? true : undefined),
          'the whole playlist',
          120_000,
          100,
        );
      }
      const freshCpu = stopFresh(fresh);
      const freshSeconds = (Date.now() - t0) / 1000;
      const txPerWatermark = Math.max(0, (await commits(pg, url)) - from - (idlePerS * (Date.now() - t0)) / 1000) / fresh;
      // What those transactions were: each statement's calls per new watermark (the idle sweeps included), this
      // bench's own reads left out.
      const statements = (
        await pg.query<{ query: string; calls: number }>(
          url,
          `SELECT regexp_replace(query, '[[:space:]]+', ' ', 'g') AS query, calls::int AS calls FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%xact_commit%'
           ORDER BY calls DESC, query`,
        )
      ).map((r) => ({ perWatermark: r.calls / fresh, query: r.query.length > 150 ? `${r.query.slice(0, 147)}...` : r.query }));

      // PostgreSQL's capacity here: the hottest read (a watermark by id) from 16 clients for 3 s.
      const pool = new pgDriver.Pool({ connectionString: url, max: 16 });
      const id = (await pg.query<{ id: string }>(url, 'SELECT id FROM watermarks LIMIT 1'))[0]!.id;
      let done = 0;
      const capEnd = Date.now() + 3000;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (Date.now() < capEnd) {
            await pool.query('SELECT * FROM watermarks WHERE id = $1', [id]);
            done++;
          }
        }),
      );
      await pool.end();
      const capacity = done / 3;

      // What one round trip costs PostgreSQL whatever the statement: its CPU per call of a prepared `SELECT 1`, against
      // the repeated POST's statement, both from a pool as an instance's (10 connections, 16 calls in flight, a call's
      // messages in one write), in alternating windows.
      const roundTrip = await roundTripCost(pg, url, hottest, [pgTarget.watermarkId, 'bench-pg'], tickS);

      // 4. The repeated POST straight to an instance, one that keeps answers (nearly every request a hit: the bench asks
      // for the same watermark) against one that keeps none (every request a miss), in alternating windows under load.
      const uncachedMeter = cpuMeter(uncached.proc.child.pid!, pg.serverPid(), tickS, () => listenPorts);
      await readListenPorts();
      const hitMiss = { hit: [] as Load[], miss: [] as Load[] };
      // The lookup's calls in each hit window (the warm-up's included), against the requests sent.
      const lookupCalls = async () =>
        Number(
          (
            await pg.query<{ n: string }>(
              url,
              `SELECT COALESCE(SUM(calls), 0)::text AS n FROM pg_stat_statements WHERE regexp_replace(query, '[[:space:]]+', ' ', 'g') = $1`,
              [hottest],
            )
          )[0]?.n ?? 0,
        );
      const hitLookups = { lookups: 0, sent: 0 };
      for (let r = 1; r <= ctx.args.rounds; r++) {
        const kinds = [
          { kind: 'hit' as const, base: pgServes[0]!.base, meter },
          { kind: 'miss' as const, base: uncached.base, meter: uncachedMeter },
        ];
        for (const k of r % 2 ? kinds : kinds.reverse()) {
          if (k.kind === 'hit') await pg.query(url, 'SELECT pg_stat_statements_reset()');
          const load = await closedLoop(sender(k.base, pgTarget, 'POST existing watermark'), o.concurrency, o.seconds, k.meter);
          if (k.kind === 'hit') {
            hitLookups.lookups += await lookupCalls();
            hitLookups.sent += load.sent;
          }
          ctx.log(`round ${r}: repeated POST, ${k.kind}: ${fmt(load.perS, 0)}/s (p50 ${fmt(load.p50, 1)} ms, ${load.failed} failed)`);
          hitMiss[k.kind].push(load);
        }
      }
      const perPost = (kind: 'hit' | 'miss') => {
        const windows = hitMiss[kind].flatMap((l) => (l.cpu ? [l.cpu] : []));
        const us = (w: SplitWindow, s: number) => (s / w.requests) * 1e6;
        return {
          projection: projectByCpu(windows, kind === 'hit' ? txPerCall['POST existing watermark'] : txPerCall[UNCACHED], tickS),
          instanceUs: windows.map((w) => us(w, w.instanceS)),
          databaseUs: windows.map((w) => us(w, w.databaseS)),
          perS: hitMiss[kind].map((l) => l.perS),
        };
      };
      const [hit, miss] = [perPost('hit'), perPost('miss')];
      const roundTripsOf = (op: CountedOp) => spent.find((x) => x.op === op)?.roundTrips ?? 0;
      // What share of the repeated POSTs were answered from what was kept: the lookup's calls against the requests (one
      // at a time, against the instance that keeps nothing; under load, against the requests sent).
      const lookupsOf = (op: CountedOp) => (callsByOp.get(op) ?? []).filter((r) => r.query === hottest).reduce((n, r) => n + r.calls, 0);
      const hitShare = {
        sequential: lookupsOf(UNCACHED) > 0 ? 1 - lookupsOf('POST existing watermark') / lookupsOf(UNCACHED) : NaN,
        underLoad: hitLookups.sent > 0 ? 1 - hitLookups.lookups / hitLookups.sent : NaN,
      };
      // A mix of hits and misses: each one's CPU in the instance and in PostgreSQL, weighed by the share. PostgreSQL's
      // CPU on hits is mostly under one clock tick a window: pooled over the windows, and at least one tick (the
      // projections with hits are then lower bounds, ">=").
      const hitRequests = hitMiss.hit.reduce((n, l) => n + (l.cpu?.requests ?? 0), 0);
      const tickUsPerHit = (tickS / Math.max(1, hitRequests)) * 1e6;
      const hitCost = { instanceUs: median(hit.instanceUs), databaseUs: Math.max(hit.projection.databaseUs, tickUsPerHit) };
      const hitFloored = hit.projection.databaseUs < tickUsPerHit;
      const missCost = { instanceUs: median(miss.instanceUs), databaseUs: median(miss.databaseUs) };
      const byHitShare = HIT_SHARES.map((h) => ({ h, atLeast: hitFloored && h > 0, ...projectByHitShare(hitCost, missCost, h) }));

      // ---- report
      const med = (key: string, f: (l: Load) => number) => median((loads.get(key) ?? []).map(f));
      const rows = configs.flatMap((c) =>
        OPS.map((op) => {
          const key = `${c.name}|${op}`;
          const base = med(`${configs[0]!.name}|${op}`, (l) => l.perS);
          const perS = (loads.get(key) ?? []).map((l) => l.perS);
          return [
            c.name,
            op,
            `${fmt(
              med(key, (l) => l.perS),
              0,
            )} (${spread(perS, 0)})`,
            fmt(med(key, (l) => l.perS) / base, 2),
            fmt(
              med(key, (l) => l.p95),
              1,
            ),
            med(key, (l) => l.failed),
          ];
        }),
      );
      const onePg = (op: Op) => med(`${ONE_PG}|${op}`, (l) => l.perS);
      const projection = PROJECTED.map((n) => {
        const perOp = OPS.map((op) => ({ op, load: n * onePg(op) * txPerCall[op] }));
        const worst = perOp.reduce((a, b) => (b.load > a.load ? b : a));
        return { n, perOp, worst, share: worst.load / capacity };
      });
      const saturating = OPS.filter((op) => txPerCall[op] > 0).map((op) => ({ op, instances: capacity / (onePg(op) * txPerCall[op]) }));
      const first = saturating.reduce((a, b) => (b.instances < a.instances ? b : a), saturating[0] ?? { op: 'none', instances: Number.POSITIVE_INFINITY });
      // The projection by CPU: each request's CPU in the instance's tree against PostgreSQL's, over every round's
      // one-instance window, which does not depend on who won the shared cores meanwhile.
      const byCpu = OPS.map((op) => ({
        op,
        ...projectByCpu(
          (loads.get(`${ONE_PG}|${op}`) ?? []).flatMap((l) => (l.cpu ? [l.cpu] : [])),
          txPerCall[op],
          tickS,
        ),
      }));
      const cpuFirst = byCpu.reduce((a, b) => (b.instances < a.instances ? b : a));
      // PostgreSQL's CPU per request by the kind of process that used it, over the same windows.
      const split = OPS.map((op) => {
        const windows = (loads.get(`${ONE_PG}|${op}`) ?? []).flatMap((l) => (l.cpu ? [l.cpu] : []));
        const requests = windows.reduce((n, w) => n + w.requests, 0);
        const seconds = windows.reduce((n, w) => n + w.databaseS, 0);
        return {
          op,
          usByKind: Object.fromEntries(PG_KINDS.map((k) => [k, (windows.reduce((n, w) => n + w.databaseByKind[k], 0) / requests) * 1e6])) as Record<
            PgKind,
            number
          >,
          requests,
          totalUs: (seconds / requests) * 1e6,
        };
      });
      const pct = (x: number) => (Number.isFinite(x) ? `${fmt(x * 100, 1)} %` : '-');
      const carried = (p: { instances: number; atLeast: boolean }) => `${p.atLeast ? '>= ' : ''}${fmt(p.instances, 1)}`;
      const freshDbUs = (freshCpu.databaseS / fresh) * 1e6;
      const lines = [
        '',
        '== bench control-plane: serve instances on PostgreSQL behind HAProxy ==',
        formatMachine(ctx.machine),
        `clip: ${clip.path} (${clip.width}x${clip.height}, ${clip.seconds} s); ${o.concurrency} requests in flight, ${o.seconds} s per run after a 1-s warm-up, ${ctx.args.rounds} rounds (median, spread min-max)`,
        `every instance, PostgreSQL (${(await pg.query<{ server_version: string }>(url, 'SHOW server_version'))[0]!.server_version}), Redis, HAProxy and this load generator share ${ctx.machine.availableParallelism} cores`,
        '',
        table(['configuration (through HAProxy)', 'request', 'requests/s', 'vs SQLite', 'p95 ms', 'failed'], rows),
        '',
        '-- latency per call, one at a time, straight to one instance (ms) --',
        table(
          ['request', 'PostgreSQL p50', 'p95', 'SQLite p50', 'p95', 'PostgreSQL / SQLite p50'],
          latencies.map((l) => [l.op, fmt(l.pg.p50, 2), fmt(l.pg.p95, 2), fmt(l.sqlite.p50, 2), fmt(l.sqlite.p95, 2), fmt(l.pg.p50 / l.sqlite.p50, 2)]),
        ),
        '',
        '-- database transactions (pg_stat_database xact_commit, idle background subtracted) --',
        `idle background of the two instances left (one keeps answers, one keeps none): ${fmt(idlePerS, 1)}/s (median of three 3-s windows: ${idleWindows.map((x) => fmt(x, 1)).join(', ')})`,
        ...OPS.map((op) => `${op}: ${fmt(txPerCall[op], 2)} per request`),
        `where PostgreSQL's time goes, ${PER_CALL} calls one at a time (pg_stat_statements, the 5 costliest; sessions opened meanwhile, 3 of them the bench's own):`,
        ...spent.flatMap((x) => [
          `  ${x.op}: ${x.sessions} sessions, ${fmt(x.roundTrips, 2)} statements (round trips) per call`,
          ...x.statements.map(
            (st) =>
              `    ${fmt(st.perCall, 2).padStart(5)}/call  plan ${fmt(st.planUs, 0).padStart(4)} us  exec ${fmt(st.execUs, 0).padStart(4)} us  ${st.query}`,
          ),
        ]),
        `the repeated POST's statement on the server (prepared, after six runs): ${explained.columns} columns, ${explained.rowBytes} bytes of values in its row; EXPLAIN (ANALYZE, BUFFERS, VERBOSE):`,
        ...explained.plan.map((l) => `    ${l.length > 160 ? `${l.slice(0, 157)}...` : l}`),
        `a new watermark (POST, every segment rendered on the farm, READY with its whole playlist): ${fmt(txPerWatermark, 1)}; its statements, calls per watermark (idle sweeps included):`,
        ...statements.map((st) => `  ${fmt(st.perWatermark, 1).padStart(5)}  ${st.query}`),
        '',
        `-- projection by CPU: instances one PostgreSQL carries (CPU per request in the one instance's process tree / in every PostgreSQL process, over the ${ONE_PG} windows above, ${fmt(tickS * 1000, 0)}-ms ticks) --`,
        table(
          ['request', 'instance CPU us/request', 'PostgreSQL CPU us/request', 'us/transaction', 'instances one PostgreSQL carries'],
          byCpu.map((c) => [
            c.op,
            fmt(c.instanceUs, 0),
            fmt(c.databaseUs, 0),
            Number.isFinite(c.databaseUsPerTx) ? fmt(c.databaseUsPerTx, 0) : '-',
            carried(c),
          ]),
        ),
        `PostgreSQL's CPU per request by the kind of process that used it (us per request; one ${fmt(tickS * 1000, 0)}-ms tick over the windows is ${split.map((x) => `${fmt((tickS / x.requests) * 1e6, 1)} us for ${x.op}`).join(', ')}):`,
        table(['process', ...OPS], [...PG_KINDS.map((k) => [k, ...split.map((x) => fmt(x.usByKind[k], 1))]), ['all', ...split.map((x) => fmt(x.totalUs, 1))]]),
        `one round trip, whatever the statement (a prepared call from a pool like an instance's, ${roundTrip.calls} calls a window, the kinds in turn, median (min-max) of ${roundTrip.usPerCall['SELECT 1']!.length} windows each): ${Object.entries(
          roundTrip.usPerCall,
        )
          .map(([k, v]) => `${k} ${fmt(median(v), 0)} us of PostgreSQL CPU (${spread(v, 0)})`)
          .join(
            ', ',
          )}; at the instance's ${fmt(byCpu[0]!.instanceUs, 0)} us per repeated POST, a request of one round trip lets one PostgreSQL carry at most ${fmt(byCpu[0]!.instanceUs / median(roundTrip.usPerCall['SELECT 1']!), 1)} instances, and this statement ${fmt(byCpu[0]!.instanceUs / median(roundTrip.usPerCall["the repeated POST's statement"]!), 1)}`,
        `assumes: the database's machine has as many cores as each instance's, each instance busy at full speed with that one request, and PostgreSQL's CPU the limit (its disk, locks and connections not); ">=": PostgreSQL used under one tick`,
        `a new watermark (the ${fresh} above): ${fmt(freshDbUs, 0)} us of PostgreSQL CPU each, ${txPerWatermark > 0 ? fmt(freshDbUs / txPerWatermark, 0) : '-'} us per transaction (its renders' job writes and one instance's idle background over ${fmt(freshSeconds, 0)} s included)`,
        '',
        `-- projection by throughput, contended on one machine: the load generator, the instances, HAProxy and PostgreSQL shared ${ctx.machine.availableParallelism} cores for both figures, so it mostly measures who won the CPU --`,
        `PostgreSQL capacity measured here: ${fmt(capacity, 0)} reads/s of a watermark by id from 16 connections (one server on this ${ctx.machine.availableParallelism}-core machine)`,
        'N instances each as busy as the one instance above, against that capacity:',
        table(
          ['instances', ...OPS.map((op) => `${op} tx/s`), 'worst share of capacity'],
          projection.map((p) => [String(p.n), ...p.perOp.map((x) => fmt(x.load, 0)), `${fmt(p.share * 100, 0)} %`]),
        ),
        `targets: a repeated POST in <= 1 transaction (${fmt(txPerCall['POST existing watermark'], 2)}), a new watermark in <= 12 (${fmt(txPerWatermark, 1)}), PostgreSQL at >= 0.8x SQLite's POST throughput on one instance (${fmt(onePg('POST existing watermark') / med(`${configs[0]!.name}|POST existing watermark`, (l) => l.perS), 2)}x), one PostgreSQL for >= 20 instances (by CPU, which does not depend on how this machine's cores were shared: ${carried(cpuFirst)} for ${cpuFirst.op}; contended throughput: ${fmt(first.instances, 1)})`,
        '',
        `-- the repeated POST, kept or not, under load (straight to one instance, ${o.concurrency} in flight, ${ctx.args.rounds} alternating windows of ${o.seconds} s each; median (min-max) over the windows) --`,
        `share of this bench's repeated POSTs answered from what the instance kept (1 - the lookup's calls / requests): ${pct(hitShare.underLoad)} in the hit windows under load, ${pct(hitShare.sequential)} over the ${PER_CALL} calls one at a time above (it asks for one watermark again and again: only the first request after each lifetime, change notice or read that a notice raced reads); the instance that keeps nothing answers every one from the database`,
        table(
          ['repeated POST', 'requests/s', 'statements/call', 'instance CPU us/request', 'PostgreSQL CPU us/request', 'instances one PostgreSQL carries'],
          [['kept (hit)', hit, roundTripsOf('POST existing watermark')] as const, ['not kept (miss)', miss, roundTripsOf(UNCACHED)] as const].map(
            ([name, x, trips]) => [
              name,
              `${fmt(median(x.perS), 0)} (${spread(x.perS, 0)})`,
              fmt(trips, 3),
              `${fmt(median(x.instanceUs), 0)} (${spread(x.instanceUs, 0)})`,
              `${fmt(median(x.databaseUs), 1)} (${spread(x.databaseUs, 1)})`,
              carried(x.projection),
            ],
          ),
        ),
        'instances one PostgreSQL carries by the share of repeated POSTs that hit (each hit and each miss at its median CPU above; a workload where the same viewer seldom asks again within the lifetime sits near 0 %):',
        table(
          ['hits', 'instance CPU us/POST', 'PostgreSQL CPU us/POST', 'instances'],
          byHitShare.map((x) => [`${fmt(x.h * 100, 0)} %`, fmt(x.instanceUs, 0), fmt(x.databaseUs, 2), `${x.atLeast ? '>= ' : ''}${fmt(x.instances, 1)}`]),
        ),
        `a hit's PostgreSQL CPU, pooled over the hit windows: ${fmt(hit.projection.databaseUs, 2)} us per request (the background: LISTEN connections, the idle sweeps and probes of the two instances left, and the misses among them); one ${fmt(tickS * 1000, 0)}-ms tick is ${fmt(tickUsPerHit, 2)} us per request there${hitFloored ? ', so a hit is counted as one tick and the figures with hits are lower bounds' : ''}`,
        `saturates first, by CPU: the database, at about ${carried(cpuFirst)} instances each serving ${cpuFirst.op} at full speed (${byCpu.map((c) => `${c.op}: ${carried(c)}`).join('; ')}); by contended throughput ${fmt(first.instances, 1)} (${saturating.map((s) => `${s.op}: ${fmt(s.instances, 1)}`).join('; ')}); signed segment GETs that touch no database scale with the instances and the media store instead`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      return {
        suite: 'control-plane',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: o,
        loads: Object.fromEntries(loads),
        latencies,
        idlePerS,
        txPerCall,
        spent,
        explained,
        split,
        roundTrip,
        txPerWatermark,
        statements,
        capacity,
        projection,
        byCpu,
        freshCpu,
        hitMiss,
        hitShare,
        byHitShare,
      };
    } finally {
      await world.stop();
      if (!ctx.args.keep) await rm(runDir, { recursive: true, force: true });
    }
  },
};
