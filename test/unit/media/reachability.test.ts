// A store reached over the network, watched: a call with no answer marks it down at once, probes with backoff (not a
// request each) notice it is back, and the change is heard once each way.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProbeMonitor } from '../../../src/media/reachability.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('ProbeMonitor', () => {
  it('marks the store down when a call gets no answer, probes with backoff until it answers, and is heard once each way', async () => {
    vi.useFakeTimers();
    let answers = false;
    const probes: number[] = [];
    const monitor = new ProbeMonitor({
      name: 'media',
      location: 's3://b/p/',
      probe: async () => {
        probes.push(Date.now());
        if (!answers) throw new Error('connect ECONNREFUSED 127.0.0.1:9000');
      },
      backoff: { firstMs: 100, maxMs: 400 },
      everyMs: 60_000,
    });
    const heard: boolean[] = [];
    monitor.subscribe((s) => heard.push(s.up));
    const start = Date.now();
    monitor.failed('get a.ts: socket hang up');
    expect(monitor.status()).toMatchObject({ up: false, reason: 'get a.ts: socket hang up' });
    await vi.advanceTimersByTimeAsync(100 + 200 + 400 + 400);
    // Backoff: 100, 200, then 400 at most.
    expect(probes.map((t) => t - start)).toEqual([100, 300, 700, 1_100]);
    expect(monitor.status().reason).toBe('connect ECONNREFUSED 127.0.0.1:9000');
    answers = true;
    await vi.advanceTimersByTimeAsync(400);
    expect(monitor.isUp).toBe(true);
    expect(heard).toEqual([false, true]);
    // Back up, the next probe is the heartbeat's, a minute later.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(probes).toHaveLength(5);
    monitor.close();
  });

  it('does not probe a store nobody watches while it answers', async () => {
    vi.useFakeTimers();
    const probe = vi.fn(async () => undefined);
    const monitor = new ProbeMonitor({ name: 'media', location: 's3://b/', probe, everyMs: 1_000 });
    monitor.answered();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probe).not.toHaveBeenCalled();
    monitor.close();
  });
});
