// What the control-plane suite asks PostgreSQL itself: its committed transactions, the plan of a prepared statement,
// and the CPU one round trip costs it from a pool like an instance's.
import pgDriver from 'pg';
import type { TestPostgres } from '../harness/postgres.js';
import { BatchingSocket } from '../src/engine/state/postgres-connection.js';
import { cpuSeconds, readProcessTable } from './lib/process-cpu.js';

/** Committed transactions on the database so far, once every backend has reported its own (at most a second late). */
export async function commits(pg: TestPostgres, url: string): Promise<number> {
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
