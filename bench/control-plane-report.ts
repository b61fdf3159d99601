// The control-plane suite's figures and report, from what its run measured (pure: bench/control-plane.ts measures):
// throughput against SQLite, latency per call, transactions and statements, the projections by CPU, by contended
// throughput and by the share of repeated POSTs that hit.
import type { Fresh, PerCall } from './control-plane-database.js';
import type { Load, SplitWindow } from './control-plane-load.js';
import { type CountedOp, HIT_SHARES, ONE_PG, OPS, type Op, type Options, PER_CALL, PROJECTED, UNCACHED } from './control-plane-setup.js';
import { spread } from './lib/cluster-figures.js';
import { median } from './lib/measure.js';
import { PG_KINDS, type PgKind } from './lib/pg-processes.js';
import { type CpuProjection, projectByCpu, projectByHitShare } from './lib/process-cpu.js';
import { fmt, formatMachine, type MachineInfo, table } from './lib/suite.js';

/** Latency per call of one request, one at a time, straight to one instance of each kind (ms). */
export interface Latency {
  op: Op;
  pg: { p50: number; p95: number };
  sqlite: { p50: number; p95: number };
}

/** Everything the run measured, in the order it measured it. */
export interface Measured extends PerCall, Fresh {
  /** The configurations behind HAProxy, SQLite's first: every ratio is to it. */
  configNames: string[];
  /** Each configuration's windows of each request, keyed `configuration|request`. */
  loads: Map<string, Load[]>;
  latencies: Latency[];
  idleWindows: number[];
  idlePerS: number;
  explained: { plan: string[]; columns: number; rowBytes: number };
  capacity: number;
  roundTrip: { calls: number; usPerCall: Record<string, number[]> };
  hitMiss: { hit: Load[]; miss: Load[] };
  /** The lookup's calls in the hit windows, against the requests sent there. */
  hitLookups: { lookups: number; sent: number };
  /** One clock tick of /proc's CPU times, in seconds. */
  tickS: number;
}

/** What the report says of the run around the figures. */
export interface ReportContext {
  machine: MachineInfo;
  clip: { path: string; width: number; height: number; seconds: number };
  o: Options;
  rounds: number;
  serverVersion: string;
}

const POST: Op = 'POST existing watermark';
const windowsOf = (loads: readonly Load[]): SplitWindow[] => loads.flatMap((l) => (l.cpu ? [l.cpu] : []));

/** The median of `f` over a configuration's windows of one request. */
function medianOf(m: Measured, key: string, f: (l: Load) => number): number {
  return median((m.loads.get(key) ?? []).map(f));
}

/** By contended throughput: N instances as busy as the one measured, against PostgreSQL's measured capacity. */
export function throughputProjection(m: Measured) {
  const onePg = (op: Op) => medianOf(m, `${ONE_PG}|${op}`, (l) => l.perS);
  const projection = PROJECTED.map((n) => {
    const perOp = OPS.map((op) => ({ op, load: n * onePg(op) * m.txPerCall[op] }));
    const worst = perOp.reduce((a, b) => (b.load > a.load ? b : a));
    return { n, perOp, worst, share: worst.load / m.capacity };
  });
  const saturating = OPS.filter((op) => m.txPerCall[op] > 0).map((op) => ({ op, instances: m.capacity / (onePg(op) * m.txPerCall[op]) }));
  const first = saturating.reduce((a, b) => (b.instances < a.instances ? b : a), saturating[0] ?? { op: 'none', instances: Number.POSITIVE_INFINITY });
  const postVsSqlite = onePg(POST) / medianOf(m, `${m.configNames[0]!}|${POST}`, (l) => l.perS);
  return { projection, saturating, first, postVsSqlite };
}

/**
 * By CPU: each request's CPU in the instance's tree against PostgreSQL's, over every round's one-instance window, which
 * does not depend on who won the shared cores meanwhile; and PostgreSQL's CPU per request by the kind of process.
 */
export function cpuProjection(m: Measured) {
  const byCpu = OPS.map((op) => ({ op, ...projectByCpu(windowsOf(m.loads.get(`${ONE_PG}|${op}`) ?? []), m.txPerCall[op], m.tickS) }));
  const cpuFirst = byCpu.reduce((a, b) => (b.instances < a.instances ? b : a));
  const split = OPS.map((op) => {
    const windows = windowsOf(m.loads.get(`${ONE_PG}|${op}`) ?? []);
    const requests = windows.reduce((n, w) => n + w.requests, 0);
    const seconds = windows.reduce((n, w) => n + w.databaseS, 0);
    const usByKind = Object.fromEntries(PG_KINDS.map((k) => [k, (windows.reduce((n, w) => n + w.databaseByKind[k], 0) / requests) * 1e6]));
    return { op, usByKind: usByKind as Record<PgKind, number>, requests, totalUs: (seconds / requests) * 1e6 };
  });
  return { byCpu, cpuFirst, split };
}

/** One kind of repeated POST's windows: its projection, and each window's CPU per request and rate. */
function perPost(m: Measured, kind: 'hit' | 'miss') {
  const windows = windowsOf(m.hitMiss[kind]);
  const us = (w: SplitWindow, s: number) => (s / w.requests) * 1e6;
  return {
    projection: projectByCpu(windows, kind === 'hit' ? m.txPerCall[POST] : m.txPerCall[UNCACHED], m.tickS),
    instanceUs: windows.map((w) => us(w, w.instanceS)),
    databaseUs: windows.map((w) => us(w, w.databaseS)),
    perS: m.hitMiss[kind].map((l) => l.perS),
  };
}

/** The repeated POST kept (hit) and not (miss), the share that hit, and the instances one PostgreSQL carries by that share. */
export function hitMissFigures(m: Measured) {
  const [hit, miss] = [perPost(m, 'hit'), perPost(m, 'miss')];
  // What share of the repeated POSTs were answered from what was kept: the lookup's calls against the requests (one
  // at a time, against the instance that keeps nothing; under load, against the requests sent).
  const lookupsOf = (op: CountedOp) => (m.callsByOp.get(op) ?? []).filter((r) => r.query === m.hottest).reduce((n, r) => n + r.calls, 0);
  const hitShare = {
    sequential: lookupsOf(UNCACHED) > 0 ? 1 - lookupsOf(POST) / lookupsOf(UNCACHED) : NaN,
    underLoad: m.hitLookups.sent > 0 ? 1 - m.hitLookups.lookups / m.hitLookups.sent : NaN,
  };
  // A mix of hits and misses: each one's CPU in the instance and in PostgreSQL, weighed by the share. PostgreSQL's
  // CPU on hits is mostly under one clock tick a window: pooled over the windows, and at least one tick (the
  // projections with hits are then lower bounds, ">=").
  const hitRequests = m.hitMiss.hit.reduce((n, l) => n + (l.cpu?.requests ?? 0), 0);
  const tickUsPerHit = (m.tickS / Math.max(1, hitRequests)) * 1e6;
  const hitCost = { instanceUs: median(hit.instanceUs), databaseUs: Math.max(hit.projection.databaseUs, tickUsPerHit) };
  const hitFloored = hit.projection.databaseUs < tickUsPerHit;
  const missCost = { instanceUs: median(miss.instanceUs), databaseUs: median(miss.databaseUs) };
  const byHitShare = HIT_SHARES.map((h) => ({ h, atLeast: hitFloored && h > 0, ...projectByHitShare(hitCost, missCost, h) }));
  return { hit, miss, hitShare, tickUsPerHit, hitFloored, byHitShare };
}

type Figures = ReturnType<typeof throughputProjection> & ReturnType<typeof cpuProjection> & ReturnType<typeof hitMissFigures>;

const pct = (x: number) => (Number.isFinite(x) ? `${fmt(x * 100, 1)} %` : '-');
const carried = (p: { instances: number; atLeast: boolean }) => `${p.atLeast ? '>= ' : ''}${fmt(p.instances, 1)}`;

/** The heading, and throughput through HAProxy as a ratio to SQLite's. */
function throughputLines(m: Measured, c: ReportContext): string[] {
  const rows = m.configNames.flatMap((name) =>
    OPS.map((op) => {
      const key = `${name}|${op}`;
      const base = medianOf(m, `${m.configNames[0]!}|${op}`, (l) => l.perS);
      const perS = (m.loads.get(key) ?? []).map((l) => l.perS);
      const rate = medianOf(m, key, (l) => l.perS);
      return [
        name,
        op,
        `${fmt(rate, 0)} (${spread(perS, 0)})`,
        fmt(rate / base, 2),
        fmt(
          medianOf(m, key, (l) => l.p95),
          1,
        ),
        medianOf(m, key, (l) => l.failed),
      ];
    }),
  );
  return [
    '',
    '== bench control-plane: serve instances on PostgreSQL behind HAProxy ==',
    formatMachine(c.machine),
    `clip: ${c.clip.path} (${c.clip.width}x${c.clip.height}, ${c.clip.seconds} s); ${c.o.concurrency} requests in flight, ${c.o.seconds} s per run after a 1-s warm-up, ${c.rounds} rounds (median, spread min-max)`,
    `every instance, PostgreSQL (${c.serverVersion}), Redis, HAProxy and this load generator share ${c.machine.availableParallelism} cores`,
    '',
    table(['configuration (through HAProxy)', 'request', 'requests/s', 'vs SQLite', 'p95 ms', 'failed'], rows),
    '',
  ];
}

/** Latency per call, and the database's transactions and statements per call and per new watermark. */
function databaseLines(m: Measured): string[] {
  return [
    '-- latency per call, one at a time, straight to one instance (ms) --',
    table(
      ['request', 'PostgreSQL p50', 'p95', 'SQLite p50', 'p95', 'PostgreSQL / SQLite p50'],
      m.latencies.map((l) => [l.op, fmt(l.pg.p50, 2), fmt(l.pg.p95, 2), fmt(l.sqlite.p50, 2), fmt(l.sqlite.p95, 2), fmt(l.pg.p50 / l.sqlite.p50, 2)]),
    ),
    '',
    '-- database transactions (pg_stat_database xact_commit, idle background subtracted) --',
    `idle background of the two instances left (one keeps answers, one keeps none): ${fmt(m.idlePerS, 1)}/s (median of three 3-s windows: ${m.idleWindows.map((x) => fmt(x, 1)).join(', ')})`,
    ...OPS.map((op) => `${op}: ${fmt(m.txPerCall[op], 2)} per request`),
    `where PostgreSQL's time goes, ${PER_CALL} calls one at a time (pg_stat_statements, the 5 costliest; sessions opened meanwhile, 3 of them the bench's own):`,
    ...m.spent.flatMap((x) => [
      `  ${x.op}: ${x.sessions} sessions, ${fmt(x.roundTrips, 2)} statements (round trips) per call`,
      ...x.statements.map(
        (st) => `    ${fmt(st.perCall, 2).padStart(5)}/call  plan ${fmt(st.planUs, 0).padStart(4)} us  exec ${fmt(st.execUs, 0).padStart(4)} us  ${st.query}`,
      ),
    ]),
    `the repeated POST's statement on the server (prepared, after six runs): ${m.explained.columns} columns, ${m.explained.rowBytes} bytes of values in its row; EXPLAIN (ANALYZE, BUFFERS, VERBOSE):`,
    ...m.explained.plan.map((l) => `    ${l.length > 160 ? `${l.slice(0, 157)}...` : l}`),
    `a new watermark (POST, every segment rendered on the farm, READY with its whole playlist): ${fmt(m.txPerWatermark, 1)}; its statements, calls per watermark (idle sweeps included):`,
    ...m.statements.map((st) => `  ${fmt(st.perWatermark, 1).padStart(5)}  ${st.query}`),
    '',
  ];
}

/** What one round trip costs PostgreSQL, and the instances a request of one round trip would leave it carrying. */
function roundTripLine(m: Measured, byCpu: CpuProjection[]): string {
  const rt = m.roundTrip.usPerCall;
  const costs = Object.entries(rt)
    .map(([k, v]) => `${k} ${fmt(median(v), 0)} us of PostgreSQL CPU (${spread(v, 0)})`)
    .join(', ');
  const instanceUs = byCpu[0]!.instanceUs;
  return `one round trip, whatever the statement (a prepared call from a pool like an instance's, ${m.roundTrip.calls} calls a window, the kinds in turn, median (min-max) of ${rt['SELECT 1']!.length} windows each): ${costs}; at the instance's ${fmt(instanceUs, 0)} us per repeated POST, a request of one round trip lets one PostgreSQL carry at most ${fmt(instanceUs / median(rt['SELECT 1']!), 1)} instances, and this statement ${fmt(instanceUs / median(rt["the repeated POST's statement"]!), 1)}`;
}

/** The projection by CPU: instances one PostgreSQL carries, PostgreSQL's CPU by kind of process, a round trip's cost. */
function cpuLines(m: Measured, f: Figures): string[] {
  const tickMs = fmt(m.tickS * 1000, 0);
  const freshDbUs = (m.freshCpu.databaseS / m.fresh) * 1e6;
  return [
    `-- projection by CPU: instances one PostgreSQL carries (CPU per request in the one instance's process tree / in every PostgreSQL process, over the ${ONE_PG} windows above, ${tickMs}-ms ticks) --`,
    table(
      ['request', 'instance CPU us/request', 'PostgreSQL CPU us/request', 'us/transaction', 'instances one PostgreSQL carries'],
      f.byCpu.map((c) => [c.op, fmt(c.instanceUs, 0), fmt(c.databaseUs, 0), Number.isFinite(c.databaseUsPerTx) ? fmt(c.databaseUsPerTx, 0) : '-', carried(c)]),
    ),
    `PostgreSQL's CPU per request by the kind of process that used it (us per request; one ${tickMs}-ms tick over the windows is ${f.split.map((x) => `${fmt((m.tickS / x.requests) * 1e6, 1)} us for ${x.op}`).join(', ')}):`,
    table(['process', ...OPS], [...PG_KINDS.map((k) => [k, ...f.split.map((x) => fmt(x.usByKind[k], 1))]), ['all', ...f.split.map((x) => fmt(x.totalUs, 1))]]),
    roundTripLine(m, f.byCpu),
    `assumes: the database's machine has as many cores as each instance's, each instance busy at full speed with that one request, and PostgreSQL's CPU the limit (its disk, locks and connections not); ">=": PostgreSQL used under one tick`,
    `a new watermark (the ${m.fresh} above): ${fmt(freshDbUs, 0)} us of PostgreSQL CPU each, ${m.txPerWatermark > 0 ? fmt(freshDbUs / m.txPerWatermark, 0) : '-'} us per transaction (its renders' job writes and one instance's idle background over ${fmt(m.freshSeconds, 0)} s included)`,
    '',
  ];
}

/** The projection by contended throughput, and the targets. */
function contendedLines(m: Measured, c: ReportContext, f: Figures): string[] {
  const cores = c.machine.availableParallelism;
  return [
    `-- projection by throughput, contended on one machine: the load generator, the instances, HAProxy and PostgreSQL shared ${cores} cores for both figures, so it mostly measures who won the CPU --`,
    `PostgreSQL capacity measured here: ${fmt(m.capacity, 0)} reads/s of a watermark by id from 16 connections (one server on this ${cores}-core machine)`,
    'N instances each as busy as the one instance above, against that capacity:',
    table(
      ['instances', ...OPS.map((op) => `${op} tx/s`), 'worst share of capacity'],
      f.projection.map((p) => [String(p.n), ...p.perOp.map((x) => fmt(x.load, 0)), `${fmt(p.share * 100, 0)} %`]),
    ),
    `targets: a repeated POST in <= 1 transaction (${fmt(m.txPerCall[POST], 2)}), a new watermark in <= 12 (${fmt(m.txPerWatermark, 1)}), PostgreSQL at >= 0.8x SQLite's POST throughput on one instance (${fmt(f.postVsSqlite, 2)}x), one PostgreSQL for >= 20 instances (by CPU, which does not depend on how this machine's cores were shared: ${carried(f.cpuFirst)} for ${f.cpuFirst.op}; contended throughput: ${fmt(f.first.instances, 1)})`,
    '',
  ];
}

/** The repeated POST kept and not, under load, and the instances one PostgreSQL carries by the share that hits. */
function hitMissLines(m: Measured, c: ReportContext, f: Figures): string[] {
  const roundTripsOf = (op: CountedOp) => m.spent.find((x) => x.op === op)?.roundTrips ?? 0;
  const kinds = [['kept (hit)', f.hit, roundTripsOf(POST)] as const, ['not kept (miss)', f.miss, roundTripsOf(UNCACHED)] as const];
  return [
    `-- the repeated POST, kept or not, under load (straight to one instance, ${c.o.concurrency} in flight, ${c.rounds} alternating windows of ${c.o.seconds} s each; median (min-max) over the windows) --`,
    `share of this bench's repeated POSTs answered from what the instance kept (1 - the lookup's calls / requests): ${pct(f.hitShare.underLoad)} in the hit windows under load, ${pct(f.hitShare.sequential)} over the ${PER_CALL} calls one at a time above (it asks for one watermark again and again: only the first request after each lifetime, change notice or read that a notice raced reads); the instance that keeps nothing answers every one from the database`,
    table(
      ['repeated POST', 'requests/s', 'statements/call', 'instance CPU us/request', 'PostgreSQL CPU us/request', 'instances one PostgreSQL carries'],
      kinds.map(([name, x, trips]) => [
        name,
        `${fmt(median(x.perS), 0)} (${spread(x.perS, 0)})`,
        fmt(trips, 3),
        `${fmt(median(x.instanceUs), 0)} (${spread(x.instanceUs, 0)})`,
        `${fmt(median(x.databaseUs), 1)} (${spread(x.databaseUs, 1)})`,
        carried(x.projection),
      ]),
    ),
    'instances one PostgreSQL carries by the share of repeated POSTs that hit (each hit and each miss at its median CPU above; a workload where the same viewer seldom asks again within the lifetime sits near 0 %):',
    table(
      ['hits', 'instance CPU us/POST', 'PostgreSQL CPU us/POST', 'instances'],
      f.byHitShare.map((x) => [`${fmt(x.h * 100, 0)} %`, fmt(x.instanceUs, 0), fmt(x.databaseUs, 2), `${x.atLeast ? '>= ' : ''}${fmt(x.instances, 1)}`]),
    ),
    `a hit's PostgreSQL CPU, pooled over the hit windows: ${fmt(f.hit.projection.databaseUs, 2)} us per request (the background: LISTEN connections, the idle sweeps and probes of the two instances left, and the misses among them); one ${fmt(m.tickS * 1000, 0)}-ms tick is ${fmt(f.tickUsPerHit, 2)} us per request there${f.hitFloored ? ', so a hit is counted as one tick and the figures with hits are lower bounds' : ''}`,
    `saturates first, by CPU: the database, at about ${carried(f.cpuFirst)} instances each serving ${f.cpuFirst.op} at full speed (${f.byCpu.map((x) => `${x.op}: ${carried(x)}`).join('; ')}); by contended throughput ${fmt(f.first.instances, 1)} (${f.saturating.map((s) => `${s.op}: ${fmt(s.instances, 1)}`).join('; ')}); signed segment GETs that touch no database scale with the instances and the media store instead`,
  ];
}

/** The figures of a run and the lines of its report. */
export function controlPlaneReport(m: Measured, c: ReportContext): { figures: Figures; lines: string[] } {
  const figures = { ...throughputProjection(m), ...cpuProjection(m), ...hitMissFigures(m) };
  const lines = [...throughputLines(m, c), ...databaseLines(m), ...cpuLines(m, figures), ...contendedLines(m, c, figures), ...hitMissLines(m, c, figures)];
  return { figures, lines };
}
