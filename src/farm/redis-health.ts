// Whether the farm's Redis answers, as one connection sees it: ioredis says when the connection closes and when it is
// ready again (its reconnects back off by themselves), and a PING now and then catches a Redis that stops answering
// without closing the socket. Nothing here logs: whoever watches hears one change when it is lost, one when it is back.
import type { Redis } from 'ioredis';
import { type Dependency, type DependencyListener, type DependencyStatus, DependencyTracker } from '../core/dependency.js';

/**
 * A PING every second while connected; no answer within the timeout counts as lost, so a Redis that stops answering
 * is marked down within 3 s of its last answer (a request's own command meets its deadline meanwhile).
 */
const PING_EVERY_MS = 1_000;
const PING_TIMEOUT_MS = 2_000;

export interface RedisHealth extends Dependency {
  readonly isUp: boolean;
  /** Stops the PINGs (the client is closed by its owner). */
  close(): void;
}

/** `now`: the clock of when Redis stopped answering (its owner's; else the wall clock). */
export function watchRedis(client: Redis, location: string, options: { pingEveryMs?: number; pingTimeoutMs?: number; now?: () => number } = {}): RedisHealth {
  const tracker = new DependencyTracker('queue', location);
  const now = options.now ?? Date.now;
  let lastError: string | undefined;
  client.on('error', (error: Error) => {
    lastError = error.message;
    if (!tracker.isUp) tracker.lost(now(), lastError);
  });
  client.on('close', () => tracker.lost(now(), lastError ?? 'the connection closed'));
  client.on('ready', () => {
    lastError = undefined;
    tracker.back();
  });

  let pinging = false;
  const timeoutMs = options.pingTimeoutMs ?? PING_TIMEOUT_MS;
  const heartbeat = setInterval(() => {
    if (pinging || client.status !== 'ready') return;
    pinging = true;
    const timer = setTimeout(() => tracker.lost(now(), `no answer to PING within ${timeoutMs} ms`), timeoutMs);
    client
      .ping()
      .then(() => tracker.back())
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        pinging = false;
      });
  }, options.pingEveryMs ?? PING_EVERY_MS);
  heartbeat.unref();

  return {
    name: tracker.name,
    get isUp() {
      return tracker.isUp;
    },
    status: (): DependencyStatus => tracker.status(),
    subscribe: (listener: DependencyListener) => tracker.subscribe(listener),
    close: () => clearInterval(heartbeat),
  };
}
