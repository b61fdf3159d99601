// `wmark db copy --to postgres://…`: a data folder the CLI made (a video, a template, an API key, a watermark and their
// jobs) copied into a real PostgreSQL 15 database row for row, a second copy refused, and the copied key then
// accepted over HTTP by `wmark serve --db …` on a fresh data folder, which makes no SQLite file of its own.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { keyHeaders, type SpawnedServe, spawnServe } from '../../harness/serve-helpers.js';
import { PostgresStateStore } from '../../src/engine/state/postgres-state-store.js';
import { dbRows } from '../helpers/ingest-helpers.js';

const TABLES = ['videos', 'templates', 'watermarks', 'jobs', 'credentials'] as const;

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'wmark db copy', () => {
  let pg: TestPostgres;
  let root: string;
  let dataDir: string;
  let url: string;
  let cred: { clientId: string; apiKey: string };
  let serve: SpawnedServe | undefined;
  const cli = (...args: string[]) => runCli(['--data-dir', dataDir, ...args], { env: { WMARK_CONFIG_DIR: path.join(root, 'config') } });

  beforeAll(async () => {
    pg = await startPostgres();
    root = tempDir('db-copy');
    dataDir = path.join(root, 'data');
    const clip = path.join(root, 'clip.mp4');
    copyFileSync(await flat('336699', 2), clip);
    const steps = [
      await cli('--json', 'ingest', clip, '--key', 'copied'),
      await (async () => {
        writeFileSync(path.join(root, 'corner.json'), JSON.stringify({ name: 'corner', settings: [{ type: 'TEXT', content: 'for %viewer%' }] }));
        return cli('--json', 'template', 'create', path.join(root, 'corner.json'));
      })(),
      await cli('--json', 'auth', 'keys', 'create', '--label', 'copied key'),
      await cli('--json', 'watermark', '--key', 'copied', '--text', 'alice'),
    ];
    for (const r of steps) expect(r.code, r.stderr).toBe(0);
    cred = steps[2]!.json();
    url = await pg.createDatabase();
  }, 120_000);
  afterAll(async () => {
    serve?.kill('SIGKILL');
    await serve?.exited;
    await pg?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('copies every row of the data folder, says how many per table, and names the database without its password', async () => {
    const r = await cli('--json', 'db', 'copy', '--to', url);
    expect(r.code, r.stderr).toBe(0);
    const report = r.json<{ from: string; to: string; tables: Record<string, number> }>();
    expect(report).toEqual({
      from: path.join(dataDir, 'wmark.db'),
      to: `PostgreSQL ${url.replace(`:${pg.password}@`, ':***@')}`,
      tables: { videos: 1, templates: 1, watermarks: 1, jobs: 2, credentials: 1 },
      secret: true,
    });
    // The folder's secret went along, so the links it signed and its forensic codes stay valid under the database.
    expect(await pg.query(url, 'SELECT name, value FROM shared_secrets')).toEqual([
      { name: 'signing', value: readFileSync(path.join(dataDir, 'secret.key'), 'utf8').trim() },
    ]);
    expect(r.stdout + r.stderr).not.toContain(pg.password);
    // Row for row what the SQLite file holds, read back through the store as the engine reads it (numbers as numbers).
    const copied = await PostgresStateStore.open(url);
    try {
      for (const table of TABLES) {
        const sqlite = dbRows<Record<string, unknown>>(path.join(dataDir, 'wmark.db'), `SELECT * FROM ${table} ORDER BY 1`);
        expect(sqlite.length, table).toBeGreaterThan(0);
        expect(await copied.tableRows(table), table).toEqual(sqlite);
      }
    } finally {
      await copied.close();
    }
  });

  it('refuses to copy into a database that already holds state, says what it holds, and changes nothing', async () => {
    const r = await cli('db', 'copy', '--to', url);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('already holds state (1 videos, 1 templates, 1 watermarks, 2 jobs, 1 credentials); nothing was copied');
    expect(r.stderr).toContain('Copy into an empty database');
    expect(r.stderr).not.toContain(pg.password);
    expect(await pg.query(url, 'SELECT COUNT(*)::int AS n FROM jobs')).toEqual([{ n: 2 }]);
  });

  it('has `wmark doctor` check the database it names (WMARK_DB_URL), schema and server, without the password', async () => {
    const r = await runCli(['--data-dir', dataDir, '--json', 'doctor'], { env: { WMARK_CONFIG_DIR: path.join(root, 'config'), WMARK_DB_URL: url } });
    const checks = r.json<{ checks: { name: string; ok: boolean; detail: string }[] }>().checks;
    expect(checks.find((c) => c.name === 'database')).toEqual({
      name: 'database',
      ok: true,
      detail: expect.stringMatching(
        new RegExp(`^postgres://${pg.user}:\\*\\*\\*@127\\.0\\.0\\.1:${pg.port}/\\w+ \\(PostgreSQL 15\\.\\d+, schema v\\d+, as this wmark;`),
      ),
      required: true,
    });
    expect(r.stdout + r.stderr).not.toContain(pg.password);
  });

  it('serves the copied state with `wmark serve --db`: the copied key authenticates over HTTP, and no SQLite file or secret is made', async () => {
    const fresh = path.join(root, 'serve-data');
    mkdirSync(fresh);
    serve = spawnServe(fresh, ['--db', url, '--port', '0']);
    const base = await serve.url;
    const token = await fetch(`${base}/1.0/authenticate/accessToken`, { headers: keyHeaders(cred) });
    expect(token.status).toBe(200);
    const videos = await fetch(`${base}/2.0/videos`, { headers: keyHeaders(cred) });
    expect(videos.status).toBe(200);
    expect(JSON.stringify(await videos.json())).toContain('"copied"');
    const templates = await fetch(`${base}/2.0/templates`, { headers: keyHeaders(cred) });
    expect(JSON.stringify(await templates.json())).toContain('"corner"');
    const refused = await fetch(`${base}/2.0/videos`, { headers: keyHeaders({ clientId: cred.clientId, apiKey: 'wmk_wrong' }) });
    expect(refused.status).toBe(401);
    // It found the copied key, so it made none of its own, and said where its state lives without the password.
    expect(serve.stderr()).not.toContain('No API credentials existed');
    expect(serve.stderr()).toContain(`state: PostgreSQL postgres://${pg.user}:***@127.0.0.1:${pg.port}/`);
    expect(serve.stderr()).not.toContain(pg.password);
    expect(readdirSync(fresh).filter((f) => f.startsWith('wmark.db') || f === 'secret.key')).toEqual([]);
  });
});
