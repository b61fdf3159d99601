// A dependency's state as its monitor moves it (one change heard per loss and per return), the catalogued 503 a
// request gets while it is down (code, status, hint, Retry-After), and an engine's dependencies taken together.
import { describe, expect, it } from 'vitest';
import { changeLine, type DependencyStatus, DependencyTracker, unavailableError } from '../../../src/core/dependency.js';
import { ERRORS } from '../../../src/core/errors.js';
import { Dependencies } from '../../../src/engine/dependencies.js';

describe('DependencyTracker', () => {
  it('is heard once when lost and once when back, however many failures come in between', () => {
    const t = new DependencyTracker('queue', 'redis://farm:6379');
    const heard: [DependencyStatus, number | undefined][] = [];
    t.subscribe((s, away) => heard.push([s, away]));
    t.back();
    t.lost(1_000, 'connect ECONNREFUSED');
    t.lost(1_500, 'connect ECONNREFUSED');
    t.lost(2_000, 'connect ETIMEDOUT');
    expect(t.status()).toEqual({ name: 'queue', location: 'redis://farm:6379', up: false, downSince: 1_000, reason: 'connect ETIMEDOUT' });
    t.back();
    t.back();
    expect(heard).toEqual([
      [{ name: 'queue', location: 'redis://farm:6379', up: false, downSince: 1_000, reason: 'connect ECONNREFUSED' }, undefined],
      [{ name: 'queue', location: 'redis://farm:6379', up: true }, 1_000],
    ]);
    expect(t.isUp).toBe(true);
  });

  it('stops telling a listener that unsubscribed', () => {
    const t = new DependencyTracker('media', 's3://b/p/');
    let calls = 0;
    const off = t.subscribe(() => calls++);
    t.lost(1, 'x');
    off();
    t.back();
    expect(calls).toBe(1);
  });
});

describe('unavailableError', () => {
  it('is the catalogued 503 of the dependency, with a hint and Retry-After, and no address in its message', () => {
    const queue = unavailableError(
      { name: 'queue', up: false, location: 'redis://:pw@farm:6379', downSince: 10_000, reason: 'connect ECONNREFUSED 10.0.0.5:6379' },
      22_400,
    );
    expect(queue).toMatchObject({ code: 'QUEUE_UNAVAILABLE', httpStatus: 503, exitCode: 5, kind: 'unavailable', headers: { 'Retry-After': '5' } });
    expect(queue.message).toBe("the render farm's queue does not answer (for 12 s); this request needs it: send it again shortly");
    expect(queue.hint).toMatch(/\/readyz/);
    const media = unavailableError({ name: 'media', up: false, location: 's3://bucket/farm/', downSince: 0 }, 0);
    expect(media).toMatchObject({ code: 'MEDIA_STORE_UNAVAILABLE', httpStatus: 503, headers: { 'Retry-After': '5' } });
    const database = unavailableError({ name: 'database', up: false, location: 'postgres://wmark:***@db.internal:5432/wmark', downSince: 0 }, 3_000);
    expect(database).toMatchObject({ code: 'DATABASE_UNAVAILABLE', httpStatus: 503, exitCode: 5, kind: 'unavailable', headers: { 'Retry-After': '5' } });
    expect(database.message).toBe('the state database does not answer (for 3 s); this request needs it: send it again shortly');
    expect(`${queue.message} ${media.message} ${database.message}`).not.toMatch(/10\.0\.0\.5|farm:6379|bucket|db\.internal/);
  });

  it('shares Retry-After with NOT_READY_YET through the catalogue', () => {
    expect(ERRORS.NOT_READY_YET.retryAfter).toBe(5);
    expect(ERRORS.QUEUE_UNAVAILABLE).toMatchObject({ http: 503, exit: 5, retryAfter: 5 });
    expect(ERRORS.MEDIA_STORE_UNAVAILABLE).toMatchObject({ http: 503, exit: 5, retryAfter: 5 });
    expect(ERRORS.DATABASE_UNAVAILABLE).toMatchObject({ http: 503, exit: 5, retryAfter: 5 });
  });
});

describe('changeLine', () => {
  it('says once what was lost and why, and once how long it was away', () => {
    const down: DependencyStatus = { name: 'media', up: false, location: 's3://b/p/', downSince: 1_000, reason: 'get x: connect ECONNREFUSED' };
    expect(changeLine(down, 1_000)).toBe('media store: lost s3://b/p/ (get x: connect ECONNREFUSED); retrying in the background, with backoff');
    expect(changeLine({ name: 'queue', up: true, location: 'redis://farm:6379' }, 13_400, 1_000)).toBe('queue: redis://farm:6379 answers again after 12 s');
    const db = 'postgres://wmark:***@db:5432/wmark';
    expect(changeLine({ name: 'database', up: false, location: db, downSince: 0, reason: 'connect ECONNREFUSED' }, 0)).toBe(
      `database: lost ${db} (connect ECONNREFUSED); retrying in the background, with backoff`,
    );
    expect(changeLine({ name: 'database', up: true, location: db }, 7_000, 0)).toBe(`database: ${db} answers again after 7 s`);
  });
});

describe('Dependencies', () => {
  const setup = () => {
    const queue = new DependencyTracker('queue', 'redis://farm:6379');
    const media = new DependencyTracker('media', 's3://b/p/');
    return { queue, media, deps: new Dependencies([queue, media], () => 5_000) };
  };

  it('requires every one to answer: the first one down is the 503', () => {
    const { queue, media, deps } = setup();
    expect(() => deps.require()).not.toThrow();
    media.lost(1_000, 'x');
    queue.lost(2_000, 'y');
    expect(deps.allUp).toBe(false);
    expect(() => deps.require()).toThrow(expect.objectContaining({ code: 'QUEUE_UNAVAILABLE' }));
    queue.back();
    expect(() => deps.require()).toThrow(expect.objectContaining({ code: 'MEDIA_STORE_UNAVAILABLE' }));
  });

  it('ends a wait with the 503 of one that goes down meanwhile, and at once when one is down already', async () => {
    const { queue, deps } = setup();
    const never = new Promise<string>(() => undefined);
    const waiting = deps.whileUp(never);
    queue.lost(4_000, 'connection closed');
    await expect(waiting).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE', message: expect.stringContaining('for 1 s') });
    await expect(deps.whileUp(Promise.resolve('late'))).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    queue.back();
    await expect(deps.whileUp(Promise.resolve('done'))).resolves.toBe('done');
    await expect(deps.whileUp(Promise.reject(new Error('its own failure')))).rejects.toThrow('its own failure');
  });

  it('with none (an engine all in this process) lets everything through', async () => {
    const deps = new Dependencies([]);
    expect(deps.allUp).toBe(true);
    expect(deps.statuses()).toEqual([]);
    await expect(deps.whileUp(Promise.resolve(1))).resolves.toBe(1);
  });
});
