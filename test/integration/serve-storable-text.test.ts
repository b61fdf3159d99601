// Text a database cannot hold (NUL, lone surrogates, bytes that are not UTF-8 such as an overlong NUL) sent to a real
// `wmark serve` over loopback, on SQLite and on PostgreSQL side by side: each is a 400 TEXT_NOT_STORABLE naming the
// query parameter, header or body field, never a 500; and every route, fed these in its query and body, answers both
// stores alike with no 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { call, messagesOf, rawRequest, serveEngine, type TestServer } from '../../harness/serve-helpers.js';
import { expectError } from '../helpers/serve-in-tests.js';

interface Served {
  name: string;
  engine: TestEngine;
  s: TestServer;
}

const stores: Served[] = [];
let pg: TestPostgres | undefined;

beforeAll(async () => {
  const noBrake = { authLimit: { failures: 1e9, windowMs: 1 } };
  const sqlite = await testEngine();
  stores.push({ name: 'SQLite', engine: sqlite, s: await serveEngine(sqlite, noBrake) });
  if (!POSTGRES_MISSING) {
    pg = await startPostgres();
    const postgres = await testEngine({ database: await pg.createDatabase() });
    stores.push({ name: 'PostgreSQL', engine: postgres, s: await serveEngine(postgres, noBrake) });
  }
}, 120_000);

afterAll(async () => {
  for (const { s, engine } of stores) {
    await s.close({ timeoutMs: 2_000 });
    await engine.dispose();
  }
  await pg?.stop();
});

/** Escaped for a query: NUL, NUL inside a key, an overlong NUL, an encoded surrogate, an overlong slash, a stray byte. */
const BAD_QUERY = ['%00', 'a%00b', '%C0%80', '%ED%A0%80', '%E0%80%AF', 'a%FFb'];
/** As JSON strings: NUL, a lone high and a lone low surrogate. */
const BAD_STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udc00'];
/** A JSON body whose bytes are not UTF-8: an overlong NUL, then a lone continuation byte. */
const BAD_BYTES = [
  Buffer.from([...Buffer.from('{"key":"a'), 0xc0, 0x80, ...Buffer.from('b"}')]),
  Buffer.from([...Buffer.from('{"name":"'), 0x80, ...Buffer.from('"}')]),
];

describe('text a database cannot hold is refused at the edge, on every store', () => {
  it('answers 400 TEXT_NOT_STORABLE naming the query parameter, on every API version', async () => {
    for (const { name, s } of stores) {
      for (const [target, headers] of [
        ['/2.0/videos?key=%00', s.v2],
        ['/1.0/videos?key=a%00b', s.v1],
        ['/0.1/videos?key=%00', s.v1],
        ['/2.0/videos?key=%C0%80', s.v2],
        ['/2.0/templates?limit=1&page=%ED%A0%80', s.v2],
      ] as const) {
        const r = await call(s.url, 'GET', target, { headers });
        expectError(r, 400, 'TEXT_NOT_STORABLE');
        expect(messagesOf(r).join(' '), `${name} ${target}`).toMatch(/^query parameter "(key|page)": /);
      }
    }
  });

  it('answers 400 naming the body field for a video key, a watermark key, a text and a template name', async () => {
    for (const { name, s } of stores) {
      const cases: Array<[string, unknown, RegExp]> = [
        ['/2.0/videos', { sourceUrl: 'https://example.com/a.mp4', key: 'a\u0000b' }, /^key: contains a NUL/],
        ['/2.0/watermark', { key: 'a\u0000b', settings: [{ content: 'x' }] }, /^key: contains a NUL/],
        ['/2.0/watermark', { key: 'k', settings: [{ content: 'hi \ud800' }] }, /^settings\[0\]\.content: contains an unpaired/],
        ['/2.0/templates', { name: 'a\u0000b', settings: [{ content: 'x' }] }, /^name: contains a NUL/],
      ];
      for (const [target, body, message] of cases) {
        const r = await call(s.url, 'POST', target, { headers: s.v2, body });
        expectError(r, 400, 'TEXT_NOT_STORABLE');
        expect(messagesOf(r).join(' '), `${name} ${target}`).toMatch(message);
      }
      const overlong = await call(s.url, 'POST', '/2.0/videos', { headers: s.v2, raw: BAD_BYTES[0], contentType: 'application/json' });
      expectError(overlong, 400, 'TEXT_NOT_STORABLE');
      expect(messagesOf(overlong).join(' ')).toBe('body: is not valid UTF-8');
    }
  });

  it('answers every route alike on both stores, never a 5xx, when each place it reads text holds such text', async () => {
    const answers = await Promise.all(
      stores.map(async ({ s }) => {
        const seen: string[] = [];
        for (const route of s.app.routes()) {
          const path = route.path.replace(/:[a-zA-Z]+/g, 'x');
          const headers = route.path.startsWith('/1.0/') ? s.v1 : s.v2;
          const bodies = !['GET', 'HEAD'].includes(route.method);
          const sends: Array<{ target: string; body?: unknown; raw?: Buffer }> = [
            ...BAD_QUERY.map((bad) => ({ target: `${path}?key=${bad}&name=${bad}&limit=1` })),
            ...(!bodies ? [] : BAD_STRINGS).map((bad) => ({
              target: path,
              body: { key: bad, sourceUrl: bad, name: bad, videoId: bad, settings: [{ content: bad }] },
            })),
            ...(!bodies ? [] : BAD_BYTES).map((raw) => ({ target: path, raw })),
          ];
          for (const send of sends) {
            const r = await call(s.url, route.method, send.target, {
              headers,
              ...(send.body !== undefined ? { body: send.body } : {}),
              ...(send.raw ? { raw: send.raw, contentType: 'application/json' } : {}),
            });
            seen.push(`${route.method} ${send.target} ${send.raw ? 'raw' : JSON.stringify(send.body ?? null)} -> ${r.status}`);
          }
        }
        return seen;
      }),
    );
    for (const seen of answers) expect(seen.filter((line) => / -> 5\d\d$/.test(line))).toEqual([]);
    if (answers.length === 2) expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]!.length).toBeGreaterThan(100);
  }, 120_000);

  it('refuses a header value that holds NUL in-process (the HTTP parser refuses it on a socket), and a raw socket gets no 5xx', async () => {
    for (const { s } of stores) {
      const r = await call(s.app, 'GET', '/2.0/videos', { headers: { ...s.v2, 'x-api-key': 'a\u0000b' } });
      expectError(r, 400, 'TEXT_NOT_STORABLE');
      expect(messagesOf(r).join(' ')).toBe('header x-api-key: contains a NUL character');
      const raw = await rawRequest(s.url, '/2.0/videos?key=%00', { headers: { ...s.v2 } });
      expect(raw.status).toBe(400);
    }
  });
});
