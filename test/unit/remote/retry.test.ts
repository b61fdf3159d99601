// The retry policy: which failures are transient, backoff with jitter, Retry-After, attempts and the deadline.
import { describe, expect, it } from 'vitest';
import { type AttemptOutcome, backoffDelay, DEFAULT_RETRY, decideRetry, isTransientStatus, parseRetryAfter } from '../../../src/remote/retry.js';

const NOW = Date.UTC(2030, 0, 1);
const decide = (outcome: AttemptOutcome, over: Partial<Parameters<typeof decideRetry>[0]> = {}) =>
  decideRetry({ outcome, attempt: 1, idempotent: true, remainingMs: 60_000, nowMs: NOW, random: 0.5, ...over });

describe('isTransientStatus', () => {
  it('is true for 429, 502, 503, 504 only', () => {
    expect([429, 502, 503, 504].every(isTransientStatus)).toBe(true);
    expect([200, 400, 401, 403, 404, 409, 410, 422, 500, 501].some(isTransientStatus)).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
    expect(parseRetryAfter(new Date(NOW + 7000).toUTCString(), NOW)).toBe(7000);
    expect(parseRetryAfter(new Date(NOW - 7000).toUTCString(), NOW)).toBe(0);
  });
  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('-3', NOW)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles per attempt, capped, with half of each step random', () => {
    const p = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, 0, p)).toBe(50);
    expect(backoffDelay(1, 0.999999, p)).toBe(100);
    expect(backoffDelay(2, 0, p)).toBe(100);
    expect(backoffDelay(3, 0, p)).toBe(200);
    expect(backoffDelay(10, 0, p)).toBe(500);
    expect(backoffDelay(10, 0.999999, p)).toBe(1000);
  });
  it('spreads retries: different random draws give different delays within the step', () => {
    const delays = [0, 0.25, 0.5, 0.75].map((r) => backoffDelay(3, r));
    expect(new Set(delays).size).toBe(4);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(1000);
    for (const d of delays) expect(d).toBeLessThanOrEqual(2000);
  });
});

describe('decideRetry', () => {
  it('retries gateway and overload statuses on idempotent requests', () => {
    for (const status of [502, 503, 504, 429]) expect(decide({ kind: 'response', status })).toMatchObject({ retry: true });
  });

  it('never retries other 4xx or a 500', () => {
    for (const status of [400, 401, 403, 404, 409, 410, 422, 500]) expect(decide({ kind: 'response', status })).toMatchObject({ retry: false });
  });

  it('retries a non-idempotent request only when the service says it did not process it (429, 503) or it was never sent', () => {
    const once = { idempotent: false };
    expect(decide({ kind: 'response', status: 503 }, once).retry).toBe(true);
    expect(decide({ kind: 'response', status: 429 }, once).retry).toBe(true);
    expect(decide({ kind: 'response', status: 502 }, once).retry).toBe(false);
    expect(decide({ kind: 'response', status: 504 }, once).retry).toBe(false);
    expect(decide({ kind: 'network', code: 'ECONNREFUSED' }, once).retry).toBe(true);
    expect(decide({ kind: 'network', code: 'ECONNRESET' }, once).retry).toBe(false);
    expect(decide({ kind: 'timeout' }, once).retry).toBe(false);
  });

  it('retries dropped connections and timeouts on idempotent requests, but not failures without a code', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']) expect(decide({ kind: 'network', code }).retry).toBe(true);
    expect(decide({ kind: 'timeout' }).retry).toBe(true);
    expect(decide({ kind: 'network' }).retry).toBe(false);
    expect(decide({ kind: 'network', code: 'ERR_TLS_CERT_ALTNAME_INVALID' }).retry).toBe(false);
  });

  it('uses Retry-After instead of its own backoff, with a little jitter', () => {
    const d = decide({ kind: 'response', status: 429, retryAfter: '2' }, { random: 0 });
    expect(d).toEqual({ retry: true, delayMs: 2000, reason: 'HTTP 429' });
    const j = decide({ kind: 'response', status: 429, retryAfter: '2' }, { random: 0.99 });
    expect(j.retry && j.delayMs).toBeGreaterThan(2000);
    expect(j.retry && j.delayMs).toBeLessThanOrEqual(2250);
    const date = decide({ kind: 'response', status: 503, retryAfter: new Date(NOW + 4000).toUTCString() }, { random: 0 });
    expect(date).toMatchObject({ retry: true, delayMs: 4000 });
  });

  it('does not wait past the deadline', () => {
    expect(decide({ kind: 'response', status: 429, retryAfter: '120' }, { remainingMs: 5000 })).toMatchObject({
      retry: false,
      reason: expect.stringContaining('no time left'),
    });
    expect(decide({ kind: 'response', status: 503 }, { remainingMs: 10 })).toMatchObject({ retry: false });
  });

  it('stops after maxAttempts, unless the policy is bounded by time only', () => {
    expect(decide({ kind: 'response', status: 503 }, { attempt: DEFAULT_RETRY.maxAttempts })).toMatchObject({
      retry: false,
      reason: expect.stringContaining('gave up after 5 attempts'),
    });
    expect(decide({ kind: 'response', status: 503 }, { attempt: 50, policy: { ...DEFAULT_RETRY, maxAttempts: Infinity } }).retry).toBe(true);
  });
});
