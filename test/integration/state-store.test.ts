// The state store's contract, run against every database wmark speaks (SQLite, and a real PostgreSQL 15): records
// read back as they were written (numbers as numbers), the race-sensitive transitions (insert-if-absent, lease
// acquire/heartbeat/finish) decide one winner, a database an earlier wmark made is migrated with its rows kept, and
// an engine given a store keeps its state there and nowhere else.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { parseTemplateBody } from '../../src/core/template-schema.js';
import { createTemplate, getTemplate } from '../../src/engine/app/templates.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngine } from '../../src/engine/open/open-engine.js';
import { PostgresStateStore } from '../../src/engine/state/postgres-state-store.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/engine/state/schema.js';
import { SqliteStateStore } from '../../src/engine/state/sqlite-state-store.js';
import type { StateStore, VideoRecord, WatermarkRecord } from '../../src/engine/state/state-store.js';

/** A database to run the contract on: each call opens a new, empty store. */
interface Backend {
  name: string;
  skip?: string | undefined;
  setup(): Promise<void>;
  open(): Promise<StateStore>;
  /** A new database as a wmark of schema `version` left it, holding what `sql` wrote, opened (so migrated) by this one. */
  openFrom(version: number, sql: readonly string[]): Promise<StateStore>;
  teardown(): Promise<void>;
}

/** The statements that bring a new database to schema `version`, then `sql`. */
const statementsTo = (version: number, sql: readonly string[]) => [...MIGRATIONS.slice(0, version).flat(), ...sql];

let sqliteDir: string;
let postgres: TestPostgres | undefined;
const BACKENDS: Backend[] = [
  {
    name: 'SQLite',
    setup: async () => {
      sqliteDir = tempDir('state-contract');
    },
    open: async () => new SqliteStateStore(path.join(sqliteDir, `${Math.random().toString(36).slice(2)}.db`)),
    openFrom: async (version, sql) => {
      const file = path.join(sqliteDir, `${Math.random().toString(36).slice(2)}.db`);
      const db = new Database(file);
      for (const statement of statementsTo(version, sql)) db.exec(statement);
      db.pragma(`user_version = ${version}`);
      db.close();
      return new SqliteStateStore(file);
    },
    teardown: async () => rmSync(sqliteDir, { recursive: true, force: true }),
  },
  {
    name: 'PostgreSQL',
    skip: POSTGRES_MISSING,
    setup: async () => {
      postgres = await startPostgres();
    },
    open: async () => PostgresStateStore.open(await postgres!.createDatabase()),
    openFrom: async (version, sql) => {
      const url = await postgres!.createDatabase();
      for (const statement of statementsTo(version, sql)) await postgres!.query(url, statement);
      await postgres!.query(url, 'CREATE TABLE wmark_schema_migrations (version INTEGER PRIMARY KEY, applied_on BIGINT NOT NULL)');
      for (let v = 1; v <= version; v++) await postgres!.query(url, 'INSERT INTO wmark_schema_migrations VALUES ($1, 0)', [v]);
      return PostgresStateStore.open(url);
    },
    teardown: async () => postgres?.stop(),
  },
];

/** A store that records the name of every call made on it, and forwards it to `inner`. */
function recording(inner: StateStore): { store: StateStore; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

const T0 = Date.UTC(2030, 0, 1);
const HASH = 'a'.repeat(64);

function video(id: string, key: string, extra: Partial<VideoRecord> = {}): VideoRecord {
  return {
    id,
    key,
    sourceUrl: `/clips/${key}.mp4`,
    name: null,
    status: 'PENDING',
    enableForensic: false,
    forensicLayout: null,
    sourceSha256: null,
    width: 320,
    height: 180,
    durationSeconds: 10.011,
    fpsNum: 30000,
    fpsDen: 1001,
    hasAudio: true,
    segments: [1.001, 1.001, 2.002, 4.004, 1.5],
    timeOrigin: 1.4,
    error: null,
    createdOn: T0,
    ...extra,
  };
}

function watermark(id: string, videoId: string, text: string): WatermarkRecord {
  return {
    id,
    videoId,
    settings: [{ type: 'TEXT', content: text }],
    containers: ['m3u8'],
    expiration: T0 + 86_400_000,
    status: 'PENDING',
    error: null,
    createdOn: T0 + 5,
    readyOn: null,
    forensicPayload: 65535,
    render: 'on-demand',
  };
}

describe.each(BACKENDS)('the state store on $name', (backend) => {
  describe.skipIf(backend.skip !== undefined)(backend.skip ? `skipped: ${backend.skip}` : 'contract', () => {
    let store: StateStore | undefined;
    let engine: Engine | undefined;
    let dataDir: string | undefined;
    beforeAll(() => backend.setup(), 60_000);
    afterAll(() => backend.teardown());
    afterEach(async () => {
      await engine?.close();
      await store?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      engine = store = dataDir = undefined;
    });

    it('keeps an engine’s templates in the given store, opens no SQLite file of its own, and closes the store with the engine', async () => {
      dataDir = tempDir('state-store');
      const { store: given, calls } = recording(await backend.open());
      engine = await openEngine({ dataDir, workers: 1, encode: { preset: 'veryfast', crf: 23 }, store: given });

      const created = await createTemplate(engine, parseTemplateBody({ name: 'corner', settings: [{ content: 'viewer %name%' }] }));
      expect(await getTemplate(engine, created.id)).toMatchObject({ id: created.id, name: 'corner' });
      expect((await given.getTemplate(created.id))?.name).toBe('corner');
      expect(calls).toEqual(expect.arrayContaining(['insertTemplate', 'getTemplate']));
      expect(existsSync(engine.paths.db)).toBe(false);

      await engine.close();
      engine = undefined;
      expect(calls.at(-1)).toBe('close');
    });

    it('reads a video back as written, numbers as numbers, and inserts a key only once', async () => {
      store = await backend.open();
      expect((await store.describe()).schemaVersion).toBe(SCHEMA_VERSION);
      expect(await store.insertVideo(video('v1', 'clip'))).toBe(true);
      expect(await store.insertVideo(video('v2', 'clip', { name: 'second' }))).toBe(false);
      expect(await store.getVideo('v1')).toStrictEqual(video('v1', 'clip'));
      expect(await store.getVideo('v2')).toBeUndefined();

      await store.updateVideo('v1', { status: 'INGESTED', enableForensic: true, forensicLayout: 'split', durationSeconds: 9.5, sourceSha256: HASH });
      expect(await store.getVideoByKey('clip')).toMatchObject({
        id: 'v1',
        status: 'INGESTED',
        enableForensic: true,
        forensicLayout: 'split',
        durationSeconds: 9.5,
        sourceSha256: HASH,
      });

      for (let i = 2; i <= 5; i++) await store.insertVideo(video(`v${i}`, `k${i}`, { createdOn: T0 + i }));
      expect((await store.listVideos({ limit: 2, offset: 1 })).map((v) => v.id)).toEqual(['v2', 'v3']);
      expect((await store.listVideos({ offset: 3 })).map((v) => v.id)).toEqual(['v4', 'v5']);
      expect((await store.listVideos({ key: 'k4' })).map((v) => v.id)).toEqual(['v4']);
      await store.deleteVideo('v5');
      expect((await store.listVideos()).map((v) => v.id)).toEqual(['v1', 'v2', 'v3', 'v4']);
    });

    it('names what it needs that may stop answering, its pool and its change bus: none on SQLite, the server’s on PostgreSQL', async () => {
      store = await backend.open();
      const server = backend.name === 'PostgreSQL';
      expect(store.dependencies.map((d) => d.status())).toEqual(server ? [{ name: 'database', up: true, location: expect.stringMatching(/^postgres:/) }] : []);
      expect(store.poolUse()).toEqual(server ? { total: expect.any(Number), idle: expect.any(Number), waiting: 0, max: 10 } : undefined);
      expect(store.changeBus() !== undefined).toBe(server);
    });

    it('migrates a database made before sources were hashed: its videos read as unhashed, take a hash, and new ones keep theirs', async () => {
      const before = SCHEMA_VERSION - 1;
      expect(MIGRATIONS[before]).toEqual(['ALTER TABLE videos ADD COLUMN source_sha256 TEXT']);
      store = await backend.openFrom(before, [
        `INSERT INTO videos (id, key, source_url, status, enable_forensic, width, height, duration, fps_num, fps_den, has_audio, segments, time_origin, created_on)
         VALUES ('old', 'clip', '/clips/clip.mp4', 'INGESTED', 0, 320, 180, 10.011, 30000, 1001, 1, '[1.001,1.001,2.002,4.004,1.5]', 1.4, ${T0})`,
      ]);
      expect((await store.describe()).schemaVersion).toBe(SCHEMA_VERSION);
      expect(await store.getVideo('old')).toStrictEqual(video('old', 'clip', { status: 'INGESTED' }));
      await store.updateVideo('old', { sourceSha256: HASH });
      expect(await store.getVideoByKey('clip')).toStrictEqual(video('old', 'clip', { status: 'INGESTED', sourceSha256: HASH }));
      await store.insertVideo(video('new', 'other', { sourceSha256: HASH.replace(/a/g, 'b') }));
      expect((await store.getVideo('new'))?.sourceSha256).toBe(HASH.replace(/a/g, 'b'));
    });

    it('makes a watermark once (the first writer wins), patches it, and deletes a video with its watermarks and jobs', async () => {
      store = await backend.open();
      await store.insertVideo(video('v1', 'clip'));
      const first = await store.insertWatermarkIfAbsent(watermark('w1', 'v1', 'alice'));
      const again = await store.insertWatermarkIfAbsent({ ...watermark('w1', 'v1', 'alice'), expiration: null, createdOn: T0 + 99 });
      expect(first).toEqual({ record: watermark('w1', 'v1', 'alice'), created: true });
      expect(again).toEqual({ record: watermark('w1', 'v1', 'alice'), created: false });

      await store.updateWatermark('w1', { status: 'READY', readyOn: T0 + 60_000, containers: ['m3u8', 'mp4'], render: 'full' });
      expect(await store.getWatermark('w1')).toMatchObject({ status: 'READY', readyOn: T0 + 60_000, containers: ['m3u8', 'mp4'], render: 'full' });
      await store.insertWatermarkIfAbsent(watermark('w2', 'v1', 'bob'));
      expect((await store.listWatermarks('v1')).map((w) => w.id)).toEqual(['w1', 'w2']);
      // A change asked for from one status leaves a record that moved on alone.
      await store.updateWatermark('w1', { status: 'PLAYABLE' }, { from: 'PENDING' });
      await store.updateWatermark('w2', { status: 'PLAYABLE' }, { from: 'PENDING' });
      expect([(await store.getWatermark('w1'))?.status, (await store.getWatermark('w2'))?.status]).toEqual(['READY', 'PLAYABLE']);

      await store.ensureJob('watermark', 'w1', T0);
      await store.ensureJob('ingest', 'v1', T0);
      await store.deleteWatermark('w2');
      expect(await store.getWatermark('w2')).toBeUndefined();
      await store.deleteVideoAndWatermarks('v1');
      expect([await store.getVideo('v1'), await store.listWatermarks(), await store.getJob('watermark:w1'), await store.getJob('ingest:v1')]).toEqual([
        undefined,
        [],
        undefined,
        undefined,
      ]);
    });

    it('reads a request’s video and its watermark in one call, by key or id, and stays right when a key names another video', async () => {
      store = await backend.open();
      await store.insertVideo(video('v1', 'clip', { status: 'INGESTED' }));
      const identify = (videoId: string) => `${videoId}-alice`;
      expect(await store.findWatermarkRequest({ key: 'nope' }, identify, Date.now())).toEqual({});
      expect(await store.findWatermarkRequest({}, identify, Date.now())).toEqual({});
      // Not made yet, then made: found by key (the second time under the id this store learnt) and by id.
      expect(await store.findWatermarkRequest({ key: 'clip' }, identify, Date.now())).toEqual({
        video: video('v1', 'clip', { status: 'INGESTED' }),
        watermark: undefined,
      });
      await store.insertWatermarkIfAbsent(watermark('v1-alice', 'v1', 'alice'));
      const both = { video: video('v1', 'clip', { status: 'INGESTED' }), watermark: watermark('v1-alice', 'v1', 'alice') };
      expect(await store.findWatermarkRequest({ key: 'clip' }, identify, Date.now())).toEqual(both);
      expect(await store.findWatermarkRequest({ videoId: 'v1' }, identify, Date.now())).toEqual(both);
      // The key now names another video (a replaced ingest): its watermark, not the old video's, is found.
      await store.deleteVideoAndWatermarks('v1');
      await store.insertVideo(video('v2', 'clip'));
      expect(await store.findWatermarkRequest({ key: 'clip' }, identify, Date.now())).toEqual({ video: video('v2', 'clip'), watermark: undefined });
      await store.insertWatermarkIfAbsent(watermark('v2-alice', 'v2', 'alice'));
      expect((await store.findWatermarkRequest({ key: 'clip' }, identify, Date.now())).watermark).toEqual(watermark('v2-alice', 'v2', 'alice'));

      expect(await store.getWatermarkAndJob('v2-alice', 'watermark:v2-alice')).toEqual({ watermark: watermark('v2-alice', 'v2', 'alice'), job: undefined });
      const job = await store.ensureJob('watermark', 'v2-alice', T0);
      expect(await store.getWatermarkAndJob('v2-alice', job.id)).toEqual({ watermark: watermark('v2-alice', 'v2', 'alice'), job });
      expect(await store.getWatermarkAndJob('gone', job.id)).toEqual({});
    });

    it('gives a job’s lease to one owner at a time, renews it for that owner only, and frees it when stale', async () => {
      store = await backend.open();
      const job = await store.ensureJob('watermark', 'w1', T0);
      expect(await store.ensureJob('watermark', 'w1', T0 + 1)).toEqual(job);
      expect(job).toMatchObject({ id: 'watermark:w1', status: 'queued', attempts: 0, done: 0, total: 0, createdOn: T0 });

      const both = await Promise.all([store.acquireJob(job.id, 'a', T0 + 10, 20_000), store.acquireJob(job.id, 'b', T0 + 10, 20_000)]);
      expect(both.filter(Boolean)).toHaveLength(1);
      const [winner, loser] = both[0] ? ['a', 'b'] : ['b', 'a'];
      expect(await store.heartbeatJob(job.id, loser!, T0 + 20)).toBe(false);
      expect(await store.heartbeatJob(job.id, winner!, T0 + 30)).toBe(true);
      await store.finishJob(job.id, loser!, T0 + 40, { status: 'failed', error: 'not mine' });
      await store.setJobProgress(job.id, { done: 3, total: 7, stage: 'render' }, T0 + 50);
      // Progress written by someone who does not hold the lease leaves its heartbeat alone; by its holder, renews it.
      await store.setJobProgress(job.id, { done: 3, total: 7, stage: 'render' }, T0 + 55, loser);
      expect(await store.getJob(job.id)).toMatchObject({ heartbeat: T0 + 30 });
      expect(await store.setJobProgress(job.id, { done: 3, total: 7, stage: 'render' }, T0 + 35, winner)).toBe(true);
      expect(await store.getJob(job.id)).toMatchObject({
        status: 'running',
        owner: winner,
        heartbeat: T0 + 35,
        attempts: 1,
        done: 3,
        total: 7,
        stage: 'render',
      });
      expect(await store.resumableJobs(T0 + 60, 20_000)).toEqual([]);

      // Its owner went quiet: past the stale time another process takes it over.
      expect(await store.acquireJob(job.id, loser!, T0 + 10_000, 20_000)).toBe(false);
      expect((await store.resumableJobs(T0 + 30_031, 20_000)).map((j) => j.id)).toEqual([job.id]);
      expect(await store.acquireJob(job.id, loser!, T0 + 30_031, 20_000)).toBe(true);
      expect(await store.heartbeatJob(job.id, winner!, T0 + 30_040)).toBe(false);
      await store.finishJob(job.id, loser!, T0 + 30_050, { status: 'done' });
      expect(await store.getJob(job.id)).toMatchObject({ status: 'done', owner: null, heartbeat: null, attempts: 2, error: null, updatedOn: T0 + 30_050 });
      expect(await store.acquireJob(job.id, winner!, T0 + 90_000, 20_000)).toBe(false);
      await store.resetJob(job.id, T0 + 90_001);
      expect(await store.getJob(job.id)).toMatchObject({ status: 'queued', owner: null });
    });

    it('writes a watermark’s status with its job’s write in one transaction, and a new watermark with its job row', async () => {
      store = await backend.open();
      await store.insertVideo(video('v1', 'clip'));
      expect((await store.insertWatermarkIfAbsent(watermark('w1', 'v1', 'alice'), T0)).created).toBe(true);
      const id = 'watermark:w1';
      expect(await store.getJob(id)).toMatchObject({ kind: 'watermark', targetId: 'w1', status: 'queued', attempts: 0, createdOn: T0 });
      expect((await store.insertWatermarkIfAbsent(watermark('w1', 'v1', 'alice'), T0 + 1)).created).toBe(false);
      // What its job reads when it starts: the watermark and its video, in one read.
      expect(await store.getWatermarkWithVideo('w1')).toEqual({ watermark: watermark('w1', 'v1', 'alice'), video: video('v1', 'clip') });
      expect(await store.getWatermarkWithVideo('gone')).toBeUndefined();
      expect(await store.getJob(id)).toMatchObject({ createdOn: T0, updatedOn: T0 });
      expect(await store.acquireJob(id, 'a', T0 + 10, 20_000)).toBe(true);

      // PLAYABLE carries the job's progress not written yet, and renews the lease.
      const rendering = { stage: 'rendering' };
      await store.updateWatermark(
        'w1',
        { status: 'PLAYABLE' },
        { from: 'PENDING', job: { id, owner: 'a', now: T0 + 20, progress: { done: 1, total: 5, ...rendering } } },
      );
      expect(await store.getWatermarkAndJob('w1', id)).toMatchObject({
        watermark: { status: 'PLAYABLE' },
        job: { status: 'running', owner: 'a', heartbeat: T0 + 20, done: 1, total: 5, stage: 'rendering' },
      });
      // READY ends the lease, done, with its last progress.
      const end = { status: 'done' } as const;
      await store.updateWatermark(
        'w1',
        { status: 'READY', readyOn: T0 + 30, error: null },
        { job: { id, owner: 'a', now: T0 + 30, progress: { done: 5, total: 5 }, end } },
      );
      expect(await store.getWatermarkAndJob('w1', id)).toMatchObject({
        watermark: { status: 'READY', readyOn: T0 + 30 },
        job: { status: 'done', owner: null, heartbeat: null, done: 5, total: 5, stage: null, updatedOn: T0 + 30, attempts: 1 },
      });
      // A lease another process holds now is neither renewed nor ended by the one that lost it.
      await store.resetJob(id, T0 + 40);
      expect(await store.acquireJob(id, 'b', T0 + 41, 20_000)).toBe(true);
      await store.updateWatermark('w1', { status: 'READY', readyOn: T0 + 50 }, { job: { id, owner: 'a', now: T0 + 50, end } });
      expect(await store.getWatermarkAndJob('w1', id)).toMatchObject({
        watermark: { status: 'READY', readyOn: T0 + 50 },
        job: { status: 'running', owner: 'b', heartbeat: T0 + 41 },
      });
    });

    it('keeps templates and credentials, pages templates, and counts active keys', async () => {
      store = await backend.open();
      for (let i = 0; i < 3; i++)
        await store.insertTemplate({ id: `t${i}`, name: `n${i}`, description: i ? null : 'first', settings: [{ i }], createdOn: T0 + i });
      expect(await store.getTemplate('t0')).toEqual({ id: 't0', name: 'n0', description: 'first', settings: [{ i: 0 }], createdOn: T0 });
      expect((await store.listTemplates({ limit: 1, offset: 1 })).map((t) => t.id)).toEqual(['t1']);
      expect([await store.deleteTemplate('t1'), await store.deleteTemplate('t1')]).toEqual([true, false]);

      await store.insertCredential({ clientId: 'c1', keyHash: 'h1', label: 'ops', createdOn: T0, revokedOn: null });
      await store.insertCredential({ clientId: 'c2', keyHash: 'h2', label: null, createdOn: T0 + 1, revokedOn: null });
      expect(await store.countActiveCredentials()).toBe(2);
      expect([await store.revokeCredential('c1', T0 + 5), await store.revokeCredential('c1', T0 + 6)]).toEqual([true, false]);
      expect(await store.getCredential('c1')).toEqual({ clientId: 'c1', keyHash: 'h1', label: 'ops', createdOn: T0, revokedOn: T0 + 5 });
      expect((await store.listCredentials()).map((c) => c.clientId)).toEqual(['c1', 'c2']);
      expect(await store.countActiveCredentials()).toBe(1);
    });
  });
});

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'credentials on PostgreSQL', () => {
  let pg: TestPostgres;
  const stores: StateStore[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const s of stores) await s.close();
    await pg?.stop();
  });

  /** Until `check` holds, a few ms at a time: a notice between processes arrives on its own connection. */
  async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`never: ${what}`);
  }

  it('sends a change notice to every instance with the write it announces', async () => {
    const url = await pg.createDatabase();
    const [a, b] = [await PostgresStateStore.open(url), await PostgresStateStore.open(url)];
    stores.push(a, b);
    const heard: string[] = [];
    b.changeBus()!.listen((message) => heard.push(message));
    await until(() => (b.changeBus() as unknown as { listening: boolean }).listening, 'b LISTENs');
    await a.insertVideo(video('v1', 'clip'));
    await a.insertWatermarkIfAbsent(watermark('w1', 'v1', 'alice'));
    await a.ensureJob('watermark', 'w1', T0);
    expect(await a.acquireJob('watermark:w1', 'owner-a', T0, 20_000)).toBe(true);
    await a.updateWatermark('w1', { status: 'PLAYABLE' }, { from: 'PENDING', notice: 'origin watermark:w1' });
    await a.finishJob('watermark:w1', 'owner-a', T0 + 1, { status: 'done' }, 'origin watermark:w1 end');
    await until(() => heard.length === 2, 'b hears both notices');
    expect(heard).toEqual(['origin watermark:w1', 'origin watermark:w1 end']);
    expect([(await a.getWatermark('w1'))?.status, (await a.getJob('watermark:w1'))?.status]).toEqual(['PLAYABLE', 'done']);
  });

  it('keeps a key read lately, drops it when another instance revokes it, and keeps nothing while it cannot hear revocations', async () => {
    const url = await pg.createDatabase();
    const [a, b] = [await PostgresStateStore.open(url), await PostgresStateStore.open(url)];
    stores.push(a, b);
    await b.insertCredential({ clientId: 'c1', keyHash: 'h1', label: null, createdOn: T0, revokedOn: null });
    await b.insertCredential({ clientId: 'c2', keyHash: 'h2', label: null, createdOn: T0, revokedOn: null });
    const busOf = (s: StateStore) => s.changeBus() as unknown as { listening: boolean };
    await a.getCredential('c1');
    await until(() => busOf(a).listening, 'a LISTENs');
    // Read once listening: kept. A change made behind the store's back (no notice) is not seen while it is kept...
    expect(await a.getCredential('c1')).toMatchObject({ revokedOn: null });
    await pg.query(url, 'UPDATE credentials SET label = $1 WHERE client_id = $2', ['changed quietly', 'c1']);
    expect(await a.getCredential('c1')).toMatchObject({ label: null });
    // ...but a revocation through any store is: it tells every instance as it commits.
    expect(await b.revokeCredential('c1', T0 + 1)).toBe(true);
    await until(async () => (await a.getCredential('c1'))?.revokedOn === T0 + 1, 'a sees the revocation');

    // The LISTEN connection drops: what a kept, and anything revoked until it is back, is read again.
    expect(await a.getCredential('c2')).toMatchObject({ revokedOn: null });
    await pg.query(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
    await until(() => !busOf(a).listening, 'a has lost its LISTEN');
    await pg.query(url, 'UPDATE credentials SET revoked_on = $1 WHERE client_id = $2', [T0 + 2, 'c2']);
    expect(await a.getCredential('c2')).toMatchObject({ revokedOn: T0 + 2 });
    await until(() => busOf(a).listening, 'a LISTENs again');
  });
});

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'statements on PostgreSQL', () => {
  let pg: TestPostgres;
  let store: StateStore | undefined;
  beforeAll(async () => {
    pg = await startPostgres({ statementStats: true });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await pg?.stop();
  });

  it('makes a new watermark with its job row, and writes READY with the lease’s end and its notice, each as one statement', async () => {
    const url = await pg.createDatabase();
    await pg.query(url, 'CREATE EXTENSION pg_stat_statements');
    store = await PostgresStateStore.open(url);
    const s = store;
    /** The statements the store ran during `call`: one each means one transaction each, nothing between them. */
    const statementsOf = async (call: () => Promise<unknown>) => {
      await pg.query(url, 'SELECT pg_stat_statements_reset()');
      await call();
      return pg.query<{ query: string; calls: number }>(
        url,
        "SELECT query, calls::int AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'",
      );
    };
    await s.insertVideo(video('v1', 'clip'));
    const made = await statementsOf(() => s.insertWatermarkIfAbsent(watermark('w1', 'v1', 'alice'), T0));
    expect(made).toEqual([{ query: expect.stringMatching(/INSERT INTO jobs[\s\S]*INSERT INTO watermarks/), calls: 1 }]);
    expect(await s.acquireJob('watermark:w1', 'a', T0 + 10, 20_000)).toBe(true);
    const job = { id: 'watermark:w1', owner: 'a', now: T0 + 30, progress: { done: 5, total: 5 }, end: { status: 'done' as const } };
    const ready = await statementsOf(() => s.updateWatermark('w1', { status: 'READY', readyOn: T0 + 30, error: null }, { job, notice: 'origin watermark:w1' }));
    expect(ready).toEqual([{ query: expect.stringMatching(/UPDATE watermarks[\s\S]*UPDATE jobs[\s\S]*pg_notify/), calls: 1 }]);
    expect(await s.getWatermarkAndJob('w1', 'watermark:w1')).toMatchObject({ watermark: { status: 'READY' }, job: { status: 'done', done: 5 } });
  });
});
