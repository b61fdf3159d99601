// Engines on one real PostgreSQL 15 database: migrations run once when they open it together, a newer schema is
// refused, the races SQLite serialised stay exactly-once across engines, a whole watermark job renders with no SQLite
// file made, and a database that cannot be reached is a catalogued error that never shows the password.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { runWmark } from '../../harness/cli-helpers.js';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { flat, REPO, tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { startProcess } from '../../harness/start-process.js';
import { isWmarkError, type WmarkError } from '../../src/core/errors.js';
import { jobId, LEASE_STALE_MS } from '../../src/engine/jobs/job-lease.js';
import { openEngine } from '../../src/engine/open/open-engine.js';
import { BatchingSocket } from '../../src/engine/state/postgres-connection.js';
import { numberedPlaceholders, PostgresStateStore } from '../../src/engine/state/postgres-state-store.js';
import { SCHEMA_VERSION } from '../../src/engine/state/schema.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { decodeFrame, decodesCleanly, diffBox } from '../helpers/media.js';
import { ffmpegWrapper, ingestFixture, parsePlaylist, renderWith, SMALL, settingsOf } from '../helpers/watermark-helpers.js';

const ENCODE = { preset: 'veryfast', crf: 23 } as const;

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<WmarkError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWmarkError(error)) throw new Error(`expected a WmarkError, got ${String(error)}`);
  return error;
}

it('rewrites ? placeholders to $n, leaving string literals and quoted names alone', () => {
  expect(numberedPlaceholders("UPDATE jobs SET a = ?, b = 'x?''y?' WHERE \"q?\" = ? AND c IN (?, ?)")).toBe(
    "UPDATE jobs SET a = $1, b = 'x?''y?' WHERE \"q?\" = $2 AND c IN ($3, $4)",
  );
});

it("sends a tick's writes to the database in one segment, in order, and a later tick's after them", async () => {
  const chunks: Buffer[] = [];
  const server = net.createServer((c) => c.on('data', (d: Buffer) => chunks.push(d)));
  const received = () => chunks.reduce((n, c) => n + c.length, 0);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = new BatchingSocket();
  try {
    await new Promise<void>((resolve) => socket.connect((server.address() as net.AddressInfo).port, '127.0.0.1', resolve));
    // A call's messages, as the driver writes them: one write each, all in one tick.
    for (const part of ['bind;', 'describe;', 'execute;', 'sync;']) socket.write(Buffer.from(part));
    await waitFor(async () => (received() === 27 ? true : undefined), 'the first call', 5_000, 10);
    socket.write('next;', 'utf8');
    await waitFor(async () => (received() === 32 ? true : undefined), 'the second call', 5_000, 10);
    expect(chunks.map((c) => c.toString('utf8'))).toEqual(['bind;describe;execute;sync;', 'next;']);
  } finally {
    socket.destroy();
    server.close();
  }
});

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'engines on one PostgreSQL database', () => {
  let pg: TestPostgres;
  const dirs: string[] = [];
  const engines: TestEngine[] = [];
  beforeAll(async () => {
    pg = await startPostgres({ statementStats: true });
  }, 60_000);
  afterAll(async () => {
    for (const e of engines) await e.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await pg?.stop();
  });

  async function engineOn(url: string, dataDir = tempDir('pg-engine')): Promise<TestEngine> {
    if (!dirs.includes(dataDir)) dirs.push(dataDir);
    const engine = await testEngine({ dataDir, database: url });
    engines.push(engine);
    return engine;
  }

  it('runs the migrations once when engines open an empty database at the same moment', async () => {
    const url = await pg.createDatabase();
    const [a, b] = await Promise.all([engineOn(url), engineOn(url)]);
    const stores = await Promise.all([1, 2, 3].map(() => PostgresStateStore.open(url)));
    expect(stores.map((s) => s.migrated)).toEqual([0, 0, 0]);
    for (const s of stores) await s.close();
    const applied = await pg.query<{ version: number }>(url, 'SELECT version FROM wmark_schema_migrations ORDER BY version');
    expect(applied.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    expect((await a.store.describe()).schemaVersion).toBe(SCHEMA_VERSION);
    expect((await b.store.describe()).database).toBe(`PostgreSQL postgres://${pg.user}:***@127.0.0.1:${pg.port}/${new URL(url).pathname.slice(1)}`);
    // Several openers racing on a second empty database: exactly one of them migrates it.
    const other = await pg.createDatabase();
    const racing = await Promise.all([1, 2, 3, 4].map(() => PostgresStateStore.open(other)));
    expect(racing.map((s) => s.migrated).sort()).toEqual([0, 0, 0, SCHEMA_VERSION]);
    for (const s of racing) await s.close();
  });

  it('runs the migrations once when several wmark processes start on an empty database together', async () => {
    const url = await pg.createDatabase();
    const box = tempDir('pg-processes');
    dirs.push(box);
    const runs = await Promise.all(
      [1, 2, 3].map((i) =>
        runWmark(['--data-dir', path.join(box, `data-${i}`), '--json', 'template', 'list'], { env: { WMARK_DB_URL: url, WMARK_CONFIG_DIR: box } }),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const applied = await pg.query<{ version: number }>(url, 'SELECT version FROM wmark_schema_migrations ORDER BY version');
    expect(applied.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    for (let i = 1; i <= 3; i++) expect(existsSync(path.join(box, `data-${i}`, 'wmark.db'))).toBe(false);
  });

  it('refuses a database whose schema is newer than this wmark knows, naming it without the password', async () => {
    const url = await pg.createDatabase();
    await (await PostgresStateStore.open(url)).close();
    await pg.query(url, 'INSERT INTO wmark_schema_migrations (version, applied_on) VALUES ($1, 0)', [SCHEMA_VERSION + 1]);
    const error = await failure(PostgresStateStore.open(url));
    expect(error.code).toBe('DATABASE_TOO_NEW');
    expect(error.message).toContain(`has schema v${SCHEMA_VERSION + 1}, newer than this wmark knows (v${SCHEMA_VERSION})`);
    expect(error.message).toContain(`postgres://${pg.user}:***@`);
    expect(error.message).not.toContain(pg.password);
  });

  it('makes one watermark of identical requests through two engines at once, gives a lease to one, and lets only its owner renew it', async () => {
    const url = await pg.createDatabase();
    const shared = tempDir('pg-shared');
    const a = await engineOn(url, shared);
    const b = await engineOn(url, shared);
    await ingestFixture(a, await flat('336699', 2), 'race');
    const request = () => ({ video: { key: 'race' }, settings: settingsOf([{ type: 'TEXT', content: 'same viewer' }]), containers: ['m3u8' as const] });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => requestWatermark(i % 2 ? b : a, request())));
    expect(new Set(answers.map((r) => r.watermark.id)).size).toBe(1);
    expect(answers.filter((r) => r.created)).toHaveLength(1);
    expect(await pg.query(url, 'SELECT COUNT(*)::int AS n FROM watermarks')).toEqual([{ n: 1 }]);

    for (let round = 0; round < 10; round++) {
      const id = jobId('watermark', `race-${round}`);
      await a.store.ensureJob('watermark', `race-${round}`, a.now());
      const won = await Promise.all([a.store.acquireJob(id, a.owner, a.now(), 20_000), b.store.acquireJob(id, b.owner, b.now(), 20_000)]);
      expect(won.filter(Boolean)).toHaveLength(1);
      const [owner, other] = won[0] ? [a, b] : [b, a];
      const beats = await Promise.all([owner.store.heartbeatJob(id, owner.owner, owner.now()), other.store.heartbeatJob(id, other.owner, other.now())]);
      expect(beats).toEqual([true, false]);
      expect(await a.store.getJob(id)).toMatchObject({ owner: owner.owner, status: 'running', attempts: 1 });
    }
  });

  it('plans a repeated request once rather than on every call, and still answers it after another instance adds a column', async () => {
    const url = await pg.createDatabase();
    const a = await engineOn(url);
    await ingestFixture(a, await flat('336699', 2), 'prepared');
    const request = () => ({ video: { key: 'prepared' }, settings: settingsOf([{ type: 'TEXT', content: 'one viewer' }]), containers: ['m3u8' as const] });
    const first = await requestWatermark(a, request());
    await pg.query(url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pg.query(url, 'SELECT pg_stat_statements_reset()');
    for (let i = 0; i < 20; i++) {
      const again = await requestWatermark(a, request());
      expect(again).toMatchObject({ created: false, watermark: { id: first.watermark.id } });
    }
    const [lookup] = await pg.query<{ calls: number; plans: number }>(
      url,
      "SELECT calls::int AS calls, plans::int AS plans FROM pg_stat_statements WHERE query LIKE 'SELECT v.*, w.id AS w_id%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    expect(lookup?.calls).toBe(20);
    // PostgreSQL plans a prepared statement for its first five executions, then keeps a generic plan.
    expect(lookup!.plans).toBeLessThanOrEqual(6);

    // A newer wmark's migration adds a column: prepared `SELECT *`s are stale, and the answers stay the same.
    await pg.query(url, 'ALTER TABLE watermarks ADD COLUMN added_by_a_newer_schema TEXT');
    for (let i = 0; i < 3; i++) expect(await requestWatermark(a, request())).toMatchObject({ created: false, watermark: { id: first.watermark.id } });
    expect((await a.store.getWatermark(first.watermark.id))?.id).toBe(first.watermark.id);
  });

  it('gives every engine on one database the same secret, stored there by the first, and writes none to a data folder', async () => {
    const url = await pg.createDatabase();
    const [a, b] = await Promise.all([engineOn(url), engineOn(url)]);
    expect(a.secret.length).toBeGreaterThanOrEqual(32);
    expect(a.secret.equals(b.secret)).toBe(true);
    expect(await pg.query(url, 'SELECT name, value FROM shared_secrets')).toEqual([{ name: 'signing', value: a.secret.toString('base64url') }]);
    for (const e of [a, b]) expect(existsSync(e.paths.secret), e.dataDir).toBe(false);
    // An operator's secret that differs from the database's is refused before anything is signed with it.
    const refused = await failure(
      openEngine({ dataDir: tempDir('pg-engine'), workers: 1, encode: ENCODE, database: url, secret: randomBytes(32).toString('base64url') }),
    );
    expect(refused.code).toBe('CONFIG_INVALID');
    expect(refused.message).toContain('does not match the one in use: the database holds a different one');
    expect(refused.message).not.toContain(a.secret.toString('base64url'));
    // The same one is accepted.
    const same = await openEngine({ dataDir: tempDir('pg-engine'), workers: 1, encode: ENCODE, database: url, secret: a.secret.toString('base64url') });
    expect(same.secret.equals(a.secret)).toBe(true);
    await same.close();
  });

  it("wakes a watcher on one engine when another moves a job on, through the database's notices, within a poll's time", async () => {
    const url = await pg.createDatabase();
    const [a, b] = await Promise.all([engineOn(url), engineOn(url)]);
    expect(b.changes.crossProcess).toBe(true);
    const heard: { engine: string; at: number }[] = [];
    const offs = [
      b.changes.subscribe('watermark:w1', () => heard.push({ engine: 'b', at: Date.now() })),
      a.changes.subscribe('watermark:w1', () => heard.push({ engine: 'a', at: Date.now() })),
      b.changes.subscribe('watermark:other', () => heard.push({ engine: 'b-other', at: Date.now() })),
    ];
    // The listening connection opens with the first subscription: wait until a notice gets through.
    await waitFor(
      async () => {
        a.changes.notify('watermark:w1');
        await new Promise((r) => setTimeout(r, 100));
        return heard.some((h) => h.engine === 'b') || undefined;
      },
      'the listening connection',
      10_000,
    );
    heard.length = 0;
    const sent = Date.now();
    a.changes.notify('watermark:w1');
    await waitFor(() => heard.find((h) => h.engine === 'b'), "B's wake-up", 5000, 10);
    await new Promise((r) => setTimeout(r, 300));
    // B heard it well within its 2-s fallback poll; A heard its own notice once (not again through the database);
    // a watcher of another watermark heard nothing.
    expect(heard.find((h) => h.engine === 'b')!.at - sent).toBeLessThan(1000);
    expect(heard.filter((h) => h.engine === 'a')).toHaveLength(1);
    expect(heard.filter((h) => h.engine === 'b-other')).toHaveLength(0);
    for (const off of offs) off();
  });

  it('renders a whole watermark through an engine on PostgreSQL, and makes no SQLite file', async () => {
    const url = await pg.createDatabase();
    const engine = await engineOn(url);
    const video = await ingestFixture(engine, await flat('336699', 2), 'whole');
    expect(video).toMatchObject({ status: 'INGESTED', width: SMALL.width, height: SMALL.height });
    expect(video.durationSeconds).toBeCloseTo(2, 1);
    const rendered = await renderWith(engine, 'whole', [{ type: 'TEXT', content: 'PG VIEWER', fontSize: 0.2, fontColor: '#FFFFFF', x: 0.05, y: 0.5 }]);
    expect(rendered.record).toMatchObject({ status: 'READY' });
    const playlist = parsePlaylist(rendered.playlist);
    expect(playlist.segments.length).toBe(video.segments.length);
    const first = path.join(watermarkDir(engine, video.id, rendered.record.id), playlist.segments[0]!.uri);
    await decodesCleanly(first);
    const frame = await decodeFrame(first, 0.2, SMALL);
    // White text on the flat blue: the drawn box is where the setting put it.
    const box = diffBox(frame, [0x33, 0x66, 0x99]);
    expect(box).toBeDefined();
    expect(box!.y0).toBeGreaterThanOrEqual(0.4 * SMALL.height);
    expect(box!.x0).toBeLessThan(0.5 * SMALL.width);
    // Every record is in PostgreSQL, none on disk.
    expect(existsSync(engine.paths.db)).toBe(false);
    expect(readdirSync(engine.dataDir).filter((f) => f.startsWith('wmark.db'))).toEqual([]);
    expect(await pg.query(url, "SELECT status, done, total FROM jobs WHERE kind = 'watermark'")).toEqual([
      { status: 'done', done: video.segments.length, total: video.segments.length },
    ]);
  });

  it('hands a --no-wait watermark to a detached process that finds the same database (by env, not argv)', async () => {
    const url = await pg.createDatabase();
    const box = tempDir('pg-nowait');
    dirs.push(box);
    const dataDir = path.join(box, 'data');
    const ffmpeg = ffmpegWrapper(box, { log: path.join(box, 'ffmpeg.log'), sleepPerSegment: 0.5 });
    const env = { WMARK_CONFIG_DIR: box, WMARK_FFMPEG: ffmpeg };
    const cli = (...args: string[]) => runCli(['--data-dir', dataDir, '--db', url, '--json', ...args], { env, cwd: box });
    expect((await cli('ingest', await flat('336699', 6), '--key', 'later')).code).toBe(0);
    const started = await cli('watermark', '--key', 'later', '--text', 'in the background', '--no-wait');
    expect(started.code, started.stderr).toBe(0);
    const id = started.json<{ id: string }>().id;
    const job = await waitFor(
      async () =>
        (await pg.query<{ status: string; done: number; total: number }>(url, 'SELECT status, done, total FROM jobs WHERE id = $1', [`watermark:${id}`])).find(
          (j) => j.status === 'done',
        ),
      'the detached job to finish',
    );
    expect(job.done).toBe(job.total);
    expect(readdirSync(path.join(dataDir, 'logs')).some((f) => f.includes(id))).toBe(true);
    expect(existsSync(path.join(dataDir, 'wmark.db'))).toBe(false);
    const rows = await pg.query<{ status: string }>(url, 'SELECT status FROM watermarks WHERE id = $1', [id]);
    expect(rows).toEqual([{ status: 'READY' }]);
  });

  it('finishes a job exactly once when its lease holder dies mid-render: nobody takes the live lease, one takes the stale one', async () => {
    const url = await pg.createDatabase();
    const box = tempDir('pg-dies');
    dirs.push(box);
    const dataDir = path.join(box, 'data');
    const ingester = await engineOn(url, dataDir);
    const video = await ingestFixture(ingester, await flat('336699', 6), 'dies');
    const count = video.segments.length;
    // A CLI renders it, a second per segment, and is SIGKILLed once the watermark plays (its first segment is there).
    const ffmpeg = ffmpegWrapper(box, { log: path.join(box, 'ffmpeg.log'), sleepPerSegment: 1 });
    const cli = startProcess({
      name: 'wmark watermark',
      command: process.execPath,
      args: [path.join(REPO, 'bin', 'wmark.js'), '--data-dir', dataDir, '--db', url, '--json', 'watermark', '--key', 'dies', '--text', 'dies mid-render'],
      cwd: box,
      detached: true,
      env: { ...process.env, WMARK_CONFIG_DIR: box, WMARK_FFMPEG: ffmpeg, CI: '1', NO_COLOR: '1' },
    });
    let id: string;
    try {
      id = await waitFor(
        async () => (await pg.query<{ id: string }>(url, "SELECT id FROM watermarks WHERE status = 'PLAYABLE'"))[0]?.id,
        'the CLI to make the watermark playable',
        60_000,
        20,
      );
    } finally {
      await cli.stop({ signal: 'SIGKILL' });
    }
    const folder = watermarkDir(ingester, video.id, id);
    const kept = readdirSync(folder).filter((f) => f.endsWith('.ts')).length;
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(kept).toBeLessThan(count);
    // The dead holder's lease is still live, with the progress PLAYABLE was written with.
    const [left] = await pg.query<{ status: string; owner: string | null; done: number; total: number; attempts: number }>(
      url,
      'SELECT status, owner, done, total, attempts FROM jobs WHERE id = $1',
      [jobId('watermark', id)],
    );
    expect(left).toMatchObject({ status: 'running', attempts: 1, total: count });
    expect(left!.owner).not.toBeNull();
    expect(left!.done).toBeGreaterThanOrEqual(1);

    // Another engine does not take a live lease; one whose clock is past its staleness does, once, and finishes it.
    expect(await runWatermarkJob(await engineOn(url, dataDir), id)).toBeUndefined();
    const late = await testEngine({ dataDir, database: url, now: () => Date.now() + LEASE_STALE_MS + 1_000 });
    engines.push(late);
    expect(await runWatermarkJob(late, id)).toMatchObject({ id, status: 'READY' });
    expect(late.runner.encodes()).toBe(count - kept);
    const finished = await pg.query(url, 'SELECT status, owner, heartbeat, done, total, attempts, updated_on FROM jobs WHERE id = $1', [
      jobId('watermark', id),
    ]);
    expect(finished).toMatchObject([{ status: 'done', owner: null, heartbeat: null, done: count, total: count, attempts: 2 }]);
    const ready = await pg.query(url, 'SELECT status, ready_on FROM watermarks WHERE id = $1', [id]);
    expect(ready).toMatchObject([{ status: 'READY' }]);
    // Run again, it finds the watermark READY: no render, no write.
    expect(await runWatermarkJob(late, id)).toMatchObject({ id, status: 'READY' });
    expect(late.runner.encodes()).toBe(count - kept);
    expect(await pg.query(url, 'SELECT status, owner, heartbeat, done, total, attempts, updated_on FROM jobs WHERE id = $1', [jobId('watermark', id)])).toEqual(
      finished,
    );
    expect(await pg.query(url, 'SELECT status, ready_on FROM watermarks WHERE id = $1', [id])).toEqual(ready);
    expect(parsePlaylist(path.join(folder, 'video.m3u8')).segments).toHaveLength(count);
  });

  it('reports a wrong password or a dead port as DATABASE_UNAVAILABLE with a hint, never the password or a stack', async () => {
    const database = new URL(await pg.createDatabase()).pathname.slice(1);
    const secret = 'not-the-password-s3cret';
    const wrong = `postgres://${pg.user}:${secret}@127.0.0.1:${pg.port}/${database}`;
    const dead = `postgres://${pg.user}:${secret}@127.0.0.1:9/${database}`;
    for (const [url, reason] of [
      [wrong, /password authentication failed/],
      [dead, /ECONNREFUSED/],
    ] as const) {
      const error = await failure(PostgresStateStore.open(url));
      expect(error.code).toBe('DATABASE_UNAVAILABLE');
      expect(error.message).toMatch(reason);
      expect(error.message).toContain(`postgres://${pg.user}:***@127.0.0.1:`);
      expect(JSON.stringify(error.toJSON())).not.toContain(secret);

      const box = tempDir('pg-cli');
      dirs.push(box);
      const cli = await runCli(['--data-dir', box, '--db', url, 'video', 'list'], { env: { WMARK_CONFIG_DIR: box } });
      expect(cli.code).toBe(5);
      expect(cli.stderr).toContain(`cannot use the PostgreSQL database postgres://${pg.user}:***@127.0.0.1:`);
      expect(cli.stderr).toContain('Check --db postgres://USER:PASSWORD@HOST:PORT/DATABASE');
      expect(cli.stderr + cli.stdout).not.toContain(secret);
      expect(cli.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(path.join(box, 'wmark.db'))).toBe(false);

      const json = await runCli(['--data-dir', box, '--db', url, '--json', 'video', 'list'], { env: { WMARK_CONFIG_DIR: box } });
      expect(json.code).toBe(5);
      expect(json.stdout + json.stderr).toContain('"code":"DATABASE_UNAVAILABLE"');
      expect(json.stdout + json.stderr).not.toContain(secret);

      const doctor = await runCli(['--data-dir', box, '--json', 'doctor'], { env: { WMARK_CONFIG_DIR: box, WMARK_DB_URL: url } });
      const checks = doctor.json<{ checks: { name: string; ok: boolean; detail: string }[] }>().checks;
      expect(checks.find((c) => c.name === 'database')).toMatchObject({ ok: false, detail: expect.stringContaining('***@127.0.0.1') });
      expect(doctor.stdout + doctor.stderr).not.toContain(secret);
    }
    const box = tempDir('pg-cli-bad');
    dirs.push(box);
    const bad = await runCli(['--data-dir', box, '--db', `mysql://root:${secret}@db/x`, 'video', 'list'], { env: { WMARK_CONFIG_DIR: box } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--db "mysql://root:***@db/x": not a postgres:// URL with a host');
    expect(bad.stderr).not.toContain(secret);
  });
});
