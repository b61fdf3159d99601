// Where PostgreSQL's CPU goes during a load window, process by process: the postmaster, the backends serving the
// metered instance's pool, its LISTEN connection, other instances' and other clients' backends, the background
// processes (checkpointer, walwriter, …), and backends that were forked and ended within the window (counted through
// the postmaster's reaped times: a client that opens a connection per call shows up there). Kinds come from each
// process's title in /proc/<pid>/cmdline (PostgreSQL rewrites it: `postgres: checkpointer`, `postgres: USER DB
// 127.0.0.1(PORT) idle`) and the client ports of the metered instance's sockets; the arithmetic is pure and
// unit-tested, and only the readers at the end touch /proc.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { descendants, type ProcStat } from './process-cpu.js';

export const PG_KINDS = [
  'pool backends of the metered instance',
  'its LISTEN connection',
  'backends of other clients (other instances, probes, this bench)',
  'backends forked and ended in the window',
  'postmaster',
  'background (checkpointer, walwriter, bgwriter, autovacuum, launchers)',
] as const;
export type PgKind = (typeof PG_KINDS)[number];

/** What the metered instance's connections to the server are: client ports (the LISTEN one apart). */
export interface InstanceConnections {
  ports: ReadonlySet<number>;
  listenPort?: number;
}

/** The client port of a backend's title (`postgres: wmark db 127.0.0.1(54321) idle`); undefined for other titles. */
export function clientPort(title: string): number | undefined {
  const m = /^postgres: \S+ \S+ (?:\[[^\]]*\]|[^\s(]+)\((\d+)\)/.exec(title);
  return m ? Number(m[1]) : undefined;
}

/** The kind of one live PostgreSQL process, by its title; `postmaster`: it is the server's root process. */
export function classifyPostgres(title: string, postmaster: boolean, instance: InstanceConnections): PgKind {
  if (postmaster) return 'postmaster';
  const port = clientPort(title);
  if (port === undefined) return 'background (checkpointer, walwriter, bgwriter, autovacuum, launchers)';
  if (port === instance.listenPort) return 'its LISTEN connection';
  return instance.ports.has(port) ? 'pool backends of the metered instance' : 'backends of other clients (other instances, probes, this bench)';
}

/** A process and its title, as read at one moment. */
export interface TitledStat extends ProcStat {
  title: string;
}

/** Ticks by kind between two snapshots of the server's processes (its postmaster's tree, titles included). */
export function ticksByKind(
  before: ReadonlyMap<number, TitledStat>,
  after: ReadonlyMap<number, TitledStat>,
  postmasterPid: number,
  instance: InstanceConnections,
): Record<PgKind, number> {
  const out = Object.fromEntries(PG_KINDS.map((k) => [k, 0])) as Record<PgKind, number>;
  const root = after.get(postmasterPid);
  const rootBefore = before.get(postmasterPid);
  if (!root || !rootBefore) return out;
  // What the postmaster reaped meanwhile is its children that ended: the whole of a short-lived backend, the rest of
  // one alive at the start (whose time up to then is taken off below, so each tick is counted once).
  let ended = root.cutime + root.cstime - rootBefore.cutime - rootBefore.cstime;
  out.postmaster = root.utime + root.stime - rootBefore.utime - rootBefore.stime;
  const alive = new Set<number>();
  for (const p of descendants(after, postmasterPid) as TitledStat[]) {
    if (p.pid === postmasterPid) continue;
    alive.add(p.pid);
    const was = before.get(p.pid);
    const used = p.utime + p.stime + p.cutime + p.cstime - (was ? was.utime + was.stime + was.cutime + was.cstime : 0);
    out[classifyPostgres(p.title, false, instance)] += used;
  }
  for (const p of descendants(before, postmasterPid)) {
    if (p.pid === postmasterPid || alive.has(p.pid)) continue;
    ended -= p.utime + p.stime + p.cutime + p.cstime;
  }
  out['backends forked and ended in the window'] = Math.max(0, ended);
  return out;
}

/** Parses /proc/net/tcp(6) text: each socket's inode and local port. */
export function socketPorts(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const port = Number.parseInt(f[1]!.split(':')[1] ?? '', 16);
    const inode = Number(f[9]);
    if (Number.isFinite(port) && inode > 0) out.set(inode, port);
  }
  return out;
}

/** The local ports of every TCP socket `pid` holds open (its connections' client ports, its listening port). */
export function openPorts(pid: number): Set<number> {
  const byInode = new Map<number, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const [inode, port] of socketPorts(readFileSync(file, 'utf8'))) byInode.set(inode, port);
    } catch {
      /* no IPv6 */
    }
  }
  const ports = new Set<number>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return ports;
  }
  for (const fd of fds) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      const port = inode ? byInode.get(Number(inode)) : undefined;
      if (port !== undefined) ports.add(port);
    } catch {
      /* closed meanwhile */
    }
  }
  return ports;
}

/** A process's title (its cmdline, NULs as spaces); empty when it is gone. */
function processTitle(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** The server's processes (its postmaster's tree) from a process table, each with its title read now. */
export function titled(table: ReadonlyMap<number, ProcStat>, postmasterPid: number): Map<number, TitledStat> {
  return new Map(descendants(table, postmasterPid).map((p) => [p.pid, { ...p, title: processTitle(p.pid) }]));
}
