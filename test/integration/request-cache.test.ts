// A repeated watermark request answered from what an instance kept, and never once its rows changed: two engines on
// one real PostgreSQL (two instances: their own pools and LISTEN connections), and SQLite in one process and beside
// another connection on the same file (the CLI next to a serve). A watermark deleted, a video replaced, a container
// added through A is seen by B's very next request; an expired one is refused at once; B's LISTEN connection dropping
// empties what it kept, and it keeps nothing until it listens again.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { isWmarkError } from '../../src/core/errors.js';
import type { PostgresChangeBus } from '../../src/engine/state/postgres-change-bus.js';
import type { SqlDatabase } from '../../src/engine/state/sql-database.js';
import type { Container, RenderMode } from '../../src/engine/state/state-store.js';
import { deleteWatermark } from '../../src/engine/watermark/manage.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { ingestedVideoRow } from '../helpers/video-record.js';
import { settingsOf } from '../helpers/watermark-helpers.js';

const T0 = 1_800_000_000_000;
let clock = T0;
const now = () => clock;

/** An ingested video's row, as an ingest leaves it (the cache reads rows; no clip needs encoding here). */
const videoRow = (id: string, key: string) => ingestedVideoRow(id, key, { createdOn: T0 });

/** Counts the statements an engine's store sends from now on. */
function counted(engine: TestEngine): { readonly n: number } {
  const db = (engine.store as unknown as { db: SqlDatabase }).db;
  const counter = { n: 0 };
  for (const name of ['get', 'all', 'run', 'atomically', 'together'] as const) {
    const inner = db[name].bind(db) as (...args: unknown[]) => Promise<unknown>;
    (db as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      counter.n++;
      return inner(...args);
    };
  }
  return counter;
}

const ask = (engine: TestEngine, key: string, content: string, extra: { containers?: Container[]; expirationSeconds?: number; render?: RenderMode } = {}) =>
  requestWatermark(engine, { video: { key }, settings: settingsOf([{ content }]), containers: extra.containers ?? ['m3u8'], ...extra });

/** Makes a READY watermark through `a`, as its job would leave it. */
async function readyThrough(a: TestEngine, key: string, content: string, expirationSeconds?: number) {
  const made = await ask(a, key, content, expirationSeconds === undefined ? {} : { expirationSeconds });
  await a.store.updateWatermark(made.watermark.id, { status: 'READY', readyOn: now() });
  return made.watermark;
}

/** Asks through `b` until it answers from what it kept (its LISTEN connection may still be opening). */
async function keptBy(b: TestEngine, reads: { readonly n: number }, key: string, content: string, render?: RenderMode) {
  await waitFor(
    async () => {
      await ask(b, key, content, { render });
      const before = reads.n;
      const again = await ask(b, key, content, { render });
      return reads.n === before ? again : undefined;
    },
    'a repeated request answered from what it kept',
    10_000,
    50,
  );
}

/**
 * How long another instance may answer from what it kept after a change: on PostgreSQL the change's notice reaches
 * it through its own LISTEN connection, a few milliseconds after the writer heard its own copy and answered.
 */
const NOTICE_BOUND_MS = 2_000;

/** Asks through `b` until `seen` holds of its answer, within the notice bound. */
function seenBy<T>(ask: () => Promise<T>, seen: (answer: T) => boolean, what: string): Promise<T> {
  return waitFor(
    async () => {
      const answer = await ask();
      return seen(answer) ? answer : undefined;
    },
    what,
    NOTICE_BOUND_MS,
    10,
  );
}

interface Pair {
  name: string;
  skip?: string | undefined;
  open(): Promise<{ a: TestEngine; b: TestEngine }>;
  close(): Promise<void>;
}

let pg: TestPostgres | undefined;
let url = '';
const opened: TestEngine[] = [];
const sqliteDir = tempDir('request-cache');
const PAIRS: Pair[] = [
  {
    name: 'two instances on one PostgreSQL',
    skip: POSTGRES_MISSING,
    open: async () => {
      pg ??= await startPostgres();
      url = await pg.createDatabase();
      const [a, b] = [await testEngine({ database: url, now }), await testEngine({ database: url, now })];
      opened.push(a, b);
      return { a, b };
    },
    close: async () => pg?.stop(),
  },
  {
    name: 'SQLite, one process',
    open: async () => {
      const a = await testEngine({ dataDir: tempDir('request-cache-one'), now });
      opened.push(a);
      return { a, b: a };
    },
    close: async () => undefined,
  },
  {
    name: 'SQLite, two connections on one file',
    open: async () => {
      const dataDir = `${sqliteDir}/${Math.random().toString(36).slice(2)}`;
      const [a, b] = [await testEngine({ dataDir, now }), await testEngine({ dataDir, now })];
      opened.push(a, b);
      return { a, b };
    },
    close: async () => undefined,
  },
];

afterAll(async () => {
  for (const e of opened) await e.dispose();
  for (const p of PAIRS) await p.close();
  rmSync(sqliteDir, { recursive: true, force: true });
});

describe.each(PAIRS)('$name', (pair) => {
  const run = pair.skip ? it.skip : it;
  let a: TestEngine;
  let b: TestEngine;
  let reads: { readonly n: number };
  let n = 0;
  /** A new video key for each case. */
  const fresh = async () => {
    const key = `clip-${++n}`;
    await a.store.insertVideo(videoRow(`${key}-v1`, key));
    return key;
  };

  beforeAll(async () => {
    if (pair.skip) return;
    ({ a, b } = await pair.open());
    reads = counted(b);
  }, 120_000);

  run('answers a repeated request for a READY watermark with no statement, and reads one that is not READY each time', async () => {
    const key = await fresh();
    const made = await ask(a, key, 'still rendering');
    for (let i = 0; i < 3; i++) {
      const before = reads.n;
      expect((await ask(b, key, 'still rendering')).watermark.status).toBe('PENDING');
      expect(reads.n).toBeGreaterThan(before);
    }
    await a.store.updateWatermark(made.watermark.id, { status: 'READY', readyOn: now() });
    await keptBy(b, reads, key, 'still rendering');
    const before = reads.n;
    const hit = await ask(b, key, 'still rendering');
    expect([hit.created, hit.watermark.status, reads.n - before]).toEqual([false, 'READY', 0]);
  });

  run('gives a new watermark through B as soon as the delete through A reaches it', async () => {
    const key = await fresh();
    const old = await readyThrough(a, key, 'deleted viewer');
    await keptBy(b, reads, key, 'deleted viewer');
    clock += 1_000;
    await deleteWatermark(a, old);
    const again = await seenBy(
      () => ask(b, key, 'deleted viewer'),
      (r) => r.watermark.status !== 'READY',
      'B to give a new watermark',
    );
    expect([again.watermark.status, again.watermark.createdOn]).toEqual(['PENDING', clock]);
  });

  run('finds the new video through B as soon as the replace through A reaches it', async () => {
    const key = await fresh();
    await readyThrough(a, key, 'replaced viewer');
    await keptBy(b, reads, key, 'replaced viewer');
    // What a replacing ingest does to the rows: the old video and its watermarks go in one transaction, the new comes.
    await a.store.deleteVideoAndWatermarks(`${key}-v1`);
    await a.store.insertVideo(videoRow(`${key}-v2`, key));
    const again = await seenBy(
      () => ask(b, key, 'replaced viewer'),
      (r) => r.video.id !== `${key}-v1`,
      'B to find the new video',
    );
    expect([again.video.id, again.watermark.videoId]).toEqual([`${key}-v2`, `${key}-v2`]);
  });

  run('refuses through B, at once, a kept watermark that has expired', async () => {
    const key = await fresh();
    await readyThrough(a, key, 'expiring viewer', (clock + 60_000) / 1000);
    await keptBy(b, reads, key, 'expiring viewer');
    clock += 60_001;
    const error = await ask(b, key, 'expiring viewer').catch((e: unknown) => e);
    expect(isWmarkError(error) && error.code).toBe('WATERMARK_EXPIRED');
  });

  run('keeps a watermark played on demand, and sees through B the READY A wrote once every segment was there', async () => {
    const key = await fresh();
    const made = await ask(a, key, 'on-demand viewer', { render: 'on-demand' });
    await a.store.updateWatermark(made.watermark.id, { status: 'PLAYABLE' }, { from: 'PENDING' });
    await keptBy(b, reads, key, 'on-demand viewer', 'on-demand');
    clock += 1_000;
    await a.store.updateWatermark(made.watermark.id, { status: 'READY', readyOn: clock });
    const again = await seenBy(
      () => ask(b, key, 'on-demand viewer', { render: 'on-demand' }),
      (r) => r.watermark.status !== 'PLAYABLE',
      'B to see READY',
    );
    expect([again.watermark.status, again.watermark.readyOn]).toEqual(['READY', clock]);
  });

  run('sees through B a container A added (the watermark is no longer READY)', async () => {
    const key = await fresh();
    await readyThrough(a, key, 'mp4 viewer');
    await keptBy(b, reads, key, 'mp4 viewer');
    await ask(a, key, 'mp4 viewer', { containers: ['m3u8', 'mp4'] });
    const again = await seenBy(
      () => ask(b, key, 'mp4 viewer'),
      (r) => r.watermark.status !== 'READY',
      'B to see the container added',
    );
    expect([again.watermark.status, again.watermark.containers]).toEqual(['PLAYABLE', ['m3u8', 'mp4']]);
  });

  if (pair.name.includes('PostgreSQL')) {
    run('empties what B kept when its LISTEN connection drops, keeps nothing while it is down, and keeps again once back', async () => {
      const key = await fresh();
      const old = await readyThrough(a, key, 'deaf viewer');
      await keptBy(b, reads, key, 'deaf viewer');
      const bus = b.store.changeBus() as PostgresChangeBus;
      await pg!.query(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()");
      await waitFor(async () => (bus.listening ? undefined : true), 'B to notice its LISTEN connection dropped', 5_000, 5);
      // Every request reads now; a delete whose notice B could not hear is seen at once.
      for (let i = 0; i < 2; i++) {
        const before = reads.n;
        await ask(b, key, 'deaf viewer');
        expect(reads.n).toBeGreaterThan(before);
      }
      await deleteWatermark(a, old);
      expect((await ask(b, key, 'deaf viewer')).created).toBe(true);
      await a.store.updateWatermark(old.id, { status: 'READY', readyOn: now() });
      await keptBy(b, reads, key, 'deaf viewer');
      expect(bus.listening).toBe(true);
    });
  }
});
