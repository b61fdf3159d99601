// Load on one server process: autocannon (CommonJS, driven from the bench's process), and what each run cost the server
// (its CPU from /proc), the load generator and the rest of the machine. Also the bare node:http handler the serve suite
// measures wmark serve against.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { machineBusySeconds } from './measure.js';
import { processCpuSeconds } from './process-cpu.js';
import type { Child } from './server-process.js';

// ---- autocannon (CommonJS, no bundled types): the part of its programmatic API used here.
export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
  requests?: AutocannonRequest[];
}
interface Histogram {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  p99_9?: number;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Histogram;
  requests: Histogram & { sent: number };
  throughput: Histogram;
}
const requireCjs = createRequire(import.meta.url);
export const autocannon = requireCjs('autocannon') as (opts: AutocannonOptions) => Promise<AutocannonResult>;

/**
 * autocannon (v9) appends every response body chunk to a JS string (`req.body += chunk`, a UTF-8 decode of binary
 * video) only for `expectBody`/`verifyBody`/`onResponse`, none of which this suite uses. For 200+ KB segments that alone
 * pins the load generator at one full core around ~85 MB/s, i.e. it measures autocannon, not the servers. Dropping the
 * accumulation in this process leaves byte counts, status codes and latencies untouched. `--client-bodies keep` turns
 * this off. Returns whether the patch was applied.
 */
export function skipClientBodies(): boolean {
  try {
    const Queue = requireCjs('autocannon/lib/pipelinedRequestsQueue.js') as { prototype: { addBody?: (data: unknown) => void } };
    if (typeof Queue.prototype.addBody !== 'function') return false;
    Queue.prototype.addBody = () => {};
    return true;
  } catch {
    return false;
  }
}

/**
 * The baseline: what a competent minimal static handler does. stat for Content-Length (so keep-alive works without
 * chunking, as wmark's), then stream the file with fs.createReadStream defaults. No auth, no routing table, no validators.
 */
export const BARE_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const root = process.argv[1];
const server = http.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  const name = req.url.split('?')[0].slice(1);
  if (!/^seg_\\d{5}\\.ts$/.test(name)) { res.writeHead(404); return void res.end(); }
  const file = path.join(root, name);
  fs.stat(file, (err, st) => {
    if (err) { res.writeHead(404); return void res.end(); }
    res.writeHead(200, { 'Content-Type': 'video/mp2t', 'Content-Length': st.size });
    fs.createReadStream(file).on('error', () => res.destroy()).pipe(res);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); });
`;

export function procRssMiB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export interface Measurement {
  label: string;
  reqPerS: number;
  totalRequests: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  mbPerS: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Cores the server process used during the run, and its CPU time per completed request. */
  serverCores: number;
  serverCpuUsPerReq: number;
  serverUserS: number;
  serverSysS: number;
  /** Cores the load generator (this process) used. */
  clientCores: number;
  /** Cores everything else on the machine used (noise). */
  otherCores: number;
  durationS: number;
}

export async function measure(label: string, server: Child, requests: AutocannonRequest[], connections: number, durationS: number): Promise<Measurement> {
  const pid = server.proc.pid;
  const s0 = processCpuSeconds(pid);
  const c0 = process.cpuUsage();
  const b0 = machineBusySeconds();
  const t0 = performance.now();
  const r = await autocannon({ url: server.url, connections, duration: durationS, pipelining: 1, timeout: 10, requests });
  const wallS = (performance.now() - t0) / 1000;
  const busy = machineBusySeconds() - b0;
  const c = process.cpuUsage(c0);
  const s1 = processCpuSeconds(pid);
  const serverUser = s1.user - s0.user;
  const serverSys = s1.sys - s0.sys;
  const serverCpu = serverUser + serverSys;
  const clientCpu = (c.user + c.system) / 1e6;
  const completed = r.requests.total;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
  return {
    label,
    reqPerS: r.requests.average,
    totalRequests: completed,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
    latencyMaxMs: r.latency.max,
    mbPerS: r.throughput.average / 1e6,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    serverCores: serverCpu / wallS,
    serverCpuUsPerReq: completed ? (serverCpu * 1e6) / completed : NaN,
    serverUserS: serverUser,
    serverSysS: serverSys,
    clientCores: clientCpu / wallS,
    otherCores: Math.max(0, busy - serverCpu - clientCpu) / wallS,
    durationS: r.duration,
  };
}
