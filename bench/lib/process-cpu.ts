// CPU time of a process tree over a window, from /proc: what a server costs per request, independent of how the
// machine's cores were shared while it was measured. The arithmetic is pure (parse, sum, difference, projection) and
// unit-tested; only readProcessTable() and processCpuSeconds() touch /proc, and clockTick() asks getconf.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat that CPU accounting needs; times in clock ticks. */
export interface ProcStat {
  pid: number;
  name: string;
  ppid: number;
  /** Its own user and system time. */
  utime: number;
  stime: number;
  /** Its children's user and system time, for those that exited and that it waited for (their own reaped ones included). */
  cutime: number;
  cstime: number;
}

/** Parses one /proc/<pid>/stat line: `pid (comm) state ppid ...`, where comm may hold spaces and parentheses. */
export function parseStat(line: string): ProcStat {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  // After the comm: state(0) ppid(1) pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12) cutime(13) cstime(14)
  const rest = line
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (i: number) => {
    const n = Number(rest[i]);
    if (!Number.isFinite(n)) throw new Error(`/proc/<pid>/stat field ${i + 3} is not a number: ${line.slice(0, 80)}`);
    return n;
  };
  return {
    pid: Number(line.slice(0, open).trim()),
    name: line.slice(open + 1, close),
    ppid: field(1),
    utime: field(11),
    stime: field(12),
    cutime: field(13),
    cstime: field(14),
  };
}

let tickS: number | undefined;

/** One clock tick of /proc's CPU times, in seconds (USER_HZ: 1/100 s on Linux). */
export function clockTick(): number {
  if (tickS === undefined) {
    const hz = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
    tickS = 1 / (Number.isFinite(hz) && hz > 0 ? hz : 100);
  }
  return tickS;
}

/**
 * CPU seconds one process has used so far: its own user and system time, and what it reaped of children that ended
 * (its children still running not counted); NaN each when it is gone or there is no /proc.
 */
export function processCpuSeconds(pid: number | undefined): { user: number; sys: number; children: number } {
  try {
    const s = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const tick = clockTick();
    return { user: s.utime * tick, sys: s.stime * tick, children: (s.cutime + s.cstime) * tick };
  } catch {
    return { user: NaN, sys: NaN, children: NaN };
  }
}

/** Every process now, by pid (those that end while it reads are left out). */
export function readProcessTable(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      table.set(Number(entry), parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8')));
    } catch {
      /* gone meanwhile */
    }
  }
  return table;
}

/** `root` and its descendants in a process table (root first); empty when root is not in it. */
export function descendants(table: ReadonlyMap<number, ProcStat>, root: number): ProcStat[] {
  if (!table.has(root)) return [];
  const children = new Map<number, number[]>();
  for (const p of table.values()) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const out: ProcStat[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const p = table.get(pid);
    if (!p) continue;
    out.push(p);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU ticks a tree has used so far: each live member's own time plus what it reaped of children that ended. A
 * process that ends between two snapshots moves from its own fields to its parent's cumulative ones, and one that
 * starts and ends between them shows up only there, so the difference of two snapshots counts each tick once.
 */
export function treeTicks(table: ReadonlyMap<number, ProcStat>, root: number): number {
  return descendants(table, root).reduce((sum, p) => sum + p.utime + p.stime + p.cutime + p.cstime, 0);
}

/** CPU seconds a tree used between two snapshots of the process table. */
export function cpuSeconds(before: ReadonlyMap<number, ProcStat>, after: ReadonlyMap<number, ProcStat>, root: number, ticksPerSecond: number): number {
  return (treeTicks(after, root) - treeTicks(before, root)) / ticksPerSecond;
}

/** One load window's CPU: the instance's tree and the database server's, and the requests answered meanwhile. */
export interface CpuWindow {
  instanceS: number;
  databaseS: number;
  requests: number;
}

/** What one request costs each side in CPU, and how many such instances one database carries. */
export interface CpuProjection {
  /** CPU microseconds per request. */
  instanceUs: number;
  databaseUs: number;
  /** databaseUs per database transaction (NaN when the request makes none). */
  databaseUsPerTx: number;
  /**
   * Instances, each busy at full speed, that use as much CPU as the database has when its machine has as many cores
   * as one instance's: instance CPU per request / database CPU per request. Infinity when the database used none.
   */
  instances: number;
  /** The database CPU measured was below one clock tick: `instances` is then at least this bound. */
  atLeast: boolean;
}

/**
 * Pools several windows of one request kind (CPU and requests summed, so short windows weigh by their requests) and
 * projects. `tickS` is one clock tick in seconds: a database that used less than one tick over the windows is given
 * one tick, and the projection is then a lower bound.
 */
export function projectByCpu(windows: readonly CpuWindow[], txPerRequest: number, tickS: number): CpuProjection {
  const requests = windows.reduce((s, w) => s + w.requests, 0);
  const instanceS = windows.reduce((s, w) => s + w.instanceS, 0);
  const measuredDb = windows.reduce((s, w) => s + w.databaseS, 0);
  if (requests <= 0) return { instanceUs: NaN, databaseUs: NaN, databaseUsPerTx: NaN, instances: NaN, atLeast: false };
  const atLeast = measuredDb < tickS;
  const databaseS = Math.max(measuredDb, tickS);
  const instanceUs = (instanceS / requests) * 1e6;
  const databaseUs = (databaseS / requests) * 1e6;
  return {
    instanceUs,
    databaseUs: (measuredDb / requests) * 1e6,
    databaseUsPerTx: txPerRequest > 0 ? (measuredDb / requests / txPerRequest) * 1e6 : NaN,
    instances: instanceUs / databaseUs,
    atLeast,
  };
}

/**
 * Instances one database carries when a share `hits` of the requests cost what a hit costs and the rest what a miss
 * does: each side's CPU per request weighed by the shares, then the instance's over the database's.
 */
export function projectByHitShare(
  hit: { instanceUs: number; databaseUs: number },
  miss: { instanceUs: number; databaseUs: number },
  hits: number,
): { instanceUs: number; databaseUs: number; instances: number } {
  const instanceUs = hits * hit.instanceUs + (1 - hits) * miss.instanceUs;
  const databaseUs = hits * hit.databaseUs + (1 - hits) * miss.databaseUs;
  return { instanceUs, databaseUs, instances: databaseUs > 0 ? instanceUs / databaseUs : Number.POSITIVE_INFINITY };
}
