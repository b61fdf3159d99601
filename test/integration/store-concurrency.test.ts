// Several real processes on one data dir at once: the same ingest from two CLIs, template writes from two CLIs and two
// tight write loops, and migrations when processes open a brand-new database together. Afterwards the database must
// pass PRAGMA integrity_check and hold exactly the expected rows.
import { chmodSync, copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SpawnResult, startCommand } from '../../harness/cli-helpers.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { FFMPEG } from '../../harness/tools.js';
import { SqliteStateStore } from '../../src/engine/state/sqlite-state-store.js';
import { dataLayout, dbRows, entries, privateInstall } from '../helpers/ingest-helpers.js';

// Spawned processes run bin/wmark.js from a private build of the current sources (see privateInstall).
let BUILD: string;
let BIN: string;
let DIST_STORE: string;

beforeAll(() => {
  BUILD = tempDir('concurrency-build');
  const install = privateInstall(BUILD);
  BIN = install.bin;
  DIST_STORE = pathToFileURL(path.join(install.dist, 'engine', 'state', 'sqlite-state-store.js')).href;
});
afterAll(() => rmSync(BUILD, { recursive: true, force: true }));

function spawnNode(args: string[], env: Record<string, string> = {}, cwd = BUILD): Promise<SpawnResult> {
  return startCommand(process.execPath, args, { cwd, env: { ...(process.env as Record<string, string>), CI: '1', NO_COLOR: '1', ...env } }).done;
}

/** The schema version after every migration: the tables, job progress, the watermarks' render mode (on demand or full),
 * the videos' forensic layout, the secrets shared by instances on one database, the failed-credential counts, and the
 * hash of a local source's bytes. */
const SCHEMA_VERSION = 7;

/** The database's own health check and the schema version, through a fresh connection. */
function inspect(dbFile: string): { integrity: string; version: number; journal: string; tables: string[] } {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }) as string,
      version: db.pragma('user_version', { simple: true }) as number,
      journal: db.pragma('journal_mode', { simple: true }) as string,
      tables: (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name),
    };
  } finally {
    db.close();
  }
}

const TABLES = ['auth_attempts', 'credentials', 'jobs', 'shared_secrets', 'templates', 'videos', 'watermarks'];

/** Code for a child that waits for a shared start time, so processes really hit the database together. */
const BARRIER = `
  const startAt = Number(process.env.START_AT);
  const wait = startAt - Date.now() - 20;
  if (wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
  while (Date.now() < startAt) {}
`;

describe('two wmark processes on one data dir', () => {
  let root: string;
  let dataDir: string;
  let env: Record<string, string>;
  let ffmpegLog: string;

  beforeAll(() => {
    root = tempDir('concurrency');
    dataDir = path.join(root, 'data');
    ffmpegLog = path.join(root, 'ffmpeg.log');
    // An ffmpeg that logs every invocation (one line each) and then runs the bundled one.
    const wrapper = path.join(root, 'ffmpeg-logged.sh');
    writeFileSync(wrapper, `#!/bin/sh\necho "$$ $*" >> '${ffmpegLog}'\nexec '${FFMPEG}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    env = { WMARK_CONFIG_DIR: path.join(root, 'config'), WMARK_FFMPEG: wrapper };
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const wmark = (...argv: string[]) => spawnNode([BIN, '--data-dir', dataDir, '--json', ...argv], env, root);

  it('ingests the same key once when both ask at the same time, and both get the same video', async () => {
    const source = path.join(root, 'clip.mp4');
    copyFileSync(await flat(), source);
    const [a, b] = await Promise.all([wmark('ingest', source, '--key', 'shared'), wmark('ingest', source, '--key', 'shared')]);
    for (const r of [a, b]) expect(r.code, r.stderr + r.stdout).toBe(0);
    const va = JSON.parse(a.stdout) as { id: string; status: string; segments: number };
    const vb = JSON.parse(b.stdout) as { id: string; status: string; segments: number };
    expect(va.id).toBe(vb.id);
    expect([va.status, vb.status]).toEqual(['INGESTED', 'INGESTED']);
    // 10 s: the lead segments (0.5, 0.5, 1, 2 s), one 4-s GOP and the last 2 s.
    expect(va.segments).toBe(6);
    // Exactly one of them did the work; the other waited for it, or found it done.
    const waited = [a, b].filter(
      (r) => r.stderr.includes(`already ingested as ${va.id}; nothing to do`) || r.stderr.includes(`already being ingested as ${va.id}; waiting for it`),
    );
    expect(waited).toHaveLength(1);
    const log = readFileSync(ffmpegLog, 'utf8').split('\n').filter(Boolean);
    expect(log.filter((l) => l.includes('libx264'))).toHaveLength(1);
    const layout = dataLayout(dataDir);
    expect(dbRows(layout.db, 'SELECT id, key, status FROM videos')).toEqual([{ id: va.id, key: 'shared', status: 'INGESTED' }]);
    expect(entries(layout.videos)).toEqual([va.id]);
    expect(entries(layout.tmp)).toEqual([]);
    expect(inspect(layout.db)).toMatchObject({ integrity: 'ok', version: SCHEMA_VERSION, journal: 'wal' });
  });

  it('keeps every template when two processes create them in a loop at the same time', async () => {
    const perLoop = 4;
    const loop = async (name: string): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < perLoop; i++) {
        const file = path.join(root, `${name}-${i}.json`);
        writeFileSync(file, JSON.stringify({ name: `${name}-${i}`, settings: [{ type: 'TEXT', content: `%viewer% ${name} ${i}` }] }));
        const r = await wmark('template', 'create', file);
        expect(r.code, r.stderr + r.stdout).toBe(0);
        ids.push((JSON.parse(r.stdout) as { id: string }).id);
      }
      return ids;
    };
    const [left, right] = await Promise.all([loop('left'), loop('right')]);
    const created = [...left, ...right];
    expect(new Set(created).size).toBe(2 * perLoop);

    const list = await wmark('template', 'list');
    expect(list.code).toBe(0);
    const user = (JSON.parse(list.stdout) as { id: string; name: string; builtin: boolean; placeholders: string[] }[]).filter((t) => !t.builtin);
    expect(user.map((t) => t.id).sort()).toEqual([...created].sort());
    expect(user.map((t) => t.name).sort()).toEqual(
      [...Array.from({ length: perLoop }, (_, i) => `left-${i}`), ...Array.from({ length: perLoop }, (_, i) => `right-${i}`)].sort(),
    );
    expect(user.every((t) => t.placeholders.join() === 'viewer')).toBe(true);

    const db = dataLayout(dataDir).db;
    expect(inspect(db)).toMatchObject({ integrity: 'ok', version: SCHEMA_VERSION, tables: TABLES });
    expect(dbRows(db, 'SELECT COUNT(*) AS n FROM templates')).toEqual([{ n: 2 * perLoop }]);
    expect(dbRows(db, 'SELECT COUNT(*) AS n FROM videos')).toEqual([{ n: 1 }]);
  });
});

describe('Store under concurrent writers', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loses no row when two processes insert and update in tight loops at once', async () => {
    dir = tempDir('store-writers');
    const db = path.join(dir, 'wmark.db');
    await new SqliteStateStore(db).close();
    const writer = `
      const { SqliteStateStore } = await import(${JSON.stringify(DIST_STORE)});
      const { default: Database } = await import('better-sqlite3');
      const store = new SqliteStateStore(process.env.DB);
      // A second connection of the same process, writing around the store, as another piece of code would.
      const raw = new Database(process.env.DB, { timeout: 15000 });
      ${BARRIER}
      const who = process.env.WHO;
      for (let i = 0; i < 300; i++) {
        await store.insertTemplate({ id: who + '-' + i, name: who + ' ' + i, description: null, settings: [{ type: 'TEXT', content: String(i) }], createdOn: i });
        if (i % 10 === 9) raw.prepare('UPDATE templates SET description = ? WHERE id LIKE ?').run('seen by ' + who, who + '-%');
      }
      raw.close();
      await store.close();
      console.log('done', who);
    `;
    const startAt = String(Date.now() + 1500);
    const results = await Promise.all(['a', 'b'].map((who) => spawnNode(['--input-type=module', '-e', writer], { DB: db, WHO: who, START_AT: startAt })));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.map((r) => r.stdout.trim()).sort()).toEqual(['done a', 'done b']);
    expect(inspect(db)).toMatchObject({ integrity: 'ok', version: SCHEMA_VERSION });
    expect(
      dbRows(
        db,
        'SELECT substr(id, 1, 1) AS who, COUNT(*) AS n, COUNT(DISTINCT name) AS names, SUM(description IS NOT NULL) AS described FROM templates GROUP BY who ORDER BY who',
      ),
    ).toEqual([
      { who: 'a', n: 300, names: 300, described: 300 },
      { who: 'b', n: 300, names: 300, described: 300 },
    ]);
  });
});

describe('Store migrations', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates a new file once when several processes open it at the same moment', async () => {
    dir = tempDir('store-migrate');
    const db = path.join(dir, 'nested', 'wmark.db');
    const opener = `
      const { SqliteStateStore } = await import(${JSON.stringify(DIST_STORE)});
      ${BARRIER}
      const store = new SqliteStateStore(process.env.DB);
      await store.insertTemplate({ id: process.env.WHO, name: process.env.WHO, description: null, settings: [], createdOn: 0 });
      console.log(JSON.stringify({ who: process.env.WHO, version: store.schemaVersion }));
      await store.close();
    `;
    const startAt = String(Date.now() + 1500);
    const openers = ['p1', 'p2', 'p3', 'p4'];
    const results = await Promise.all(openers.map((who) => spawnNode(['--input-type=module', '-e', opener], { DB: db, WHO: who, START_AT: startAt })));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.map((r) => JSON.parse(r.stdout) as { who: string; version: number }).sort((x, y) => x.who.localeCompare(y.who))).toEqual(
      openers.map((who) => ({ who, version: SCHEMA_VERSION })),
    );
    expect(inspect(db)).toEqual({ integrity: 'ok', version: SCHEMA_VERSION, journal: 'wal', tables: TABLES });
    expect(dbRows<{ id: string }>(db, 'SELECT id FROM templates ORDER BY id').map((r) => r.id)).toEqual(openers);
  });

  it('is a no-op for a second Store on the same file, in the same process, and after reopening', async () => {
    dir = tempDir('store-reopen');
    const db = path.join(dir, 'wmark.db');
    expect(existsSync(db)).toBe(false);
    const first = new SqliteStateStore(db);
    const second = new SqliteStateStore(db);
    try {
      expect([first.schemaVersion, second.schemaVersion]).toEqual([SCHEMA_VERSION, SCHEMA_VERSION]);
      await first.insertTemplate({ id: 't1', name: 'one', description: null, settings: [], createdOn: 1 });
      // Both connections see one database: a write through one is read through the other.
      expect(await second.getTemplate('t1')).toMatchObject({ id: 't1', name: 'one' });
    } finally {
      await second.close();
      await first.close();
    }
    const third = new SqliteStateStore(db);
    try {
      expect(third.schemaVersion).toBe(SCHEMA_VERSION);
      expect((await third.listTemplates()).map((t) => t.id)).toEqual(['t1']);
    } finally {
      await third.close();
    }
    expect(inspect(db)).toEqual({ integrity: 'ok', version: SCHEMA_VERSION, journal: 'wal', tables: TABLES });
  });
});
