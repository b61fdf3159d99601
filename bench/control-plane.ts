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
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { startHaproxy } from '../harness/haproxy.js';
import type { TestPostgres } from '../harness/postgres.js';
import { explainPrepared, idleBackground, lookupCalls, newWatermarks, perCall, readCapacity, roundTripCost } from './control-plane-database.js';
import { type CpuMeter, closedLoop, cpuMeter, type Load, sender } from './control-plane-load.js';
import { controlPlaneReport, type Latency } from './control-plane-report.js';
import {
  INSTANCES,
  type Installation,
  install,
  ONE_PG,
  OPS,
  type Op,
  type Options,
  parseOptions,
  serveOn,
  type Target,
  UNCACHED,
  World,
} from './control-plane-setup.js';
import { percentile } from './lib/cluster-figures.js';
import { median } from './lib/measure.js';
import { clockTick } from './lib/process-cpu.js';
import { fmt, OUT_DIR, type Suite, type SuiteContext, warnIfDistStale } from './lib/suite.js';

/** The LISTEN connections' client ports, to tell the instance's apart from its pool's (read again when one is new). */
function listenPortsOf(pg: TestPostgres, url: string) {
  let ports = new Set<number>();
  return {
    ports: () => ports,
    async read(): Promise<void> {
      const rows = await pg.query<{ port: number }>(url, "SELECT client_port AS port FROM pg_stat_activity WHERE query LIKE 'LISTEN %'");
      ports = new Set(rows.map((r) => r.port));
    },
  };
}

/**
 * 1. Throughput through the load balancer, rounds alternating the configurations' order; with one instance on
 * PostgreSQL, the CPU that instance and PostgreSQL use too.
 */
async function throughput(ctx: SuiteContext, o: Options, world: World, inst: Installation, meter: CpuMeter) {
  const configs = [
    { name: 'SQLite, 1 instance', ports: [inst.sqlite.port], target: inst.sqliteTarget },
    ...INSTANCES.map((n) => ({
      name: `PostgreSQL, ${n} instance${n > 1 ? 's' : ''}`,
      ports: inst.pgServes.slice(0, n).map((s) => s.port),
      target: inst.pgTarget,
    })),
  ];
  const loads = new Map<string, Load[]>();
  for (let r = 1; r <= ctx.args.rounds; r++) {
    const order = r % 2 ? configs : [...configs].reverse();
    for (const c of order) {
      world.lb = await startHaproxy({ backends: c.ports, port: inst.lbPort });
      await world.lb.untilServers((s) => Object.values(s).filter((x) => x.status === 'UP').length === c.ports.length, 'every instance UP', 30_000);
      for (const op of OPS) {
        const load = await closedLoop(sender(inst.publicUrl, c.target, op), o.concurrency, o.seconds, c.name === ONE_PG ? meter : undefined);
        ctx.log(`round ${r}: ${c.name}, ${op}: ${fmt(load.perS, 0)}/s (p50 ${fmt(load.p50, 1)} ms, p95 ${fmt(load.p95, 1)} ms, ${load.failed} failed)`);
        const key = `${c.name}|${op}`;
        loads.set(key, [...(loads.get(key) ?? []), load]);
      }
      await world.lb.stop();
      world.lb = undefined;
    }
  }
  return { configNames: configs.map((c) => c.name), loads };
}

/** 2. Latency per call, one request at a time, straight to one instance. */
async function latencyPerCall(o: Options, inst: Installation): Promise<Latency[]> {
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
  const latencies: Latency[] = [];
  for (const op of OPS) {
    const [p, s] = [await latency(inst.pgServes[0]!.base, inst.pgTarget, op), await latency(inst.sqlite.base, inst.sqliteTarget, op)];
    latencies.push({ op, pg: { p50: median(p), p95: percentile(p, 95) }, sqlite: { p50: median(s), p95: percentile(s, 95) } });
  }
  return latencies;
}

/**
 * 4. The repeated POST straight to an instance, one that keeps answers (nearly every request a hit: the bench asks for
 * the same watermark) against one that keeps none (every request a miss), in alternating windows under load; and the
 * lookup's calls in each hit window (the warm-up's included), against the requests sent.
 */
async function hitAndMiss(ctx: SuiteContext, o: Options, inst: Installation, uncachedBase: string, meters: Record<'hit' | 'miss', CpuMeter>, hottest: string) {
  const { pg, url, pgTarget } = inst;
  const hitMiss = { hit: [] as Load[], miss: [] as Load[] };
  const hitLookups = { lookups: 0, sent: 0 };
  for (let r = 1; r <= ctx.args.rounds; r++) {
    const kinds = [
      { kind: 'hit' as const, base: inst.pgServes[0]!.base, meter: meters.hit },
      { kind: 'miss' as const, base: uncachedBase, meter: meters.miss },
    ];
    for (const k of r % 2 ? kinds : kinds.reverse()) {
      if (k.kind === 'hit') await pg.query(url, 'SELECT pg_stat_statements_reset()');
      const load = await closedLoop(sender(k.base, pgTarget, 'POST existing watermark'), o.concurrency, o.seconds, k.meter);
      if (k.kind === 'hit') {
        hitLookups.lookups += await lookupCalls(pg, url, hottest);
        hitLookups.sent += load.sent;
      }
      ctx.log(`round ${r}: repeated POST, ${k.kind}: ${fmt(load.perS, 0)}/s (p50 ${fmt(load.p50, 1)} ms, ${load.failed} failed)`);
      hitMiss[k.kind].push(load);
    }
  }
  return { hitMiss, hitLookups };
}

/** Every part in turn, on one installation. */
async function measure(ctx: SuiteContext, o: Options, world: World, runDir: string) {
  const inst = await install(ctx, world, runDir);
  const { pg, url, pgServes, pgTarget } = inst;
  const tickS = clockTick();
  const listen = listenPortsOf(pg, url);
  await listen.read();
  const meter = cpuMeter(pgServes[0]!.proc.child.pid!, pg.serverPid(), tickS, listen.ports);
  const { configNames, loads } = await throughput(ctx, o, world, inst, meter);
  const latencies = await latencyPerCall(o, inst);

  // 3. Transactions, with one instance left: its idle background (sweeps for unfinished jobs) per second, then per
  // call and per new watermark with that subtracted.
  for (const extra of pgServes.slice(1)) extra.proc.kill('SIGTERM');
  await Promise.all(pgServes.slice(1).map((extra) => extra.proc.exited));
  // An instance that keeps no answer: every repeated POST it gets reads the database (what a miss costs).
  const uncached = await serveOn(world, path.join(runDir, 'serve-uncached'), inst.shared, { WMARK_REQUEST_CACHE_SECONDS: '0' });
  const { idleWindows, idlePerS } = await idleBackground(ctx.log, pg, url);
  const calls = await perCall(
    pg,
    url,
    (op) => (op === UNCACHED ? sender(uncached.base, pgTarget, 'POST existing watermark') : sender(pgServes[0]!.base, pgTarget, op)),
    idlePerS,
  );
  // What the repeated POST's statement does on the server: its plan, rows and buffers, run as the instance runs it
  // (prepared, a generic plan after five runs).
  const explained = await explainPrepared(url, calls.hottest, [pgTarget.watermarkId, 'bench-pg']);
  const fresh = await newWatermarks(inst, meter, idlePerS);
  const capacity = await readCapacity(pg, url);
  // What one round trip costs PostgreSQL whatever the statement: its CPU per call of a prepared `SELECT 1`, against
  // the repeated POST's statement, both from a pool as an instance's (10 connections, 16 calls in flight, a call's
  // messages in one write), in alternating windows.
  const roundTrip = await roundTripCost(pg, url, calls.hottest, [pgTarget.watermarkId, 'bench-pg'], tickS);

  const uncachedMeter = cpuMeter(uncached.proc.child.pid!, pg.serverPid(), tickS, listen.ports);
  await listen.read();
  const hits = await hitAndMiss(ctx, o, inst, uncached.base, { hit: meter, miss: uncachedMeter }, calls.hottest);
  const serverVersion = (await pg.query<{ server_version: string }>(url, 'SHOW server_version'))[0]!.server_version;
  const measured = { configNames, loads, latencies, idleWindows, idlePerS, ...calls, explained, ...fresh, capacity, roundTrip, ...hits, tickS };
  return { inst, serverVersion, measured };
}

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
      const { inst, serverVersion, measured: m } = await measure(ctx, o, world, runDir);
      const { figures: f, lines } = controlPlaneReport(m, { machine: ctx.machine, clip: inst.clip, o, rounds: ctx.args.rounds, serverVersion });
      process.stdout.write(`${lines.join('\n')}\n`);
      return {
        suite: 'control-plane',
        date: new Date().toISOString(),
        machine: ctx.machine,
        options: o,
        loads: Object.fromEntries(m.loads),
        latencies: m.latencies,
        idlePerS: m.idlePerS,
        txPerCall: m.txPerCall,
        spent: m.spent,
        explained: m.explained,
        split: f.split,
        roundTrip: m.roundTrip,
        txPerWatermark: m.txPerWatermark,
        statements: m.statements,
        capacity: m.capacity,
        projection: f.projection,
        byCpu: f.byCpu,
        freshCpu: m.freshCpu,
        hitMiss: m.hitMiss,
        hitShare: f.hitShare,
        byHitShare: f.byHitShare,
      };
    } finally {
      await world.stop();
      if (!ctx.args.keep) await rm(runDir, { recursive: true, force: true });
    }
  },
};
