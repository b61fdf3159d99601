// The cluster suite's figures: (b)/(a) per round and its median, a job's costs from the medians, and the rounds' rows.
import { describe, expect, it } from 'vitest';
import { clusterFigures, type FarmRun, type Run, roundRows } from '../cluster-report.js';

const run = (round: number, wallS: number, redisCommands: number): Run => ({
  kind: 'a',
  round,
  watermarkId: `a${round}`,
  answerS: 1,
  wallS,
  cpu: { serveS: 10, workersS: 0, redisS: 0, benchS: 0.1 },
  otherCores: 0.2,
  redisCommands,
  servedBytes: 1e6,
});
// Two tasks on one worker, back to back: the second could start when the first finished.
const farmRun = (round: number, wallS: number, storeRead: number): FarmRun => ({
  ...run(round, wallS, 300),
  kind: 'b',
  tasks: [
    { enqueuedAt: 0, startedAt: 5, finishedAt: 1005, worker: 'w1' },
    { enqueuedAt: 0, startedAt: 1015, finishedAt: 3015, worker: 'w1' },
  ],
  opening: { tasks: 2, seconds: 3 },
  failedTasks: 0,
  notRendered: 0,
  storeRead,
  storeWritten: 1e6,
});
const o = { workers: 2, quietWaitMs: 0, assumptions: { workersPerMachine: 2, redisOpsPerS: 100_000, serveEgressBytesPerS: 125e6, storeBytesPerS: 125e6 } };

describe('cluster figures', () => {
  const runs = [
    { a: run(1, 10, 20), b: farmRun(1, 11, 4e6) },
    { a: run(2, 10, 40), b: farmRun(2, 12, 6e6) },
    { a: run(3, 20, 60), b: farmRun(3, 20, 5e6) },
  ];

  it('takes (b)/(a) round by round, and a job costs the medians of its rounds', () => {
    const f = clusterFigures(o, runs);
    expect(f.ratios).toEqual([1.1, 1.2, 1]);
    expect(f.ratio).toBe(1.1);
    expect(f.verdictLine.met).toBe(true);
    expect(f.dispatch).toEqual([5, 10, 5, 10, 5, 10]);
    expect(f.busySPerJob).toBe(3);
    expect(f.costs).toEqual({ workerSecondsPerJob: 3, redisCommandsPerJob: 300, storeBytesPerJob: 6e6, egressBytesPerJob: 1e6 });
    expect(f.idleOpsPerS).toBe(3);
    expect(f.projection.rows.map((r) => r.machines)).toEqual([1, 4, 16, 64]);
  });

  it('lists the rounds in their alternating order, then the medians', () => {
    const rows = roundRows(runs, clusterFigures(o, runs));
    expect(rows.map((r) => r.slice(0, 2))).toEqual([
      ['1', 'a,b'],
      ['2', 'b,a'],
      ['3', 'a,b'],
      ['median', '-'],
    ]);
    expect(rows[3]!.slice(2, 5)).toEqual([10, 12, 1.1]);
    expect(rows[0]![11]).toBe(4);
  });
});
