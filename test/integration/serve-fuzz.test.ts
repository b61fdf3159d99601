// A seeded, bounded fuzz run against a live `wmark serve`: thousands of mutated signed links (playlist,
// segment, mp4, player, status href) are never accepted and never a 5xx; traversal forms and malformed bodies and
// headers are never a 5xx and leak nothing; every JSON error is {message, code[, hint]} without paths or stacks.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat, REPO } from '../../harness/fixtures.js';
import { rng } from '../../harness/rng.js';
import { call, ingestOverHttp, serveEngine, type TestServer, waitFor } from '../../harness/serve-helpers.js';
import { expectNoLeak } from '../helpers/serve-in-tests.js';

const SEED = 1_300_013;
let engine: TestEngine;
let s: TestServer;
let links: Record<'playlist' | 'segment' | 'mp4' | 'player' | 'href', string>;
let secretText: string;

interface Raw {
  status: number;
  headers: string;
  body: string;
}

/** One request written byte for byte on a fresh socket (nothing normalises the target), read to the close. */
function rawSend(target: string, options: { method?: string; headers?: string[]; body?: string } = {}): Promise<Raw> {
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers: text.slice(0, cut), body: cut < 0 ? '' : text.slice(cut + 4) });
    });
    const body = options.body ?? '';
    const head = [`${options.method ?? 'GET'} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...(options.headers ?? [])];
    if (body) head.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
    socket.write(Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'latin1'));
  });
}

/** Runs `tasks` with a few in flight at once. */
async function pool<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i]!);
      }
    }),
  );
  return out;
}

/** Checks an error answer's body: JSON {message, code[, hint]} without paths or stacks (or the player's HTML refusal, or empty). */
function checkErrorBody(status: number, contentType: string, body: string, where: string): void {
  if (status < 400 || body === '') return;
  if (/text\/html/.test(contentType)) {
    expect(where, body).toMatch(/\/player\//);
    return;
  }
  expect(contentType, `${where}: ${body}`).toMatch(/^application\/json/);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  expect(
    Object.keys(parsed).filter((k) => !['message', 'code', 'hint'].includes(k)),
    where,
  ).toEqual([]);
  expect(typeof parsed.code, where).toBe('string');
  expect(typeof parsed.message === 'string' || Array.isArray(parsed.message), where).toBe(true);
  expectNoLeak(body);
  expect(body, where).not.toContain(engine.dataDir);
  expect(body, where).not.toContain(REPO);
}

const contentTypeOf = (headers: string) => /\r\ncontent-type:\s*([^\r]*)/i.exec(headers)?.[1] ?? '';

beforeAll(async () => {
  engine = await testEngine();
  // No brake on failed credentials here: the malformed-header run sends many on purpose.
  s = await serveEngine(engine, { authLimit: { failures: 1e9, windowMs: 1 } });
  await ingestOverHttp(s.url, s.v2, await flat('446688', 4), 'fuzz');
  const v2 = await call(s.url, 'POST', '/2.0/watermark', {
    headers: s.v2,
    body: { key: 'fuzz', settings: [{ content: 'fuzz' }], containers: ['m3u8', 'mp4'] },
  });
  const v1 = await call(s.url, 'POST', '/1.0/watermark', { headers: s.v1, body: { key: 'fuzz', settings: [{ content: 'fuzz one' }] } });
  await waitFor(
    async () => ((await Promise.all([v1, v2].map((r) => engine.store.getWatermark(r.json.id)))).every((w) => w?.status === 'READY') ? true : undefined),
    'watermarks READY',
  );
  const a = (await call(s.url, 'GET', v2.json.href)).json;
  const playlist = await call(s.url, 'GET', a.containers.m3u8);
  const segmentUri = playlist.text.split('\n').find((l) => l.startsWith('seg_'))!;
  links = {
    playlist: a.containers.m3u8,
    mp4: a.containers.mp4,
    segment: new URL(segmentUri, a.containers.m3u8).href,
    player: v1.json.player ?? v1.json.containers?.href,
    href: v1.json.href,
  };
  for (const [name, link] of Object.entries(links)) {
    if (!link) throw new Error(`setup: no ${name} link in ${JSON.stringify({ v1: v1.json, a })}`);
    const ok = await rawSend(link.slice(s.url.length));
    if (ok.status !== 200) throw new Error(`setup: the genuine ${name} link answered ${ok.status}: ${ok.body}`);
  }
  secretText = readFileSync(path.join(engine.dataDir, 'secret.key'), 'utf8').trim();
}, 120_000);

afterAll(async () => {
  await s?.close();
  await engine?.dispose();
});

// ---- signed-link mutations: every one changes what was signed, so none may be accepted.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const HEX = '0123456789abcdef';
type Mutation = (target: string, rnd: number[]) => string;

function splitTarget(target: string): { pathname: string; pairs: string[] } {
  const q = target.indexOf('?');
  return { pathname: target.slice(0, q), pairs: target.slice(q + 1).split('&') };
}
const join = (pathname: string, pairs: string[]) => `${pathname}?${pairs.join('&')}`;
const paramIndex = (pairs: string[], name: string) => pairs.findIndex((p) => p.startsWith(`${name}=`));
const pick = <T>(list: ArrayLike<T>, r: number): T => list[Math.floor(r * list.length) % list.length]!;

const MUTATIONS: Record<string, Mutation> = {
  signatureChar(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const i = paramIndex(pairs, 'signature');
    const sig = pairs[i]!.slice('signature='.length);
    const at = Math.floor(r[0]! * sig.length);
    const replacement = B64.replace(sig[at]!, '');
    pairs[i] = `signature=${sig.slice(0, at)}${pick(replacement, r[1]!)}${sig.slice(at + 1)}`;
    return join(pathname, pairs);
  },
  signatureLength(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const i = paramIndex(pairs, 'signature');
    const sig = pairs[i]!.slice('signature='.length);
    pairs[i] = `signature=${r[0]! < 0.5 ? sig.slice(0, Math.floor(r[1]! * sig.length)) : sig + pick(B64, r[1]!)}`;
    return join(pathname, pairs);
  },
  expirationShift(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const i = paramIndex(pairs, 'expiration');
    const exp = Number(pairs[i]!.slice('expiration='.length));
    const delta = Math.max(1, Math.floor(r[0]! * 10 ** Math.floor(r[1]! * 13)));
    pairs[i] = `expiration=${r[2]! < 0.5 ? exp + delta : Math.max(0, exp - delta)}`;
    return join(pathname, pairs);
  },
  expirationForm(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const i = paramIndex(pairs, 'expiration');
    const exp = pairs[i]!.slice('expiration='.length);
    const forms = [
      `0${exp}`,
      `${exp}.0`,
      `+${exp}`,
      `-${exp}`,
      `${exp}e0`,
      '',
      '9007199254740992',
      '9999999999999999',
      '99999999999999999',
      'NaN',
      'Infinity',
      `0x${Number(exp).toString(16)}`,
      ` ${exp}`,
      `${exp}%00`,
    ];
    pairs[i] = `expiration=${pick(forms, r[0]!)}`;
    return join(pathname, pairs);
  },
  dropOrDuplicate(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const name = r[0]! < 0.5 ? 'expiration' : 'signature';
    const i = paramIndex(pairs, name);
    if (r[1]! < 0.4) pairs.splice(i, 1);
    else pairs.push(r[1]! < 0.7 ? pairs[i]! : `${name}=${r[2]! < 0.5 ? '1' : 'AAAA'}`);
    return join(pathname, pairs);
  },
  idChar(t, r) {
    // A hex digit of the video or watermark id changed (lower case kept, so the route still matches).
    const { pathname, pairs } = splitTarget(t);
    const ids = [...pathname.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}/g)];
    if (!ids.length) return MUTATIONS.signatureChar!(t, r);
    const id = pick(ids, r[0]!);
    const positions = [...id[0]].map((c, k) => (c === '-' ? -1 : k)).filter((k) => k >= 0);
    const at = id.index! + pick(positions, r[1]!);
    const p = pathname.slice(0, at) + pick(HEX.replace(pathname[at]!, ''), r[2]!) + pathname.slice(at + 1);
    return join(p, pairs);
  },
  versionSwap(t) {
    const { pathname, pairs } = splitTarget(t);
    return join(pathname.includes('/2.0/') ? pathname.replace('/2.0/', '/1.0/') : pathname.replace('/1.0/', '/2.0/'), pairs);
  },
  foreignSignature(t, r) {
    // The signature and expiration of a link with another scope (media folder vs player vs status link).
    const own = splitTarget(t);
    const isMedia = /\/watermark\/[^?]*\/[^/?]+\.(m3u8|ts|mp4)$/.test(own.pathname);
    const others = Object.values(links)
      .map((l) => splitTarget(l.slice(s.url.length)))
      .filter((o) => o.pathname !== own.pathname && !(isMedia && /\.(m3u8|ts|mp4)$/.test(o.pathname)));
    const other = pick(others, r[0]!);
    const keep = own.pairs.filter((p) => !/^(expiration|signature)=/.test(p));
    return join(own.pathname, [...keep, ...other.pairs.filter((p) => /^(expiration|signature)=/.test(p))]);
  },
  playerParam(t, r) {
    const { pathname, pairs } = splitTarget(t);
    const i = pairs.findIndex((p) => /^(sourceUrl|href)=/.test(p));
    if (i < 0) return MUTATIONS.idChar!(t, r);
    const [name, value] = [pairs[i]!.split('=')[0]!, pairs[i]!.slice(pairs[i]!.indexOf('=') + 1)];
    // Each changes the decoded value (an empty extra pair, `&&`, would not: that form is the same link).
    const choices = [`${value}x`, value.slice(0, -1), `${value}%20`, `${value}%26x%3D1`, encodeURIComponent('http://evil.example/x.m3u8'), ''];
    pairs[i] = `${name}=${pick(choices, r[1]!)}`;
    if (r[2]! < 0.3) pairs.splice(i, 1);
    return join(pathname, pairs);
  },
};

describe('signed-link mutations', () => {
  it('>= 2,000 mutations of playlist, segment, mp4, player and href links: 0 accepted, 0 5xx', async () => {
    const kinds = Object.keys(links) as (keyof typeof links)[];
    const cases = fc.sample(
      // fast-check picks the link and the mutation; a uniform seeded PRNG picks inside it (fc.double leans to the edges).
      fc
        .record({ kind: fc.constantFrom(...kinds), mutation: fc.constantFrom(...Object.keys(MUTATIONS)), seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }) })
        .map((c) => {
          const r = rng(c.seed);
          return { ...c, rnd: [r.next(), r.next(), r.next()] };
        }),
      { seed: SEED, numRuns: 2_400 },
    );
    const targets = cases.map((c) => ({ ...c, target: MUTATIONS[c.mutation]!(links[c.kind].slice(s.url.length), c.rnd) }));
    const originals = new Set(Object.values(links).map((l) => l.slice(s.url.length)));
    const mutated = targets.filter((t) => !originals.has(t.target));
    expect(mutated.length).toBeGreaterThanOrEqual(2_000);
    const results = await pool(mutated, 16, async (t) => ({ ...t, reply: await rawSend(t.target) }));
    const accepted = results.filter((r) => r.reply.status < 400).map((r) => `${r.reply.status} ${r.kind}/${r.mutation}: ${r.target}`);
    const fivexx = results.filter((r) => r.reply.status >= 500 || r.reply.status === 0).map((r) => `${r.reply.status} ${r.kind}/${r.mutation}: ${r.target}`);
    expect(accepted).toEqual([]);
    expect(fivexx).toEqual([]);
    for (const r of results) checkErrorBody(r.reply.status, contentTypeOf(r.reply.headers), r.reply.body, r.target);
    // Every kind and every mutation was exercised.
    expect(new Set(mutated.map((t) => t.kind)).size).toBe(kinds.length);
    expect(new Set(mutated.map((t) => t.mutation)).size).toBe(Object.keys(MUTATIONS).length);
  }, 60_000);
});

describe('traversal forms', () => {
  it('>= 500 forms: 0 5xx, nothing from outside the served files', async () => {
    const m = links.playlist.slice(s.url.length);
    const [folder, query] = [m.slice(0, m.lastIndexOf('/') + 1), m.slice(m.indexOf('?'))];
    const prefixes = ['/', '/2.0/', '/2.0/watermark/', folder, '/player/assets/', '/player/2.0/', '/1.0/videos/', '/2.0/templates/', '/healthz/'];
    const climbs = [
      '..',
      '%2e%2e',
      '%2E%2e',
      '.%2e',
      '%2e.',
      '%252e%252e',
      '..%2f',
      '..%5c',
      '%c0%ae%c0%ae',
      '..;',
      '....',
      '..%00',
      '.',
      '%2e',
      '..%u2215',
      '\u2025',
      '%e2%80%a5',
    ];
    const seps = ['/', '%2f', '%2F', '\\', '%5c', '//', '/./', '%252f'];
    const files = ['secret.key', 'wmark.db', 'etc/passwd', 'media/videos', 'package.json', 'src/server/app.ts', 'video.m3u8', 'hls.min.js', ''];
    const forms = fc.sample(
      fc.record({
        prefix: fc.constantFrom(...prefixes),
        steps: fc.array(fc.record({ climb: fc.constantFrom(...climbs), sep: fc.constantFrom(...seps) }), { minLength: 1, maxLength: 7 }),
        file: fc.constantFrom(...files),
        signed: fc.boolean(),
      }),
      { seed: SEED + 1, numRuns: 700 },
    );
    const targets = [...new Set(forms.map((f) => `${f.prefix}${f.steps.map((x) => x.climb + x.sep).join('')}${f.file}${f.signed ? query : ''}`))];
    expect(targets.length).toBeGreaterThanOrEqual(500);
    const results = await pool(targets, 16, async (target) => ({ target, reply: await rawSend(target) }));
    expect(results.filter((r) => r.reply.status >= 500 || r.reply.status === 0).map((r) => `${r.reply.status} ${r.target}`)).toEqual([]);
    for (const r of results) {
      expect(r.reply.body, r.target).not.toContain(secretText);
      expect(r.reply.body, r.target).not.toContain('SQLite format 3');
      expect(r.reply.body, r.target).not.toContain('root:x:0:0');
      expect(r.reply.body, r.target).not.toContain('"devDependencies"');
      checkErrorBody(r.reply.status, contentTypeOf(r.reply.headers), r.reply.body, r.target);
    }
  }, 60_000);
});

describe('malformed bodies and headers', () => {
  it('>= 300 requests: 0 5xx, every error {message, code}', async () => {
    const ascii = (text: string) => text.replace(/[^\x20-\x7e]/g, '');
    const posts = [
      '/2.0/videos',
      '/1.0/videos',
      '/2.0/watermark',
      '/1.0/watermark',
      '/2.0/templates',
      '/1.0/templates',
      '/2.0/',
      '/1.0/authenticate/accessToken',
    ];
    const fixedBodies = [
      '[]',
      'null',
      '1e999',
      '"x"',
      '{"sourceUrl":{"__proto__":{"polluted":1}}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '['.repeat(5_000),
      `{"key":"fuzz","settings":[{"content":"${'x'.repeat(100_000)}"}]}`,
      `{"key":"fuzz","settings":${JSON.stringify(Array(500).fill({ content: 'x' }))}}`,
      '\u0000\u0001',
      '{"a":1',
      'x'.repeat(1_100_000),
    ];
    const bodyArb = fc.oneof(
      fc.constantFrom(...fixedBodies),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string(),
      fc
        .record({
          key: fc.oneof(fc.constant('fuzz'), fc.string()),
          settings: fc.array(fc.dictionary(fc.constantFrom('type', 'content', 'x', 'y', 'fontSize', 'fontColor', 'animation', 'align'), fc.jsonValue()), {
            maxLength: 3,
          }),
          containers: fc.array(fc.string(), { maxLength: 3 }),
          expiration: fc.oneof(fc.integer(), fc.string()),
        })
        .map((v) => JSON.stringify(v)),
      fc
        .record({
          sourceUrl: fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('file:///etc/passwd', '/etc/passwd', 'http://169.254.169.254/', 'ftp://x/y')),
          key: fc.string(),
          enableForensic: fc.jsonValue(),
        })
        .map((v) => JSON.stringify(v)),
    );
    const contentTypes = [
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      '',
      'application/vnd.api+json',
      'application/json; charset=utf-16',
      'multipart/form-data; boundary=x',
    ];
    const authArb = fc.oneof(
      fc.constant('valid'),
      fc.constant('valid'),
      fc.constantFrom(
        'Authorization: Bearer ',
        'Authorization: Bearer a.b.c',
        'Authorization: Basic dXNlcjpwYXNz',
        'Authorization: Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
        'x-api-key: ',
        'x-api-secret: only',
        'x-api-client-id: wmc_nobody\r\nx-api-key: wmk_wrong',
      ),
      fc.string().map((v) => `Authorization: ${ascii(v)}`),
      fc.string().map((v) => `x-api-key: ${ascii(v)}`),
    );
    const bodyCases = fc.sample(fc.record({ path: fc.constantFrom(...posts), body: bodyArb, type: fc.constantFrom(...contentTypes), auth: authArb }), {
      seed: SEED + 2,
      numRuns: 320,
    });
    const media = [links.playlist, links.mp4, links.segment].map((l) => l.slice(s.url.length));
    const rangeArb = fc.oneof(
      fc.constantFrom(
        'bytes=abc',
        'bytes=-0',
        'bytes=999999999999-',
        'bytes=5-1',
        'bytes=0-1,2-3',
        'bytes=',
        'items=0-1',
        'bytes=-99999999999999999999',
        'bytes=0-0',
      ),
      fc.string().map((v) => `bytes=${ascii(v)}`),
    );
    const headerCases = fc.sample(
      fc.record({
        target: fc.constantFrom(...media),
        range: rangeArb,
        extra: fc.constantFrom('If-None-Match: *', 'If-Range: garbage', 'Origin: null', 'Accept-Encoding: br;q=2', 'X-Forwarded-For: 10.0.0.1'),
      }),
      { seed: SEED + 3, numRuns: 100 },
    );
    const credentials = [`x-api-client-id: ${s.cred.clientId}`, `x-api-key: ${s.cred.apiKey}`];
    const results = [
      ...(await pool(bodyCases, 8, async (c) => {
        const headers = [
          ...(c.auth === 'valid'
            ? c.path.startsWith('/1.0/') && !c.path.includes('authenticate')
              ? [`Authorization: Bearer ${s.token}`]
              : credentials
            : [c.auth]),
          ...(c.type ? [`Content-Type: ${c.type}`] : []),
        ];
        return {
          what: `POST ${c.path} ${c.type} ${c.body.slice(0, 80)}`,
          reply: await rawSend(c.path, { method: 'POST', headers, body: Buffer.from(c.body, 'utf8').toString('latin1') }),
        };
      })),
      ...(await pool(headerCases, 8, async (c) => ({
        what: `GET ${c.target} Range: ${c.range}`,
        reply: await rawSend(c.target, { headers: [`Range: ${c.range}`, c.extra] }),
      }))),
    ];
    expect(results.length).toBeGreaterThanOrEqual(300);
    expect(
      results.filter((r) => r.reply.status >= 500 || r.reply.status === 0).map((r) => `${r.reply.status} ${r.what} ${r.reply.body.slice(0, 200)}`),
    ).toEqual([]);
    for (const r of results) checkErrorBody(r.reply.status, contentTypeOf(r.reply.headers), r.reply.body, r.what);
    // The run reached the validators, not only the front door.
    const codes = new Set(
      results.map((r) =>
        /^application\/json/.test(contentTypeOf(r.reply.headers)) && r.reply.status >= 400
          ? (JSON.parse(r.reply.body) as { code: string }).code
          : String(r.reply.status),
      ),
    );
    for (const code of ['VALIDATION_FAILED', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'BODY_TOO_LARGE', 'AUTH_INVALID'])
      expect(codes, [...codes].join(' ')).toContain(code);
  }, 60_000);
});
