// The one watch loop: what it yields, when it reads, and how it ends (goal, deadline, abort).
import { describe, expect, it } from 'vitest';
import { WmarkError } from '../../../src/core/errors.js';
import { lastOf, watch } from '../../../src/service/watch.js';

/** A state source that returns the scripted states in order, then repeats the last; counts reads. */
function script<T>(states: T[]) {
  let i = 0;
  const source = {
    reads: 0,
    read: () => {
      source.reads++;
      return states[Math.min(i++, states.length - 1)]!;
    },
  };
  return source;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const s of it) out.push(s);
  return out;
}

describe('watch', () => {
  it('yields each new state once and ends with the goal state', async () => {
    const src = script(['PENDING', 'PENDING', 'RENDERING', 'RENDERING', 'READY', 'never read']);
    const seen = await collect(watch({ read: src.read, intervalMs: 1, key: (s) => s, until: (s) => s === 'READY' }));
    expect(seen).toEqual(['PENDING', 'RENDERING', 'READY']);
    expect(src.reads).toBe(5);
  });

  it('starts from a state the caller already has without reading it, and reads from the next turn on', async () => {
    const src = script(['RENDERING', 'READY']);
    const seen = await collect(watch({ read: src.read, initial: 'PENDING', intervalMs: 1, key: (s) => s, until: (s) => s === 'READY' }));
    expect(seen).toEqual(['PENDING', 'RENDERING', 'READY']);
    expect(src.reads).toBe(2);
    // A known state that is already the goal ends the watch with no read at all.
    const done = script(['never read']);
    expect(await collect(watch({ read: done.read, initial: 'READY', intervalMs: 1, until: (s) => s === 'READY' }))).toEqual(['READY']);
    expect(done.reads).toBe(0);
  });

  it('without a key, yields every read', async () => {
    const src = script([1, 1, 2]);
    expect(await collect(watch({ read: src.read, intervalMs: 1, until: (n) => n === 2 }))).toEqual([1, 1, 2]);
  });

  it('reads again as soon as an event wakes it, not after the interval', async () => {
    const listeners = new Set<() => void>();
    const src = script(['a', 'b']);
    const started = Date.now();
    const states = watch({
      read: src.read,
      intervalMs: 60_000,
      until: (s) => s === 'b',
      subscribe: (wake) => {
        listeners.add(wake);
        return () => listeners.delete(wake);
      },
    });
    const first = await states.next();
    expect(first.value).toBe('a');
    setTimeout(() => {
      for (const l of listeners) l();
    }, 20);
    expect((await states.next()).value).toBe('b');
    expect((await states.next()).done).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Unsubscribed once the watch ended.
    expect(listeners.size).toBe(0);
  });

  it('an event during a read is not lost: the next read follows without waiting', async () => {
    let wake: () => void = () => {};
    let reads = 0;
    const states = watch({
      read: () => {
        reads++;
        if (reads === 1) wake();
        return reads;
      },
      intervalMs: 60_000,
      until: (n) => n === 2,
      subscribe: (w) => {
        wake = w;
        return () => {};
      },
    });
    expect(await collect(states)).toEqual([1, 2]);
  });

  it('at the deadline throws the timeout built from the last state, and reads no more', async () => {
    const src = script(['PENDING']);
    const states = watch({
      read: src.read,
      intervalMs: 30,
      until: () => false,
      deadline: Date.now() + 100,
      timeout: (last) => new WmarkError('TIMEOUT', `still ${last}`),
    });
    const error = await collect(states).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WmarkError);
    expect((error as WmarkError).message).toBe('still PENDING');
    const readsAtTimeout = src.reads;
    expect(readsAtTimeout).toBeGreaterThanOrEqual(2);
    expect(readsAtTimeout).toBeLessThanOrEqual(6);
  });

  it('a read that runs out of time at the deadline reports the last state, not the timeout of the read', async () => {
    // The clock is injected: the timer wakes a hair before the deadline, the read then finds no time left.
    let clock = 0;
    let reads = 0;
    const states = watch({
      read: () => {
        reads++;
        if (reads === 1) return 'PENDING';
        clock = 1_000;
        throw new WmarkError('TIMEOUT', 'no answer from GET /w');
      },
      intervalMs: 1,
      until: () => false,
      now: () => clock,
      deadline: 1_000,
      timeout: (last) => new WmarkError('TIMEOUT', `still ${last}`),
    });
    const error = await collect(states).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'still PENDING' });
    // Before the deadline, or when nothing was read yet, the read's own error stands.
    const first = watch({ read: () => Promise.reject(new WmarkError('TIMEOUT', 'no answer')), intervalMs: 1, until: () => false, now: () => 5, deadline: 1 });
    expect(await collect(first).catch((e: unknown) => e)).toMatchObject({ message: 'no answer' });
    let n = 0;
    const early = watch({
      read: () => (n++ ? Promise.reject(new WmarkError('TIMEOUT', 'no answer')) : 'PENDING'),
      intervalMs: 1,
      until: () => false,
      now: () => 0,
      deadline: 1_000,
    });
    expect(await collect(early).catch((e: unknown) => e)).toMatchObject({ message: 'no answer' });
  });

  it('an abort ends the wait at once with INTERRUPTED', async () => {
    const controller = new AbortController();
    const states = watch({ read: () => 'PENDING', intervalMs: 60_000, until: () => false, signal: controller.signal });
    expect((await states.next()).value).toBe('PENDING');
    setTimeout(() => controller.abort(), 10);
    const error = await states.next().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INTERRUPTED' });
  });

  it('calls onIdle with each state between reads (where a stale job is taken over)', async () => {
    const idle: number[] = [];
    const src = script([1, 2, 3]);
    await collect(watch({ read: src.read, intervalMs: 1, until: (n) => n === 3, onIdle: (n) => void idle.push(n) }));
    expect(idle).toEqual([1, 2]);
  });
});

describe('lastOf', () => {
  it('returns the last state and shows each one', async () => {
    const shown: string[] = [];
    const src = script(['a', 'b', 'c']);
    expect(await lastOf(watch({ read: src.read, intervalMs: 1, until: (s) => s === 'c' }), (s) => shown.push(s))).toBe('c');
    expect(shown).toEqual(['a', 'b', 'c']);
  });

  it('refuses a watch that ended without a state', async () => {
    async function* nothing(): AsyncGenerator<string> {}
    await expect(lastOf(nothing())).rejects.toMatchObject({ code: 'UNEXPECTED' });
  });
});
