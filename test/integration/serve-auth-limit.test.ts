// The failed-credential limit under concurrency, on SQLite and on PostgreSQL: 60 wrong keys sent at once to a real
// `wmark serve` over loopback are exactly 10 answers 401 and 50 answers 429 (a check is counted before it runs); two
// instances on one database share the count; an IPv6 client is counted by its /64 (or the prefix configured); and a
// client whose checks pass, however many at once, is never held back by them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { call, keyHeaders, serveEngine, type TestServer } from '../../harness/serve-helpers.js';

const LIMIT = { failures: 10, windowMs: 60_000 };
let pg: TestPostgres | undefined;
const engines: TestEngine[] = [];
const servers: TestServer[] = [];

async function serve(database: string | undefined, limit: typeof LIMIT & { ipv6PrefixBits?: number } = LIMIT): Promise<TestServer> {
  const engine = await testEngine({ ...(database ? { database } : {}) });
  engines.push(engine);
  const s = await serveEngine(engine, { authLimit: limit });
  servers.push(s);
  return s;
}

beforeAll(async () => {
  if (!POSTGRES_MISSING) pg = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close({ timeoutMs: 2_000 });
  for (const e of engines) await e.dispose();
  await pg?.stop();
});

const wrong = (s: TestServer, i: number) => ({ 'x-api-client-id': s.cred.clientId, 'x-api-key': `wmk_wrong_${i}` });

/** How many answers had each status. */
function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const status of statuses) out[status] = (out[status] ?? 0) + 1;
  return out;
}

/** One request as if from `address`, in-process (the edge takes the socket's address from here). */
function from(s: TestServer, address: string, headers: Record<string, string>) {
  return s.app.handle({
    method: 'GET',
    rawUrl: '/2.0/videos',
    path: '/2.0/videos',
    url: new URL('http://x/2.0/videos'),
    headers,
    body: async () => undefined,
    remoteAddress: address,
  });
}

const stores = () => [{ name: 'SQLite', database: async () => undefined }, ...(pg ? [{ name: 'PostgreSQL', database: () => pg!.createDatabase() }] : [])];

describe('the failed-credential limit holds under concurrency', () => {
  it('60 wrong keys at once: exactly 10 are checked (401), 50 are refused (429 with Retry-After), on each store', async () => {
    for (const store of stores()) {
      const s = await serve(await store.database());
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => call(s.url, 'GET', '/2.0/videos', { headers: wrong(s, i) })));
      expect(tally(answers.map((r) => r.status)), store.name).toEqual({ 401: 10, 429: 50 });
      for (const r of answers.filter((a) => a.status === 429)) {
        expect(r.json.code).toBe('RATE_LIMITED');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(50);
      }
      // The right key from the same address is refused too until the window ends: a right guess cannot be told apart.
      expect((await call(s.url, 'GET', '/2.0/videos', { headers: keyHeaders(s.cred) })).status).toBe(429);
    }
  }, 120_000);

  it('two instances on one PostgreSQL database share the count: 60 wrong keys spread over both give 10 answers 401', async () => {
    if (!pg) return;
    const database = await pg.createDatabase();
    const [a, b] = [await serve(database), await serve(database)];
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => call((i % 2 ? a : b).url, 'GET', '/2.0/videos', { headers: wrong(a, i) })));
    expect(tally(answers.map((r) => r.status))).toEqual({ 401: 10, 429: 50 });
  }, 120_000);

  it('an IPv6 client is counted by its /64: other addresses in it share the count, the next /64 does not', async () => {
    for (const store of stores()) {
      const s = await serve(await store.database());
      for (let i = 0; i < 10; i++) expect((await from(s, `2001:db8:1:2::${i + 1}`, wrong(s, i))).status).toBe(401);
      expect((await from(s, '2001:db8:1:2:ffff::9', wrong(s, 99))).status, store.name).toBe(429);
      expect((await from(s, '2001:db8:1:3::1', keyHeaders(s.cred))).status).toBe(200);
      // An IPv4 client reached over a dual-stack socket is counted as its IPv4 address, not as the mapped /64.
      for (let i = 0; i < 10; i++) expect((await from(s, '::ffff:198.51.100.1', wrong(s, i))).status).toBe(401);
      expect((await from(s, '198.51.100.1', wrong(s, 0))).status).toBe(429);
      expect((await from(s, '::ffff:198.51.100.2', keyHeaders(s.cred))).status).toBe(200);
    }
  }, 120_000);

  it('the IPv6 prefix is configurable: with /56 the next /64 shares the count', async () => {
    const s = await serve(undefined, { ...LIMIT, ipv6PrefixBits: 56 });
    for (let i = 0; i < 10; i++) expect((await from(s, `2001:db8:1:${i}::1`, wrong(s, i))).status).toBe(401);
    expect((await from(s, '2001:db8:1:ff::1', keyHeaders(s.cred))).status).toBe(429);
    expect((await from(s, '2001:db8:1:100::1', keyHeaders(s.cred))).status).toBe(200);
  });

  it('a client whose checks pass is never held back: 60 right keys and tokens at once are all 200, on each store', async () => {
    for (const store of stores()) {
      const s = await serve(await store.database());
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => call(s.url, 'GET', i % 2 ? '/2.0/videos' : '/1.0/videos', { headers: i % 2 ? s.v2 : s.v1 })),
      );
      expect(tally(answers.map((r) => r.status)), store.name).toEqual({ 200: 60 });
    }
  }, 120_000);
});
