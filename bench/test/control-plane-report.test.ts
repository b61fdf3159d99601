// The control-plane suite's figures from a run made up here: the projections by contended throughput, by CPU and by the
// share of repeated POSTs that hit, and the report's tables.
import { describe, expect, it } from 'vitest';
import type { Load, SplitWindow } from '../control-plane-load.js';
import { controlPlaneReport, cpuProjection, hitMissFigures, type Measured, throughputProjection } from '../control-plane-report.js';
import { OPS, UNCACHED } from '../control-plane-setup.js';
import { PG_KINDS, type PgKind } from '../lib/pg-processes.js';
import { MACHINE } from './machine.js';

const TICK_S = 0.01;
const byKind = (seconds: number) => Object.fromEntries(PG_KINDS.map((k, i) => [k, i === 0 ? seconds : 0])) as Record<PgKind, number>;
const window = (requests: number, instanceS: number, databaseS: number): SplitWindow => ({
  instanceS,
  databaseS,
  requests,
  databaseByKind: byKind(databaseS),
});
const load = (perS: number, cpu?: SplitWindow): Load => ({ perS, p50: 2, p95: 5, failed: 0, sent: perS * 5, ...(cpu ? { cpu } : {}) });

const SQLITE = 'SQLite, 1 instance';
const ONE = 'PostgreSQL, 1 instance';
const HOT = 'SELECT * FROM watermarks WHERE id = $1 AND key = $2';

/** SQLite at 1000/s for every request; one PostgreSQL instance at 800/s, each request 1 ms of its CPU and 0.1 ms of PostgreSQL's. */
function measured(): Measured {
  const loads = new Map<string, Load[]>();
  for (const op of OPS) {
    loads.set(`${SQLITE}|${op}`, [load(1000)]);
    loads.set(`${ONE}|${op}`, [load(800, window(4000, 4, 0.4)), load(900, window(4000, 4, 0.4))]);
  }
  return {
    configNames: [SQLITE, ONE],
    loads,
    latencies: OPS.map((op) => ({ op, pg: { p50: 2, p95: 3 }, sqlite: { p50: 1, p95: 2 } })),
    idleWindows: [1, 2, 3],
    idlePerS: 2,
    txPerCall: { 'POST existing watermark': 0.01, 'GET 2.0 href': 1, 'signed segment GET': 0, [UNCACHED]: 1 },
    spent: [{ op: UNCACHED, sessions: 3, roundTrips: 3, statements: [{ query: HOT, perCall: 1, planUs: 10, execUs: 20 }] }],
    // One at a time, the instance that keeps answers looked the watermark up 3 times in 300 calls; the other, every call.
    callsByOp: new Map([
      ['POST existing watermark', [{ query: HOT, calls: 3 }]],
      [UNCACHED, [{ query: HOT, calls: 300 }]],
    ]),
    hottest: HOT,
    explained: { plan: ['Index Scan using watermarks_pkey'], columns: 12, rowBytes: 400 },
    fresh: 5,
    freshCpu: window(5, 10, 0.05),
    freshSeconds: 20,
    txPerWatermark: 10,
    statements: [{ perWatermark: 2, query: 'UPDATE jobs SET state = $1' }],
    capacity: 40_000,
    roundTrip: {
      calls: 4000,
      usPerCall: { 'SELECT 1': [50, 60], "the repeated POST's statement": [100, 120], 'that statement, a write per message': [150, 170] },
    },
    // Hits: 1 ms of the instance and no PostgreSQL CPU measured; misses: 1.2 ms and 0.2 ms.
    hitMiss: { hit: [load(1000, window(5000, 5, 0))], miss: [load(700, window(3500, 4.2, 0.7))] },
    hitLookups: { lookups: 50, sent: 5000 },
    tickS: TICK_S,
  };
}

describe('the control-plane figures', () => {
  it('project the instances one PostgreSQL carries from CPU per request, and split its CPU by process', () => {
    const { byCpu, cpuFirst, split } = cpuProjection(measured());
    // 8 s of the instance's CPU against 0.8 s of PostgreSQL's over 8000 requests: 1000 us against 100 us.
    expect(byCpu.map((c) => [c.instanceUs, c.databaseUs])).toEqual(OPS.map(() => [1000, 100]));
    expect(byCpu[0]!.instances).toBeCloseTo(10);
    expect(cpuFirst.instances).toBeCloseTo(10);
    expect(split[0]!.requests).toBe(8000);
    expect(split[0]!.usByKind[PG_KINDS[0]]).toBeCloseTo(100);
    expect(split[0]!.totalUs).toBeCloseTo(100);
  });

  it('project by contended throughput against the capacity measured, naming the request that saturates first', () => {
    const { projection, first, postVsSqlite } = throughputProjection(measured());
    // The one instance's median rate, 850/s, times the instances and the transactions per request.
    const hundred = projection.find((p) => p.n === 100)!;
    expect(hundred.perOp.find((x) => x.op === 'GET 2.0 href')!.load).toBeCloseTo(85_000);
    expect(hundred.share).toBeCloseTo(85_000 / 40_000);
    // The signed segment GET makes no transaction, so it never saturates the database.
    expect(first).toEqual({ op: 'GET 2.0 href', instances: 40_000 / 850 });
    expect(postVsSqlite).toBeCloseTo(0.85);
  });

  it('count a hit that used no PostgreSQL CPU as one tick, so the figures with hits are lower bounds', () => {
    const f = hitMissFigures(measured());
    expect(f.hitShare.sequential).toBeCloseTo(0.99);
    expect(f.hitShare.underLoad).toBeCloseTo(0.99);
    expect(f.hitFloored).toBe(true);
    expect(f.tickUsPerHit).toBeCloseTo(2);
    const [none, ...some] = f.byHitShare;
    // Every POST a miss: 1200 us of the instance against 200 us of PostgreSQL.
    expect(none).toMatchObject({ h: 0, atLeast: false });
    expect([none!.instanceUs, none!.databaseUs, none!.instances].map((x) => Math.round(x * 1000) / 1000)).toEqual([1200, 200, 6]);
    expect(some.every((x) => x.atLeast)).toBe(true);
    expect(f.byHitShare.at(-1)!.instances).toBeCloseTo(1000 / 2);
    // More hits, more instances.
    for (let i = 1; i < f.byHitShare.length; i++) expect(f.byHitShare[i]!.instances).toBeGreaterThan(f.byHitShare[i - 1]!.instances);
  });

  it('print every table with a row per configuration, request, process and share of hits', () => {
    const { lines } = controlPlaneReport(measured(), {
      machine: MACHINE,
      clip: { path: 'clip.mp4', width: 640, height: 360, seconds: 12 },
      o: { concurrency: 16, seconds: 4, samples: 200 },
      rounds: 2,
      serverVersion: '17.0',
    });
    const text = lines.join('\n');
    expect(text).toContain('every instance, PostgreSQL (17.0), Redis, HAProxy');
    // SQLite's rows are its own ratio; PostgreSQL's the rate over SQLite's.
    expect(text).toMatch(/SQLite, 1 instance +POST existing watermark +1000 \(1000-1000\) +1\.00/);
    expect(text).toMatch(/PostgreSQL, 1 instance +GET 2\.0 href +850 \(800-900\) +0\.85/);
    expect(text).toMatch(/kept \(hit\) +1000 \(1000-1000\)/);
    expect(text).toMatch(/^100 % +1000 +2\.00 +>= 500\.0$/m);
    for (const k of PG_KINDS) expect(text).toContain(k);
    expect(text).toContain('a new watermark (the 5 above): 10000 us of PostgreSQL CPU each, 1000 us per transaction');
  });
});
