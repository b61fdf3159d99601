// The one way to follow something that changes elsewhere (a job, an ingest, a remote watermark): an async iterator
// that reads the state on a timer, or sooner when an in-process event says it changed, and yields each new state
// until a goal is reached. The CLI spinner, --wait, the server's wait for "playable" and the demo all read one.
import { WmarkError } from '../core/errors.js';

export interface WatchLoopOptions<T> {
  /** Reads the current state. */
  read: () => Promise<T> | T;
  /** The state as the caller has just read or written it: taken as the first read, which is not made. */
  initial?: T;
  /** Reads again at least this often. */
  intervalMs: number;
  /** Wakes the watcher before the interval is up (e.g. an in-process event); returns its unsubscribe. */
  subscribe?: (wake: () => void) => () => void;
  /** States with the same key are yielded once (default: every read is yielded). */
  key?: (state: T) => string;
  /** The last state to yield: the iterator ends after it. */
  until: (state: T) => boolean;
  signal?: AbortSignal;
  /** Absolute time (ms) after which the iterator throws `timeout(last state)`. */
  deadline?: number;
  timeout?: (last: T | undefined) => Error;
  /** Called between reads, with the state just read (e.g. to take over a job whose worker died). */
  onIdle?: (state: T) => void | Promise<void>;
  now?: () => number;
}

export async function* watch<T>(options: WatchLoopOptions<T>): AsyncGenerator<T, void, undefined> {
  const now = options.now ?? Date.now;
  let wake: (() => void) | undefined;
  let woken = false;
  const unsubscribe = options.subscribe?.(() => {
    woken = true;
    wake?.();
  });
  let lastKey: string | undefined;
  let last: T | undefined;
  let reads = 0;
  const timedOut = () => options.timeout?.(last) ?? new WmarkError('TIMEOUT', 'timed out waiting');
  try {
    for (;;) {
      if (options.signal?.aborted) throw interrupted();
      // Past the deadline the watch says what it last saw, rather than letting the next read fail on its own timeout.
      if (reads++ > 0 && options.deadline !== undefined && now() >= options.deadline) throw timedOut();
      woken = false;
      let state: T;
      try {
        state = reads === 1 && options.initial !== undefined ? options.initial : await options.read();
      } catch (error) {
        // A read that ran out of time because the watch's own deadline came (a timer may wake a hair early, then the
        // read has no time left) says what the watch last saw, not "no answer": the service did answer before.
        if (last !== undefined && options.deadline !== undefined && now() >= options.deadline && error instanceof WmarkError && error.code === 'TIMEOUT')
          throw timedOut();
        throw error;
      }
      last = state;
      const key = options.key?.(state);
      if (key === undefined || key !== lastKey) {
        lastKey = key;
        yield state;
      }
      if (options.until(state)) return;
      await options.onIdle?.(state);
      const left = options.deadline === undefined ? Infinity : options.deadline - now();
      if (left <= 0) throw timedOut();
      if (woken) continue;
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          wake = undefined;
          resolve();
        };
        const onAbort = () => {
          done();
          reject(interrupted());
        };
        const timer = setTimeout(done, Math.min(options.intervalMs, left));
        wake = done;
        options.signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  } finally {
    unsubscribe?.();
  }
}

/** Runs a watch to its end and returns the last state it yielded. */
export async function lastOf<T>(states: AsyncIterable<T>, onState?: (state: T) => void): Promise<T> {
  let last: T | undefined;
  let seen = false;
  for await (const state of states) {
    last = state;
    seen = true;
    onState?.(state);
  }
  if (!seen) throw new WmarkError('UNEXPECTED', 'a watch ended without any state');
  return last as T;
}

/** Sleeps, or throws INTERRUPTED when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(interrupted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(interrupted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function interrupted(): WmarkError {
  return new WmarkError('INTERRUPTED', 'interrupted');
}
