// The cluster bench's arithmetic: percentiles, spreads, the ratio verdict, the split of a queued task's wait into the
// queue's own overhead and waiting for a busy worker, and the projection of a farm.
import { describe, expect, it } from 'vitest';
import { type FarmAssumptions, type JobCosts, mb, mbit, percentile, projectFarm, queueDelays, ratioLine, spread } from '../lib/cluster-figures.js';

describe('percentile', () => {
  it('interpolates between closest ranks and ignores what is not a number', () => {
    expect(percentile([1, 2, 3, 4, 5], 50)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 0)).toBe(1);
    expect(percentile([1, 2, 3, 4, 5], 100)).toBe(5);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([0, 10], 95)).toBeCloseTo(9.5);
    expect(percentile([7, NaN, Infinity], 95)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('spread and ratioLine', () => {
  it('prints min-max of the finite values', () => {
    expect(spread([1.08, 1.02, 1.05])).toBe('1.02-1.08');
    expect(spread([NaN])).toBe('-');
  });

  it('states the target and whether the ratio met it (an upper bound)', () => {
    expect(ratioLine(1.04, 1.1)).toEqual({ text: '1.04 (target <= 1.10) OK', met: true });
    expect(ratioLine(1.1, 1.1).met).toBe(true);
    expect(ratioLine(1.23, 1.1)).toEqual({ text: '1.23 (target <= 1.10) MISSED', met: false });
    expect(ratioLine(NaN, 1.1)).toEqual({ text: '- (target <= 1.10) MISSED', met: false });
  });
});

describe('queueDelays', () => {
  it('counts as overhead only the time a task waited while its worker was free', () => {
    // Worker w1 takes task 1 at once (5 ms after enqueue); task 2 was queued at 0 but w1 was busy until 1000, and it
    // started at 1003: 3 ms of overhead, 1003 ms of wait. Worker w2's first task waited 12 ms with w2 free.
    const tasks = [
      { enqueuedAt: 0, startedAt: 5, finishedAt: 1000, worker: 'w1' },
      { enqueuedAt: 0, startedAt: 1003, finishedAt: 2000, worker: 'w1' },
      { enqueuedAt: 0, startedAt: 12, finishedAt: 900, worker: 'w2' },
      // Enqueued after w2 became free: measured from its enqueue.
      { enqueuedAt: 950, startedAt: 951, finishedAt: 1500, worker: 'w2' },
    ];
    const d = queueDelays(tasks);
    expect(d.waitMs).toEqual([5, 1003, 12, 1]);
    expect(d.dispatchMs).toEqual([5, 3, 12, 1]);
    expect(d.busyMs).toEqual([995, 997, 888, 549]);
  });

  it('never reports a negative overhead (a worker that fetched its next task as it finished the last)', () => {
    const d = queueDelays([
      { enqueuedAt: 0, startedAt: 0, finishedAt: 100, worker: 'w' },
      { enqueuedAt: 0, startedAt: 99, finishedAt: 200, worker: 'w' },
    ]);
    expect(d.dispatchMs).toEqual([0, 0]);
  });
});

describe('projectFarm', () => {
  const assumptions: FarmAssumptions = { workersPerMachine: 2, redisOpsPerS: 100_000, serveEgressBytesPerS: 125e6, storeBytesPerS: 125e6 };
  const costs: JobCosts = { workerSecondsPerJob: 120, redisCommandsPerJob: 1_000, storeBytesPerJob: 300e6, egressBytesPerJob: 150e6 };

  it('scales jobs per hour linearly with machines, each keeping its workers busy', () => {
    const p = projectFarm(costs, assumptions, [1, 4, 16, 64]);
    expect(p.rows.map((r) => r.jobsPerHour)).toEqual([60, 240, 960, 3840]);
    const one = p.rows[0]!;
    // 60 jobs/h = 1/60 job/s.
    expect(one.redisOpsPerS).toBeCloseTo(1_000 / 60);
    expect(one.storeBytesPerS).toBeCloseTo(5e6);
    expect(one.storeLoad).toBeCloseTo(0.04);
    expect(one.egressBytesPerS).toBeCloseTo(2.5e6);
    expect(one.egressLoad).toBeCloseTo(0.02);
  });

  it('names the resource that reaches its capacity first, and at how many machines', () => {
    const p = projectFarm(costs, assumptions, [1]);
    // Store: 125 MB/s / 5 MB/s per machine = 25 machines; egress: 50; Redis: 100k / 16.7 = 6000.
    expect(p.limits['store throughput']).toBeCloseTo(25);
    expect(p.limits["serve's egress"]).toBeCloseTo(50);
    expect(p.limits['Redis operations/s']).toBeCloseTo(6_000);
    expect(p.first.resource).toBe('store throughput');
    expect(p.first.machines).toBeCloseTo(25);
  });

  it('a resource a job does not use never saturates', () => {
    const p = projectFarm({ ...costs, egressBytesPerJob: 0 }, assumptions, [1]);
    expect(p.limits["serve's egress"]).toBe(Infinity);
    expect(p.rows[0]!.egressLoad).toBe(0);
  });
});

describe('units', () => {
  it('prints MB (10^6 bytes) and Mbit/s', () => {
    expect(mb(12_345_678)).toBe('12.3');
    expect(mbit(125e6)).toBe('1000.0');
    expect(mb(NaN)).toBe('-');
  });
});
