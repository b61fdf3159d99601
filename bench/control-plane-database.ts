// What the control-plane suite asks PostgreSQL itself: its committed transactions and statements per call and per new
// watermark (the idle background subtracted), the plan of a prepared statement, its capacity for the hottest read,
// and the CPU one round trip costs it from a pool like an instance's.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pgDriver from 'pg';
import type { TestPostgres } from '../harness/postgres.js';
import { call, waitFor } from '../harness/serve-helpers.js';
import { BatchingSocket } from '../src/engine/state/postgres-connection.js';
import type { CpuMeter, SplitWindow } from './control-plane-load.js';
import { type CountedOp, type Installation, OPS, PER_CALL, UNCACHED } from './control-plane-setup.js';
import { median } from './lib/measure.js';
import { cpuSeconds, readProcessTable } from './lib/process-cpu.js';
import { fmt } from './lib/suite.js';

/** Committed transactions on the database so far, once every backend has reported its own (at most a second late). */
async function commits(pg: TestPostgres, url: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500));
  const name = new URL(url).pathname.slice(1);
  const rows = await pg.query<{ n: string }>(url, 'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1', [name]);
  return Number(rows[0]?.n ?? 0);
}

/**
 * EXPLAIN (ANALYZE, BUFFERS, VERBOSE) of a statement with `$n` parameters, prepared and run six times first so the plan
 * shown is the one a pooled connection settles on; the lines, and the columns and bytes of the row it returns.
 */
export async function explainPrepared(url: string, sql: string, params: unknown[]): Promise<{ plan: string[]; columns: number; rowBytes: number }> {
  if (!sql) return { plan: ['(no statement recorded)'], columns: 0, rowBytes: 0 };
  const client = new pgDriver.Client({ connectionString: url });
  await client.connect();
  try {
    const name = 'bench_hottest';
    let last: pgDriver.QueryResult | undefined;
    for (let i = 0; i < 6; i++) last = await client.query({ name, text: sql, values: params });
    const row = last?.rows[0] ?? {};
    const rowBytes = Object.values(row).reduce<number>((n, v) => n + (v === null ? 0 : Buffer.byteLength(String(v))), 0);
    await client.query(`PREPARE ${name}_x AS ${sql}`);
    const literals = params.map((p) => `'${String(p).replaceAll("'", "''")}'`).join(', ');
    for (let i = 0; i < 5; i++) await client.query(`EXECUTE ${name}_x(${literals})`);
    const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, VERBOSE) EXECUTE ${name}_x(${literals})`);
    return { plan: plan.rows.map((r) => r['QUERY PLAN']), columns: last?.fields.length ?? 0, rowBytes };
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL CPU per call (us) of prepared statements from pools like an instance's (10 connections, 16 calls in
 * flight): `SELECT 1` and the repeated POST's statement with a call's messages in one write, as wmark sends them, and
 * the statement as the driver alone sends them (a write per message); the kinds in turn, over `rounds` rounds.
 */
export async function roundTripCost(pg: TestPostgres, url: string, sql: string, params: unknown[], tickS: number, rounds = 4, calls = 4000) {
  const batched = new pgDriver.Pool({ connectionString: url, max: 10, stream: () => new BatchingSocket() });
  const unbatched = new pgDriver.Pool({ connectionString: url, max: 10 });
  const post = { name: 'bench_post', text: sql, values: params };
  const kinds = [
    { name: 'SELECT 1', pool: batched, query: { name: 'bench_floor', text: 'SELECT 1', values: [] as unknown[] } },
    { name: "the repeated POST's statement", pool: batched, query: post },
    { name: 'that statement, a write per message', pool: unbatched, query: post },
  ];
  const usPerCall: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k.name, []]));
  try {
    const run = async (k: (typeof kinds)[number], n: number) => {
      let sent = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (sent < n) {
            sent++;
            await k.pool.query(k.query);
          }
        }),
      );
    };
    for (const k of kinds) await run(k, 500);
    for (let i = 0; i < rounds; i++) {
      for (const k of i % 2 ? [...kinds].reverse() : kinds) {
        const before = readProcessTable();
        await run(k, calls);
        usPerCall[k.name]!.push((cpuSeconds(before, readProcessTable(), pg.serverPid(), 1 / tickS) / calls) * 1e6);
      }
    }
  } finally {
    await Promise.all([batched.end(), unbatched.end()]);
  }
  return { calls, usPerCall };
}

/** The statements pg_stat_statements kept for the serves' database, this bench's own reads of the statistics left out. */
const SERVES_STATEMENTS = `FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%xact_commit%'`;
const ONE_LINE_QUERY = "regexp_replace(query, '[[:space:]]+', ' ', 'g')";

/** The transactions the instances left commit per second when nothing is asked of them (sweeps for unfinished jobs). */
export async function idleBackground(log: (m: string) => void, pg: TestPostgres, url: string): Promise<{ idleWindows: number[]; idlePerS: number }> {
  const idleWindows: number[] = [];
  for (let i = 0; i < 3; i++) {
    const [from, t0] = [await commits(pg, url), Date.now()];
    await new Promise((r) => setTimeout(r, 3000));
    idleWindows.push(((await commits(pg, url)) - from) / ((Date.now() - t0) / 1000));
  }
  log(`idle transactions/s, 3 windows: ${idleWindows.map((x) => fmt(x, 1)).join(', ')}`);
  return { idleWindows, idlePerS: median(idleWindows) };
}

/** One statement's share of a kind of call: its calls, planning and execution per call. */
interface StatementCost {
  query: string;
  perCall: number;
  planUs: number;
  execUs: number;
}

/** Where PostgreSQL's time for one kind of call goes. */
interface Spent {
  op: CountedOp;
  sessions: number;
  roundTrips: number;
  statements: StatementCost[];
}

/** Each kind of call's transactions and statements, and the lookup a repeated POST makes when it is not kept. */
export interface PerCall {
  txPerCall: Record<CountedOp, number>;
  spent: Spent[];
  /** Each statement's calls during each kind of call's run. */
  callsByOp: Map<CountedOp, { query: string; calls: number }[]>;
  hottest: string;
}

/**
 * PER_CALL calls of each kind one at a time (`send` answers the sender of a kind): the transactions each commits with
 * the idle background subtracted, and where PostgreSQL's time goes: its statements' calls, planning and execution per
 * call, and the sessions opened meanwhile (a pool that churns connections pays for authentication on each).
 */
export async function perCall(pg: TestPostgres, url: string, send: (op: CountedOp) => () => Promise<number>, idlePerS: number): Promise<PerCall> {
  const txPerCall = {} as Record<CountedOp, number>;
  await pg.query(url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const sessions = async () =>
    Number((await pg.query<{ n: string }>(url, 'SELECT sessions::text AS n FROM pg_stat_database WHERE datname = current_database()'))[0]?.n ?? 0);
  const spent: Spent[] = [];
  let hottest = '';
  const callsByOp = new Map<CountedOp, { query: string; calls: number }[]>();
  for (const op of [...OPS, UNCACHED] as const) {
    await pg.query(url, 'SELECT pg_stat_statements_reset()');
    const before = await sessions();
    const [from, t0] = [await commits(pg, url), Date.now()];
    const next = send(op);
    for (let i = 0; i < PER_CALL; i++) await next();
    txPerCall[op] = Math.max(0, (await commits(pg, url)) - from - (idlePerS * (Date.now() - t0)) / 1000) / PER_CALL;
    const rows = await pg.query<{ query: string; calls: number; plan: number; exec: number }>(
      url,
      `SELECT ${ONE_LINE_QUERY} AS query, calls::int AS calls, total_plan_time AS plan, total_exec_time AS exec ${SERVES_STATEMENTS}
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
  return { txPerCall, spent, callsByOp, hottest };
}

/** New watermarks, each rendered on the farm until its whole playlist is READY: what each costs PostgreSQL. */
export interface Fresh {
  fresh: number;
  freshCpu: SplitWindow;
  freshSeconds: number;
  txPerWatermark: number;
  /** Each statement's calls per new watermark (the idle sweeps included). */
  statements: { perWatermark: number; query: string }[];
}

/** Makes `fresh` new watermarks on the first instance, one after another, metering PostgreSQL's transactions and CPU. */
export async function newWatermarks(inst: Installation, meter: CpuMeter, idlePerS: number, fresh = 5): Promise<Fresh> {
  const { pg, url, pgTarget } = inst;
  await pg.query(url, 'SELECT pg_stat_statements_reset()');
  const [from, t0] = [await commits(pg, url), Date.now()];
  const stopFresh = meter();
  for (let i = 0; i < fresh; i++) {
    const body = { ...(pgTarget.body as object), settings: [{ content: `new viewer ${randomBytes(4).toString('hex')}` }] };
    const w = await call(inst.pgServes[0]!.base, 'POST', '/2.0/watermark', { headers: pgTarget.headers, body });
    // Watched in the shared media folder, not through the API: the count is the watermark's own, not the observer's.
    const playlist = path.join(inst.media, 'watermarks', w.json.videoId as string, w.json.id as string, 'video.m3u8');
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
  // What those transactions were, this bench's own reads left out.
  const statements = (
    await pg.query<{ query: string; calls: number }>(
      url,
      `SELECT ${ONE_LINE_QUERY} AS query, calls::int AS calls ${SERVES_STATEMENTS}
           ORDER BY calls DESC, query`,
    )
  ).map((r) => ({ perWatermark: r.calls / fresh, query: r.query.length > 150 ? `${r.query.slice(0, 147)}...` : r.query }));
  return { fresh, freshCpu, freshSeconds, txPerWatermark, statements };
}

/** PostgreSQL's capacity here: reads per second of the hottest read (a watermark by id) from 16 clients for 3 s. */
export async function readCapacity(pg: TestPostgres, url: string): Promise<number> {
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
  return done / 3;
}

/** The lookup's calls since the statistics were last reset. */
export async function lookupCalls(pg: TestPostgres, url: string, hottest: string): Promise<number> {
  return Number(
    (await pg.query<{ n: string }>(url, `SELECT COALESCE(SUM(calls), 0)::text AS n FROM pg_stat_statements WHERE ${ONE_LINE_QUERY} = $1`, [hottest]))[0]?.n ??
      0,
  );
}
