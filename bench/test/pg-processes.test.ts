// The control-plane bench's split of PostgreSQL's CPU by process: titles to kinds, ticks by kind across two snapshots
// (backends that end in the window counted through the postmaster's reaped times, once), and /proc/net/tcp's ports.
import { describe, expect, it } from 'vitest';
import { classifyPostgres, clientPort, openPorts, PG_KINDS, socketPorts, type TitledStat, ticksByKind } from '../lib/pg-processes.js';

const instance = { ports: new Set([50001, 50002, 50003]), listenPort: 50003 };

describe('classifyPostgres', () => {
  it('reads the client port of a backend title, IPv4 or IPv6, and none from a background title', () => {
    expect(clientPort('postgres: wmark t1_2_ab 127.0.0.1(50001) idle')).toBe(50001);
    expect(clientPort('postgres: wmark t1_2_ab [local] idle')).toBeUndefined();
    expect(clientPort('postgres: wmark db ::1(41000) SELECT')).toBe(41000);
    expect(clientPort('postgres: checkpointer')).toBeUndefined();
    expect(clientPort('postgres: autovacuum launcher')).toBeUndefined();
  });

  it('names each kind of process', () => {
    expect(classifyPostgres('/usr/lib/postgresql/15/bin/postgres -D /tmp/x', true, instance)).toBe('postmaster');
    expect(classifyPostgres('postgres: wmark db 127.0.0.1(50001) idle', false, instance)).toBe('pool backends of the metered instance');
    expect(classifyPostgres('postgres: wmark db 127.0.0.1(50003) idle', false, instance)).toBe('its LISTEN connection');
    expect(classifyPostgres('postgres: wmark db 127.0.0.1(60000) idle', false, instance)).toBe(
      'backends of other clients (other instances, probes, this bench)',
    );
    for (const title of ['postgres: checkpointer', 'postgres: walwriter', 'postgres: background writer', 'postgres: logical replication launcher']) {
      expect(classifyPostgres(title, false, instance)).toBe('background (checkpointer, walwriter, bgwriter, autovacuum, launchers)');
    }
  });
});

const p = (pid: number, ppid: number, title: string, utime: number, stime: number, cutime = 0, cstime = 0): TitledStat => ({
  pid,
  ppid,
  name: 'postgres',
  title,
  utime,
  stime,
  cutime,
  cstime,
});
const tableOf = (...rows: TitledStat[]) => new Map(rows.map((r) => [r.pid, r]));

describe('ticksByKind', () => {
  it('splits every tick the tree used between two snapshots, each once', () => {
    const before = tableOf(
      p(100, 1, 'postgres -D x', 10, 5, 40, 20),
      p(101, 100, 'postgres: walwriter', 3, 3),
      p(102, 100, 'postgres: wmark db 127.0.0.1(50001) idle', 100, 50),
      p(103, 100, 'postgres: wmark db 127.0.0.1(50003) idle', 1, 1),
      // A backend alive at the start that ends in the window: 7 ticks before, 12 in all.
      p(104, 100, 'postgres: wmark db 127.0.0.1(60000) idle', 4, 3),
    );
    const after = tableOf(
      // Reaped meanwhile: 12 of 104's, and 30 of backends that came and went within the window.
      p(100, 1, 'postgres -D x', 12, 6, 40 + 30 + 8, 20 + 4),
      p(101, 100, 'postgres: walwriter', 4, 3),
      p(102, 100, 'postgres: wmark db 127.0.0.1(50001) idle', 160, 80),
      p(103, 100, 'postgres: wmark db 127.0.0.1(50003) idle', 2, 1),
      // A pool backend opened in the window: all of it counts.
      p(105, 100, 'postgres: wmark db 127.0.0.1(50002) idle', 5, 2),
    );
    const ticks = ticksByKind(before, after, 100, instance);
    expect(ticks).toEqual({
      'pool backends of the metered instance': 90 + 7,
      'its LISTEN connection': 1,
      'backends of other clients (other instances, probes, this bench)': 0,
      'backends forked and ended in the window': 30 + 12 - 7,
      postmaster: 3,
      'background (checkpointer, walwriter, bgwriter, autovacuum, launchers)': 1,
    });
    const total = (t: Map<number, TitledStat>) => [...t.values()].reduce((n, x) => n + x.utime + x.stime + x.cutime + x.cstime, 0);
    expect(PG_KINDS.reduce((n, k) => n + ticks[k], 0)).toBe(total(after) - total(before));
  });

  it('answers zero for every kind when the postmaster is not in both snapshots', () => {
    const ticks = ticksByKind(tableOf(), tableOf(p(100, 1, 'postgres', 1, 1)), 100, instance);
    expect(Object.values(ticks)).toEqual(PG_KINDS.map(() => 0));
  });
});

describe('socketPorts', () => {
  it("reads each socket's inode and local port from /proc/net/tcp", () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:C351 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 23456 1 0000000000000000 20 4 30 10 -1',
      '   2: 0100007F:C352 0100007F:1538 06 00000000:00000000 03:00000F2A 00000000     0        0 0 3 0000000000000000',
    ].join('\n');
    expect(socketPorts(text)).toEqual(
      new Map([
        [12345, 8080],
        [23456, 50001],
      ]),
    );
  });

  it('finds the port of a socket this process listens on', async () => {
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      expect(openPorts(process.pid).has(port)).toBe(true);
    } finally {
      server.close();
    }
  });
});
