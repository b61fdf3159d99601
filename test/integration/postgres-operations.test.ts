// Operating wmark on a real PostgreSQL 15: the database as a watched dependency of a real `wmark serve` on loopback
// (stopped under it, /readyz answers 503 naming it, a request that needs it gets a prompt 503 DATABASE_UNAVAILABLE with
// Retry-After, never a hang or a 500, the loss and the return are logged once each without the password, and once it
// is started again the serve answers and renders as before with no restart); /metrics, `wmark status` and
// `wmark doctor --db` saying the same; doctor reading a database's schema against this wmark's without changing it.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { call, ingestOverHttp, serveEngine, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import { SCHEMA_VERSION } from '../../src/engine/state/schema.js';
import { expectError } from '../helpers/serve-in-tests.js';

/** A sample's value in a Prometheus text exposition (labels written in the order given), or undefined. */
function metric(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe.skipIf(POSTGRES_MISSING !== undefined)(
  POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'wmark on a PostgreSQL that goes away and comes back',
  () => {
    let pg: TestPostgres;
    let engine: TestEngine;
    let s: TestServer;
    let database: string;
    const dataDir = tempDir('pg-operations');
    const box = tempDir('pg-operations-cli');

    beforeAll(async () => {
      pg = await startPostgres();
      database = await pg.createDatabase();
      engine = await testEngine({ dataDir, database });
      s = await serveEngine(engine);
    }, 120_000);
    afterAll(async () => {
      await s?.close({ timeoutMs: 2_000 });
      await engine?.dispose();
      await pg?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(box, { recursive: true, force: true });
    });

    const watermark = (text: string) =>
      call(s.url, 'POST', '/2.0/watermark', { headers: s.v2, body: { key: 'outage', containers: ['m3u8'], settings: [{ content: text }] } });
    const cli = (args: string[], env: Record<string, string> = {}) => runCli(['--data-dir', box, ...args], { env: { WMARK_CONFIG_DIR: box, ...env } });
    const status = () => cli(['--db', database, '--json', 'status', '--url', s.url]);

    it('answers 503 DATABASE_UNAVAILABLE at once while it is down, and serves again once it is back, as /metrics and status say', async () => {
      const { video } = await ingestOverHttp(s.url, s.v2, await flat('336699', 2), 'outage');
      const ready = await call(s.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.dependencies).toEqual([{ name: 'database', up: true, location: database.replace(pg.password, '***') }]);
      expect((await watermark('before')).json.status).toBe('READY');
      const up = (await call(s.url, 'GET', '/metrics')).text;
      expect(metric(up, 'wmark_dependency_up{dependency="database"}')).toBe(1);
      expect(metric(up, 'wmark_db_pool_connections{state="max"}')).toBe(10);
      expect(metric(up, 'wmark_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(metric(up, 'wmark_db_pool_waiting')).toBe(0);
      expect(metric(up, 'wmark_jobs{kind="ingest",state="done"}')).toBe(1);
      const seen = await status();
      expect(seen.code, seen.stderr).toBe(0);
      expect(seen.json().dependencies).toEqual([{ name: 'database', up: true, location: database.replace(pg.password, '***') }]);
      expect(seen.json().database).toMatchObject({
        serve: { name: 'database', up: true },
        reachable: true,
        ok: true,
        schema: 'current',
        schemaVersion: SCHEMA_VERSION,
        codeSchemaVersion: SCHEMA_VERSION,
      });

      await pg.halt();
      // The pool's idle connections hear the shutdown: the loss is known without a request meeting it.
      const down = await waitFor(
        async () => {
          const r = await call(s.url, 'GET', '/readyz');
          return r.status === 503 ? r : undefined;
        },
        '/readyz to say the database is down',
        10_000,
        50,
      );
      expect(down.json).toMatchObject({ ready: false, code: 'DATABASE_UNAVAILABLE', dependencies: [{ name: 'database', up: false }] });
      expect(down.json.dependencies[0].reason).toEqual(expect.any(String));
      expect(down.headers.get('retry-after')).toBe('5');

      // Requests that need it: the catalogued 503 with Retry-After, within moments, never a 500 or a hang.
      for (const request of [
        () => call(s.url, 'GET', '/2.0/videos', { headers: s.v2 }),
        () => call(s.url, 'GET', `/1.0/videos/${video.id}`, { headers: s.v1 }),
        () => watermark('during'),
        () => call(s.url, 'GET', '/1.0/authenticate/accessToken', { headers: s.v2 }),
      ]) {
        const started = Date.now();
        const r = await request();
        expect(Date.now() - started).toBeLessThan(1_000);
        expectError(r, 503, 'DATABASE_UNAVAILABLE');
        expect(r.headers.get('retry-after')).toBe('5');
        expect(r.json.message).toMatch(/^the state database does not answer \(for \d+ s\)/);
        expect(r.text).not.toContain('127.0.0.1');
      }
      // Liveness and the figures do not depend on it: the jobs' counts are left out while it is away.
      expect((await call(s.url, 'GET', '/healthz')).status).toBe(200);
      const away = await call(s.url, 'GET', '/metrics');
      expect(away.status).toBe(200);
      expect(metric(away.text, 'wmark_dependency_up{dependency="database"}')).toBe(0);
      expect(away.text).not.toMatch(/^wmark_jobs\{/m);
      const lost = await status();
      expect(lost.code).toBe(5);
      expect(lost.json().ready).toBe(false);
      expect(lost.json().dependencies).toMatchObject([{ name: 'database', up: false, reason: expect.any(String) }]);
      expect(lost.json().database).toMatchObject({ serve: { up: false }, reachable: false, ok: false, error: { code: 'DATABASE_UNAVAILABLE' } });
      const readable = await cli(['--db', database, 'status', '--url', s.url]);
      expect(readable.stdout).toMatch(
        /state database: postgres:\/\/wmark:\*\*\*@127\.0\.0\.1:\d+\/\w+\n {2}serve's \/readyz: down since .+\n {2}from here: cannot use/,
      );
      expect(readable.stdout).toMatch(/\ndependencies:\n {2}database: down since .+ postgres:\/\/wmark:\*\*\*@127\.0\.0\.1:\d+\/\w+\n/);
      expect(readable.stdout + readable.stderr).not.toContain(pg.password);

      await pg.restart();
      await waitFor(async () => ((await call(s.url, 'GET', '/readyz')).status === 200 ? true : undefined), '/readyz to say it is back', 15_000, 100);
      expect((await call(s.url, 'GET', '/2.0/videos', { headers: s.v2 })).status).toBe(200);
      // A new watermark renders and plays: jobs run again.
      const after = await watermark('after');
      expect(after.status, after.text).toBe(201);
      expect(after.json.status).toBe('READY');
      const playlist = await call(s.url, 'GET', after.json.containers.m3u8);
      expect(playlist.status).toBe(200);
      expect(playlist.text).toContain('#EXTINF');
      expect((await status()).code).toBe(0);

      const lostLines = s.logs.filter((l) => l.startsWith('database: lost'));
      const backLines = s.logs.filter((l) => /^database: \S+ answers again after \d+ s$/.test(l));
      expect({ lost: lostLines.length, back: backLines.length }, s.logs.join('\n')).toEqual({ lost: 1, back: 1 });
      expect(lostLines[0]).toContain(`postgres://${pg.user}:***@127.0.0.1:${pg.port}/`);
      expect(s.logs.join('\n')).not.toContain(pg.password);
    });

    it('doctor --db reads whether a database answers and its schema against this wmark, and changes nothing', async () => {
      const checkOf = (run: Awaited<ReturnType<typeof cli>>) =>
        run.json<{ checks: { name: string; ok: boolean; detail: string }[] }>().checks.find((c) => c.name === 'database')!;
      const current = await cli(['--json', 'doctor', '--db', database]);
      expect(current.code, current.stdout).toBe(0);
      expect(checkOf(current)).toMatchObject({
        ok: true,
        detail: expect.stringMatching(new RegExp(`PostgreSQL 15\\.\\d+, schema v${SCHEMA_VERSION}, as this wmark; \\d+ ms a round trip`)),
      });
      expect(checkOf(current).detail).toContain(database.replace(pg.password, '***'));

      // `--db` alone checks the configured one; with none configured it is a flag error.
      const configured = await cli(['--json', 'doctor', '--db'], { WMARK_DB_URL: database });
      expect(checkOf(configured)).toMatchObject({ ok: true });
      const none = await cli(['doctor', '--db']);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('--db: expected a postgres:// URL, got ""');
      expect(none.stderr).toContain('set WMARK_DB_URL');
      const elsewhere = await cli(['--db', 'video', 'list']);
      expect(elsewhere.code).toBe(2);

      const empty = await pg.createDatabase();
      const fresh = await cli(['--json', 'doctor', '--db', empty]);
      expect(checkOf(fresh)).toMatchObject({
        ok: true,
        detail: expect.stringContaining(`no wmark tables yet (the first wmark to open it creates schema v${SCHEMA_VERSION})`),
      });
      expect(await pg.query(empty, "SELECT to_regclass('wmark_schema_migrations') IS NULL AS untouched")).toEqual([{ untouched: true }]);

      await pg.query(empty, 'CREATE TABLE wmark_schema_migrations (version INTEGER PRIMARY KEY, applied_on BIGINT NOT NULL)');
      await pg.query(empty, 'INSERT INTO wmark_schema_migrations VALUES ($1, 0)', [SCHEMA_VERSION + 1]);
      const newer = await cli(['doctor', '--db', empty]);
      expect(newer.code).toBe(6);
      expect(newer.stdout).toContain(`schema v${SCHEMA_VERSION + 1}, newer than this wmark knows (v${SCHEMA_VERSION})`);

      const unreachable = await cli(['--json', 'doctor', '--db', database.replace(`:${pg.port}/`, ':9/')]);
      expect(checkOf(unreachable)).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/cannot use the PostgreSQL database postgres:\/\/wmark:\*\*\*@127\.0\.0\.1:9\/.*ECONNREFUSED/),
      });
      for (const run of [current, configured, fresh, newer, unreachable]) expect(run.stdout + run.stderr).not.toContain(pg.password);
    });
  },
);
