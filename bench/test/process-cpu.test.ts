// The control-plane bench's CPU accounting: parsing /proc/<pid>/stat, a process tree's ticks across two snapshots
// (processes that end or start between them included), and the projection of instances one database carries.
import { describe, expect, it } from 'vitest';
import {
  clockTick,
  cpuSeconds,
  descendants,
  type ProcStat,
  parseStat,
  processCpuSeconds,
  projectByCpu,
  projectByHitShare,
  readProcessTable,
  treeTicks,
} from '../lib/process-cpu.js';

const stat = (pid: number, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0): ProcStat => ({
  pid,
  name: `p${pid}`,
  ppid,
  utime,
  stime,
  cutime,
  cstime,
});
const tableOf = (...rows: ProcStat[]) => new Map(rows.map((r) => [r.pid, r]));

describe('parseStat', () => {
  it('reads ppid and the four CPU fields after a comm holding spaces and parentheses', () => {
    const line = '4242 (postgres: wmark t1 (x) idle) S 4200 4200 4200 0 -1 4194560 1200 0 0 0 37 11 5 3 20 0 1 0 123 0 0';
    expect(parseStat(line)).toEqual({ pid: 4242, name: 'postgres: wmark t1 (x) idle', ppid: 4200, utime: 37, stime: 11, cutime: 5, cstime: 3 });
  });

  it('refuses text that is not a stat line, naming it', () => {
    expect(() => parseStat('no parentheses here')).toThrow(/not a \/proc\/<pid>\/stat line: no parentheses here/);
    expect(() => parseStat('1 (x) S 0 0')).toThrow(/field 14 is not a number/);
  });

  it('parses this process as the kernel shows it', () => {
    const me = readProcessTable().get(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me!.utime + me!.stime).toBeGreaterThanOrEqual(0);
  });
});

describe('a tree across two snapshots', () => {
  it('walks the descendants of a root only', () => {
    const t = tableOf(stat(1, 0, 9, 9), stat(10, 1, 1, 1), stat(11, 10, 1, 1), stat(12, 10, 1, 1), stat(20, 1, 5, 5));
    expect(
      descendants(t, 10)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([10, 11, 12]);
    expect(descendants(t, 99)).toEqual([]);
    expect(treeTicks(t, 10)).toBe(6);
  });

  it('counts a backend that ended between the snapshots once, through its parent reaping it', () => {
    // Postmaster 10 with backends 11 (ends: its 30 + 8 ticks move to the postmaster's cutime/cstime) and 12 (lives on).
    const before = tableOf(stat(10, 1, 100, 50), stat(11, 10, 20, 5), stat(12, 10, 40, 10));
    const after = tableOf(stat(10, 1, 102, 51, 30, 8), stat(12, 10, 47, 12));
    // postmaster +3, backend 11 +13 (from 25 to 38), backend 12 +9
    expect(treeTicks(after, 10) - treeTicks(before, 10)).toBe(25);
    expect(cpuSeconds(before, after, 10, 100)).toBeCloseTo(0.25);
  });

  it('counts a process that started and ended between the snapshots, and one that started and lives', () => {
    const before = tableOf(stat(10, 1, 100, 50, 4, 1));
    const after = tableOf(stat(10, 1, 100, 50, 4 + 6, 1 + 2), stat(13, 10, 7, 1));
    expect(cpuSeconds(before, after, 10, 100)).toBeCloseTo(0.16);
  });

  it('leaves out processes outside the tree (another server, the load generator)', () => {
    const before = tableOf(stat(10, 1, 100, 50), stat(30, 1, 0, 0));
    const after = tableOf(stat(10, 1, 110, 50), stat(30, 1, 500, 100));
    expect(cpuSeconds(before, after, 10, 100)).toBeCloseTo(0.1);
  });
});

describe('projectByCpu', () => {
  it('pools windows by their requests and divides the instance CPU per request by the database CPU per request', () => {
    const p = projectByCpu(
      [
        { instanceS: 1.2, databaseS: 0.05, requests: 1000 },
        { instanceS: 0.6, databaseS: 0.04, requests: 500 },
      ],
      1,
      0.01,
    );
    expect(p.instanceUs).toBeCloseTo(1200);
    expect(p.databaseUs).toBeCloseTo(60);
    expect(p.databaseUsPerTx).toBeCloseTo(60);
    expect(p.instances).toBeCloseTo(20);
    expect(p.atLeast).toBe(false);
  });

  it('gives the database CPU per transaction when a request makes several, and none when it makes none', () => {
    expect(projectByCpu([{ instanceS: 1, databaseS: 0.2, requests: 1000 }], 4, 0.01).databaseUsPerTx).toBeCloseTo(50);
    expect(projectByCpu([{ instanceS: 1, databaseS: 0.2, requests: 1000 }], 0, 0.01).databaseUsPerTx).toBeNaN();
  });

  it('is a lower bound when the database used less than one tick', () => {
    const p = projectByCpu([{ instanceS: 0.5, databaseS: 0, requests: 1000 }], 0.01, 0.01);
    expect(p.databaseUs).toBe(0);
    expect(p.instances).toBeCloseTo(50);
    expect(p.atLeast).toBe(true);
  });

  it('answers NaN, not a figure, for no requests', () => {
    expect(projectByCpu([], 1, 0.01).instances).toBeNaN();
  });
});

describe('projectByHitShare', () => {
  it('weighs a hit and a miss by the share that hit, on each side, before dividing', () => {
    const hit = { instanceUs: 900, databaseUs: 10 };
    const miss = { instanceUs: 1000, databaseUs: 100 };
    expect(projectByHitShare(hit, miss, 0)).toEqual({ instanceUs: 1000, databaseUs: 100, instances: 10 });
    expect(projectByHitShare(hit, miss, 1)).toEqual({ instanceUs: 900, databaseUs: 10, instances: 90 });
    // Half and half is not the mean of 10 and 90: the misses' database CPU dominates.
    expect(projectByHitShare(hit, miss, 0.5)).toEqual({ instanceUs: 950, databaseUs: 55, instances: 950 / 55 });
    expect(projectByHitShare({ instanceUs: 900, databaseUs: 0 }, miss, 1).instances).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('processCpuSeconds', () => {
  it("reads a live process's CPU from /proc in seconds, and NaN for one that is gone", () => {
    const start = Date.now();
    while (Date.now() - start < 300) Math.sqrt(Math.random());
    const own = processCpuSeconds(process.pid);
    const used = process.cpuUsage();
    // /proc counts in clock ticks: at most a tick or two apart from Node's own count.
    expect(own.user + own.sys).toBeGreaterThan(0.2);
    expect(Math.abs(own.user + own.sys - (used.user + used.system) / 1e6)).toBeLessThan(5 * clockTick() + 0.05);
    expect(own.children).toBeGreaterThanOrEqual(0);
    expect(processCpuSeconds(2 ** 22 + 1).user).toBeNaN();
    expect(clockTick()).toBeGreaterThan(0);
  });
});
