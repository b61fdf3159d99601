// One window of the control-plane suite's load: a closed loop of one of its requests against an instance or the load
// balancer, its rate and latencies, and the CPU the instance and every PostgreSQL process used meanwhile.
import type { Op, Target } from './control-plane-setup.js';
import { percentile } from './lib/cluster-figures.js';
import { type InstanceConnections, openPorts, PG_KINDS, type PgKind, ticksByKind, titled } from './lib/pg-processes.js';
import { type CpuWindow, cpuSeconds, descendants, readProcessTable } from './lib/process-cpu.js';

export interface Load {
  perS: number;
  p50: number;
  p95: number;
  failed: number;
  /** Requests sent, the warm-up's included. */
  sent: number;
  /** CPU used during the measured window (not the warm-up), when it was asked for. */
  cpu?: SplitWindow;
}

/** Starts a CPU window; the answer closes it, given the requests answered meanwhile. */
export type CpuMeter = () => (requests: number) => SplitWindow;

/**
 * `concurrency` loops, each sending the next request when the last is answered, for `seconds` after a warm-up; with
 * `meter`, the CPU of the measured window too.
 */
export async function closedLoop(send: () => Promise<number>, concurrency: number, seconds: number, meter?: CpuMeter): Promise<Load> {
  const run = async (ms: number) => {
    const latencies: number[] = [];
    let failed = 0;
    const end = Date.now() + ms;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          const t = performance.now();
          const status = await send().catch(() => 0);
          latencies.push(performance.now() - t);
          if (status < 200 || status >= 300) failed++;
        }
      }),
    );
    return { latencies, failed };
  };
  const warm = (await run(1000)).latencies.length;
  const stop = meter?.();
  const { latencies, failed } = await run(seconds * 1000);
  const cpu = stop?.(latencies.length);
  return {
    sent: warm + latencies.length,
    perS: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    failed,
    ...(cpu ? { cpu } : {}),
  };
}

/** Sends one of the three requests to `base` (an instance or the load balancer), answering its status. */
export function sender(base: string, t: Target, op: Op): () => Promise<number> {
  const request = async (url: string, init: RequestInit) => {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return res.status;
  };
  if (op === 'POST existing watermark')
    return () =>
      request(`${base}/2.0/watermark`, { method: 'POST', headers: { ...t.headers, 'content-type': 'application/json' }, body: JSON.stringify(t.body) });
  const link = base + (op === 'GET 2.0 href' ? t.href : t.segment);
  return () => request(link, {});
}

/** One window's CPU, with PostgreSQL's split by the kind of process that used it (seconds). */
export interface SplitWindow extends CpuWindow {
  databaseByKind: Record<PgKind, number>;
}

/**
 * Meters the CPU of one instance's process tree and of every PostgreSQL process (its postmaster's tree), the latter
 * split by kind; `listenPorts`: the client ports of every LISTEN connection to the server (the instance's among them).
 */
export function cpuMeter(
  instancePid: number,
  databasePid: number,
  tickS: number,
  listenPorts: () => ReadonlySet<number>,
): () => (requests: number) => SplitWindow {
  return () => {
    const before = readProcessTable();
    const titledBefore = titled(before, databasePid);
    return (requests) => {
      const after = readProcessTable();
      const ports = new Set(descendants(after, instancePid).flatMap((p) => [...openPorts(p.pid)]));
      const instance: InstanceConnections = { ports, listenPort: [...listenPorts()].find((p) => ports.has(p)) };
      const ticks = ticksByKind(titledBefore, titled(after, databasePid), databasePid, instance);
      return {
        instanceS: cpuSeconds(before, after, instancePid, 1 / tickS),
        databaseS: cpuSeconds(before, after, databasePid, 1 / tickS),
        requests,
        databaseByKind: Object.fromEntries(PG_KINDS.map((k) => [k, ticks[k] * tickS])) as Record<PgKind, number>,
      };
    };
  };
}
