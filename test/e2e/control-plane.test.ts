// Two `wmark serve` instances on one PostgreSQL database, one Redis and one media folder, with a render farm behind
// them: what one instance made, the other answers for (status links, tokens, playback and on-demand renders,
// deletion), a request waiting on one wakes when the other's job moves on, and neither keeps a secret or a database
// of its own.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { natural } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { call, ingestOverHttp, keyHeaders } from '../../harness/serve-helpers.js';
import { mediaKeys } from '../../src/engine/data-folder/layout.js';
import { faultFarm, readyAndDecodes, type Served, startJob } from '../helpers/fault-farm.js';
import { finishedRenders } from '../helpers/fault-load.js';

let pg: TestPostgres;
let redis: TestRedis;
let source: string;
let url: string;
let media: string;
const farm = faultFarm({ queue: () => redis.url, database: () => url, mediaFolder: () => media });

/** The same link on another instance: same path and signature, that instance's origin. */
const on = (s: Served, link: string) => {
  const u = new URL(link);
  return `${s.base}${u.pathname}${u.search}`;
};
/** What of the state a data folder holds: none of it, when the database and the media store hold everything. */
const localState = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('wmark.db') || f === 'secret.key');

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'two serve instances on one database', () => {
  beforeAll(async () => {
    [pg, redis, source] = await Promise.all([startPostgres(), startRedis(), natural(8)]);
    url = await pg.createDatabase();
    media = farm.newDir('cp-media');
  }, 120_000);
  afterEach(async () => {
    await farm.cleanup();
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), pg?.stop()]);
    farm.dispose();
  });

  it('answers through B for what A made: its token, status link, playback with on-demand renders, and deletion; no local state on either', async () => {
    const [dirA, dirB] = [farm.newDir('cp-a'), farm.newDir('cp-b')];
    const a = await farm.serve(dirA, ['--render', 'on-demand']);
    const b = await farm.serve(dirB, ['--render', 'on-demand']);
    const worker = await farm.worker(farm.newDir('cp-worker'), 'w1', 0);
    // B found the key A made, and a token A signed is good on B: both sign with the database's secret.
    expect(b.proc.stderr()).not.toContain('API key:');
    expect((await call(b.base, 'GET', '/2.0/videos', { headers: a.headers })).status).toBe(200);

    const { video } = await ingestOverHttp(a.base, a.headers, source, 'cp-clip', '1.0');
    const listed = await call(b.base, 'GET', '/2.0/videos', { headers: keyHeaders(b.credentials) });
    expect(listed.json.map((v: { key: string }) => v.key)).toContain('cp-clip');

    // Made through A (it renders the opening), polled and played through B: B renders the rest as it is asked for.
    const job = await startJob(a, 'cp-clip', 'made on A, played on B');
    const segments = await readyAndDecodes(b, on(b, job.href), farm.newDir('cp-play'));
    expect(segments).toBeGreaterThan(2);
    // Every segment was rendered (it played), and as many renders finished as there are segments: none twice.
    expect(finishedRenders(worker.log)).toBe(segments);
    const status = await call(b.base, 'GET', on(b, job.href));
    expect(status.json).toMatchObject({ status: 'READY', containers: { m3u8: expect.stringMatching(new RegExp(`^${b.base}/1\\.0/watermark/`)) } });

    // Removed through B (with credentials only): A no longer knows it, and its files are gone from the shared store.
    const anonymous = await call(b.base, 'DELETE', `/2.0/watermark/${video.id}/${job.id}`);
    expect({ status: anonymous.status, code: anonymous.json?.code }).toEqual({ status: 401, code: 'AUTH_REQUIRED' });
    const removed = await call(b.base, 'DELETE', `/2.0/watermark/${video.id}/${job.id}`, { headers: keyHeaders(b.credentials) });
    expect(removed.status, removed.text).toBe(204);
    expect(existsSync(path.join(media, mediaKeys.watermark(video.id, job.id)))).toBe(false);
    const gone = await call(a.base, 'GET', job.href);
    expect({ status: gone.status, code: gone.json?.code }).toEqual({ status: 404, code: 'WATERMARK_NOT_FOUND' });
    const again = await call(a.base, 'DELETE', `/2.0/watermark/${video.id}/${job.id}`, { headers: keyHeaders(a.credentials) });
    expect({ status: again.status, code: again.json?.code }).toEqual({ status: 404, code: 'WATERMARK_NOT_FOUND' });

    for (const dir of [dirA, dirB]) expect(localState(dir), dir).toEqual([]);
  });

  it('makes one watermark and one render of each segment from identical requests sent to both instances at once', async () => {
    const a = await farm.serve(farm.newDir('cp-race-a'));
    const b = await farm.serve(farm.newDir('cp-race-b'));
    const worker = await farm.worker(farm.newDir('cp-race-worker'), 'w1', 0);
    await ingestOverHttp(a.base, a.headers, source, 'cp-race', '1.0');
    const body = { key: 'cp-race', containers: ['m3u8'], settings: [{ content: 'one of twelve' }] };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(i % 2 ? b.base : a.base, 'POST', '/1.0/watermark', { headers: a.headers, body })),
    );
    expect(answers.map((r) => r.status).sort((x, y) => x - y)).toEqual([...new Array(11).fill(200), 201]);
    expect(new Set(answers.map((r) => r.json.id)).size).toBe(1);
    const segments = await readyAndDecodes(b, on(b, answers[0]!.json.href), farm.newDir('cp-race-play'));
    expect(finishedRenders(worker.log)).toBe(segments);
  });

  it("wakes a 2.0 request waiting on B when A's job makes the watermark playable, through the database's notices rather than B's 2-s poll", async () => {
    const a = await farm.serve(farm.newDir('cp-wake-a'));
    const b = await farm.serve(farm.newDir('cp-wake-b'));
    // Renders that take a second each, so both requests are waiting well before the job gets anywhere.
    await farm.worker(farm.newDir('cp-wake-worker'), 'w1', 1);
    await ingestOverHttp(a.base, a.headers, source, 'cp-wake', '1.0');
    const viewers = ['one', 'two', 'three', 'four', 'five'];
    const ask = async (s: Served, viewer: string) => {
      const r = await call(s.base, 'POST', '/2.0/watermark', {
        headers: keyHeaders(s.credentials),
        body: { key: 'cp-wake', containers: ['m3u8'], settings: [{ content: `viewer ${viewer}` }] },
      });
      return { status: r.status, body: r.json, at: Date.now() };
    };
    const answers = await Promise.all(
      viewers.map(async (viewer) => {
        const first = ask(a, viewer);
        await new Promise((r) => setTimeout(r, 200));
        return { viewer, a: await first, b: await ask(b, viewer) };
      }),
    );
    const lags = answers.map((x) => x.b.at - x.a.at);
    console.log(`wake-up figure: B answered ${lags.map((ms) => `${ms} ms`).join(', ')} after A (its fallback poll is 2000 ms)`);
    for (const x of answers) {
      expect([x.a.status, x.b.status], x.viewer).toEqual([201, 200]);
      expect(x.b.body).toMatchObject({ status: 'READY', id: x.a.body.id });
    }
    // Woken by a poll, B would lag A by up to 2 s, 1 s on average: five lags under 700 ms say it was the notice.
    expect(Math.max(...lags)).toBeLessThan(700);
  });
});
