// How the farm's Redis is judged from one connection's events: lost once when it closes (however many reconnects fail
// after), back once when it is ready again, and lost when it keeps the socket open but stops answering PING.
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DependencyStatus } from '../../../src/core/dependency.js';
import { watchRedis } from '../../../src/farm/redis-health.js';

/** Enough of an ioredis client: its events, its status, and a PING that answers as told. */
function fakeClient(ping: () => Promise<string>) {
  const client = Object.assign(new EventEmitter(), { status: 'ready', ping });
  return client as unknown as Redis & EventEmitter & { status: string };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('watchRedis', () => {
  it('is heard once when the connection is lost and once when it is back, not once per failed reconnect', () => {
    const client = fakeClient(async () => 'PONG');
    const health = watchRedis(client, 'redis://farm:6379', { now: () => 1_000_000 });
    const heard: DependencyStatus[] = [];
    health.subscribe((s) => heard.push(s));
    client.emit('error', new Error('connect ECONNREFUSED 10.0.0.7:6379'));
    client.emit('close');
    for (let i = 0; i < 20; i++) {
      client.emit('error', new Error('connect ECONNREFUSED 10.0.0.7:6379'));
      client.emit('close');
    }
    expect(health.isUp).toBe(false);
    // Down since the first loss, by the clock it was given.
    expect(health.status()).toMatchObject({
      name: 'queue',
      up: false,
      location: 'redis://farm:6379',
      reason: 'connect ECONNREFUSED 10.0.0.7:6379',
      downSince: 1_000_000,
    });
    client.emit('ready');
    expect(heard.map((s) => s.up)).toEqual([false, true]);
    health.close();
  });

  it('counts a Redis that keeps the socket open but does not answer PING as lost, and back once it answers', async () => {
    vi.useFakeTimers();
    let answer: () => void = () => undefined;
    const client = fakeClient(() => new Promise<string>((resolve) => (answer = () => resolve('PONG'))));
    const health = watchRedis(client, 'redis://farm:6379', { pingEveryMs: 1_000, pingTimeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(health.isUp).toBe(true);
    await vi.advanceTimersByTimeAsync(500);
    expect(health.status()).toMatchObject({ up: false, reason: 'no answer to PING within 500 ms' });
    answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(health.isUp).toBe(true);
    health.close();
  });
});
