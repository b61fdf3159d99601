// The HTTP client with a scripted fetch: retries, per-attempt timeouts, deadline (124), cancellation (130), JSON checks (5).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeRequest, expectJson, type FetchLike, HttpClient, networkCode } from '../../../src/remote/client.js';

type Step = Response | Error | 'hang';

function scripted(steps: Step[]): FetchLike & { calls: { url: string; init: RequestInit }[] } {
  const calls: { url: string; init: RequestInit }[] = [];
  const f = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    const step = steps.shift() ?? new Response('{}', { status: 200 });
    if (step === 'hang') {
      return new Promise<Response>((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    }
    if (step instanceof Error) throw step;
    return step;
  }) as FetchLike & { calls: typeof calls };
  f.calls = calls;
  return f;
}

const fetchFailed = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(`connect ${code}`), { code }) });
const fast = { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 2 };
const res = (status: number, body: unknown = {}, headers: Record<string, string> = {}) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers });

describe('HttpClient.send', () => {
  it('sends JSON with the right headers and returns the response', async () => {
    const f = scripted([res(201, { ok: true })]);
    const r = await new HttpClient({ fetch: f, userAgent: 'wmark/test' }).send({
      method: 'POST',
      url: 'http://h/2.0/watermark',
      body: { a: 1 },
      headers: { 'x-api-key': 'k' },
      deadline: Date.now() + 5000,
    });
    expect(r).toMatchObject({ status: 201, attempts: 1, request: 'POST http://h/2.0/watermark' });
    expect(f.calls[0]!.init).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'User-Agent': 'wmark/test', 'x-api-key': 'k' },
    });
  });

  it('retries 503 and a refused connection, reporting each retry', async () => {
    const notices: string[] = [];
    const f = scripted([res(503), fetchFailed('ECONNREFUSED'), res(200, { done: 1 })]);
    const r = await new HttpClient({ fetch: f, retry: fast, onRetry: (n) => notices.push(n.reason) }).send({
      method: 'GET',
      url: 'http://h/x',
      deadline: Date.now() + 5000,
    });
    expect(r).toMatchObject({ status: 200, attempts: 3 });
    expect(notices).toEqual(['HTTP 503', 'ECONNREFUSED']);
  });

  it("sends a POST again after wmark serve's 503 QUEUE_UNAVAILABLE or MEDIA_STORE_UNAVAILABLE, waiting as its Retry-After asks", async () => {
    const notices: { reason: string; delayMs: number }[] = [];
    const busy = (code: string) => res(503, { message: 'does not answer', code }, { 'Retry-After': '0.02' });
    const f = scripted([busy('QUEUE_UNAVAILABLE'), busy('MEDIA_STORE_UNAVAILABLE'), res(201, { id: 'w' })]);
    const r = await new HttpClient({ fetch: f, retry: fast, random: () => 0, onRetry: (n) => notices.push(n) }).send({
      method: 'POST',
      url: 'http://h/2.0/watermark',
      body: {},
      deadline: Date.now() + 5000,
    });
    expect(r).toMatchObject({ status: 201, attempts: 3 });
    expect(notices).toEqual(
      [
        { reason: 'HTTP 503', delayMs: 20 },
        { reason: 'HTTP 503', delayMs: 20 },
      ].map((n) => expect.objectContaining(n)),
    );
  });

  it('returns the last transient response when attempts run out, marked as given up', async () => {
    const f = scripted([res(502), res(502), res(502)]);
    const r = await new HttpClient({ fetch: f, retry: { ...fast, maxAttempts: 3 } }).send({ method: 'GET', url: 'http://h/x', deadline: Date.now() + 5000 });
    expect(r).toMatchObject({ status: 502, attempts: 3, gaveUp: expect.stringContaining('gave up after 3 attempts') });
  });

  it('does not retry a 4xx, nor a dropped POST that is not idempotent', async () => {
    const f = scripted([res(400, { message: 'no' })]);
    expect((await new HttpClient({ fetch: f, retry: fast }).send({ method: 'GET', url: 'http://h/x', deadline: Date.now() + 5000 })).status).toBe(400);
    expect(f.calls).toHaveLength(1);
    const g = scripted([fetchFailed('ECONNRESET')]);
    await expect(
      new HttpClient({ fetch: g, retry: fast }).send({ method: 'POST', url: 'http://h/t', body: {}, deadline: Date.now() + 5000 }),
    ).rejects.toMatchObject({ exitCode: 5, code: 'REMOTE_UNREACHABLE', message: expect.stringContaining('connection reset') });
    expect(g.calls).toHaveLength(1);
  });

  it('a hanging attempt is cut at the per-attempt timeout and retried; at the deadline it is exit 124', async () => {
    const f = scripted(['hang', res(200)]);
    const r = await new HttpClient({ fetch: f, retry: fast, attemptTimeoutMs: 50 }).send({ method: 'GET', url: 'http://h/x', deadline: Date.now() + 5000 });
    expect(r).toMatchObject({ status: 200, attempts: 2 });
    const g = scripted(['hang', 'hang', 'hang', 'hang']);
    const started = Date.now();
    const err = await new HttpClient({ fetch: g, retry: fast })
      .send({ method: 'GET', url: 'http://h/x?signature=secret', deadline: Date.now() + 200, timeoutLabel: '--timeout' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 124, code: 'TIMEOUT' });
    expect((err as Error).message).toMatch(/^timed out after 0\.\d s: no answer from GET http:\/\/h\/x$/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('Ctrl-C aborts a request in flight (exit 130)', async () => {
    const controller = new AbortController();
    const f = scripted(['hang']);
    const p = new HttpClient({ fetch: f, signal: controller.signal }).send({ method: 'GET', url: 'http://h/x', deadline: Date.now() + 5000 });
    setTimeout(() => controller.abort(), 20);
    await expect(p).rejects.toMatchObject({ exitCode: 130 });
  });
});

describe('expectJson', () => {
  const raw = (status: number, text: string) => ({
    status,
    text,
    headers: new Headers({ 'content-type': 'application/json' }),
    request: 'GET http://h/x',
    attempts: 1,
  });
  const schema = z.looseObject({ status: z.string() });

  it('keeps unknown fields', () => {
    expect(expectJson(raw(200, '{"status":"READY","extra":[1]}'), schema, 'thing')).toEqual({ status: 'READY', extra: [1] });
  });
  it('malformed JSON and a wrong shape are exit 5', () => {
    expect(() => expectJson(raw(200, '{"status":'), schema, 'thing')).toThrow(/not valid JSON: "\{\\"status\\":"/);
    expect(() => expectJson(raw(200, '{"status":3}'), schema, 'thing')).toThrow(/unexpected thing from GET http:\/\/h\/x: status:/);
    try {
      expectJson(raw(200, ''), schema, 'thing');
    } catch (e) {
      expect(e).toMatchObject({ exitCode: 5, code: 'BAD_RESPONSE' });
    }
  });
  it('a non-2xx becomes the service error', () => {
    expect(() => expectJson(raw(409, '{"message":"busy","code":"CONFLICT"}'), schema, 'thing')).toThrow('HTTP 409 Conflict (CONFLICT): busy');
  });
});

describe('helpers', () => {
  it('finds the code under "fetch failed"', () => {
    expect(networkCode(fetchFailed('ECONNREFUSED'))).toBe('ECONNREFUSED');
    expect(
      networkCode(Object.assign(new TypeError('fetch failed'), { cause: new AggregateError([Object.assign(new Error('x'), { code: 'EHOSTUNREACH' })]) })),
    ).toBe('EHOSTUNREACH');
    expect(networkCode(new Error('plain'))).toBeUndefined();
  });
  it('describes a request without its query (signatures stay out of messages)', () => {
    expect(describeRequest('GET', 'http://h:1/a/b?signature=s&expiration=1')).toBe('GET http://h:1/a/b');
  });
});
