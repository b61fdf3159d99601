// The serve suite's figures and report: medians over the rounds, the wmark/bare ratios taken round by round, and the
// table and lines it prints. Pure: bench/serve.ts runs the servers and the load.

import { median } from './lib/measure.js';
import type { Measurement } from './lib/serve-load.js';
import { fmt, formatMachine, type MachineInfo, table } from './lib/suite.js';

/** One round of the serve suite: each measurement, in the order it ran, and wmark's GET req/s over the bare server's. */
export interface ServeRound {
  round: number;
  order: ('wmarkGet' | 'bareGet' | 'wmarkPost')[];
  wmarkGet: Measurement;
  bareGet: Measurement;
  wmarkPost: Measurement;
  ratio: number;
}

/** The median of each figure of one measurement over the rounds; counts of requests and failures are summed. */
function medianMeasurement(ms: Measurement[]): Measurement {
  const k = <K extends keyof Measurement>(key: K) => median(ms.map((m) => m[key] as number));
  return {
    label: ms[0]!.label,
    reqPerS: k('reqPerS'),
    totalRequests: k('totalRequests'),
    latencyP50Ms: k('latencyP50Ms'),
    latencyP99Ms: k('latencyP99Ms'),
    latencyMaxMs: k('latencyMaxMs'),
    mbPerS: k('mbPerS'),
    ok2xx: ms.reduce((a, m) => a + m.ok2xx, 0),
    non2xx: ms.reduce((a, m) => a + m.non2xx, 0),
    errors: ms.reduce((a, m) => a + m.errors, 0),
    timeouts: ms.reduce((a, m) => a + m.timeouts, 0),
    statusCodes: {},
    serverCores: k('serverCores'),
    serverCpuUsPerReq: k('serverCpuUsPerReq'),
    serverUserS: k('serverUserS'),
    serverSysS: k('serverSysS'),
    clientCores: k('clientCores'),
    otherCores: k('otherCores'),
    durationS: k('durationS'),
  };
}

/** Medians per measurement, and the wmark/bare ratios (req/s, p99 latency, server CPU per request) per round's median. */
export function serveFigures(rounds: ServeRound[]) {
  return {
    median: {
      wmarkGet: medianMeasurement(rounds.map((r) => r.wmarkGet)),
      bareGet: medianMeasurement(rounds.map((r) => r.bareGet)),
      wmarkPost: medianMeasurement(rounds.map((r) => r.wmarkPost)),
    },
    ratio: median(rounds.map((r) => r.ratio)),
    p99Ratio: median(rounds.map((r) => r.wmarkGet.latencyP99Ms / r.bareGet.latencyP99Ms)),
    cpuRatio: median(rounds.map((r) => r.wmarkGet.serverCpuUsPerReq / r.bareGet.serverCpuUsPerReq)),
  };
}

const NAMES = { wmarkGet: 'wmark GET segment', bareGet: 'bare  GET segment', wmarkPost: 'wmark POST existing' } as const;

/** The table's rows: each round's measurements in the order they ran, then the medians. */
export function serveRows(rounds: ServeRound[], med: ReturnType<typeof serveFigures>['median']): (string | number)[][] {
  const row = (label: string, m: Measurement): (string | number)[] => [
    label,
    m.reqPerS,
    m.latencyP50Ms,
    m.latencyP99Ms,
    m.mbPerS,
    m.non2xx + m.errors + m.timeouts,
    m.serverCores,
    m.serverCpuUsPerReq,
    m.clientCores,
    m.otherCores,
  ];
  return [
    ...rounds.flatMap((r) => r.order.map((which) => row(`${r.round}  ${NAMES[which]}`, r[which]))),
    row('median  wmark GET segment', med.wmarkGet),
    row('median  bare  GET segment', med.bareGet),
    row('median  wmark POST existing', med.wmarkPost),
  ];
}

export interface ServeReportInput {
  o: { connections: number; durationS: number; crf: number; serverMode: 'src' | 'bin' };
  machine: MachineInfo;
  clip: { seconds: number; width: number; height: number };
  segments: { bytes: number }[];
  bodiesSkipped: boolean;
  rounds: ServeRound[];
  figures: ReturnType<typeof serveFigures>;
  rss: { wmarkMiB: number; bareMiB: number };
}

/** The suite's report: what was served and how, the table, and the ratios. */
export function serveReport(x: ServeReportInput): string[] {
  const { o, machine, clip, segments, rounds, rss } = x;
  const { median: med, ratio, p99Ratio, cpuRatio } = x.figures;
  const { connections, durationS, crf, serverMode } = o;
  const meanKB = segments.reduce((a, s) => a + s.bytes, 0) / segments.length / 1024;
  const maxOther = Math.max(...rounds.flatMap((r) => [r.wmarkGet.otherCores, r.bareGet.otherCores, r.wmarkPost.otherCores]));
  const maxClient = Math.max(...rounds.flatMap((r) => [r.wmarkGet.clientCores, r.bareGet.clientCores]));
  return [
    '',
    `== bench serve: wmark serve vs a bare node:http static handler, ${connections} connections over loopback, ${durationS} s per measurement ==`,
    formatMachine(machine),
    `media:   ${clip.seconds} s ${clip.width}x${clip.height} natural clip, ingested and watermarked at crf ${crf}: ${segments.length} segments (${segments.map((s) => `${(s.bytes / 1024).toFixed(0)} KB`).join(', ')}; mean ${meanKB.toFixed(0)} KB)`,
    `servers: wmark = \`wmark serve\` from ${serverMode === 'src' ? 'src/ via tsx' : 'bin/wmark.js'} (child process); bare = node:http + fs.stat + fs.createReadStream (child process); load = autocannon ${connections} conns, pipelining 1, in the bench process${x.bodiesSkipped ? ' (response bodies counted, not accumulated)' : ''}`,
    `requests: each connection cycles over all ${segments.length} segment URLs (wmark: signed, from a real POST /2.0/watermark + playlist); POST = same body as the watermark's own request, x-api-client-id/x-api-key`,
    '',
    table(
      ['round  measurement', 'req/s', 'p50 ms', 'p99 ms', 'MB/s', 'non-2xx/err', 'server cores', 'server us/req', 'client cores', 'other load'],
      serveRows(rounds, med),
    ),
    '',
    `(latency = autocannon, 2xx responses only; server cores / us per request = CPU of the server process from /proc; client = this process (autocannon);`,
    ` other load = cores used by the rest of the machine${maxOther > 0.2 ? ` -- up to ${fmt(maxOther)} here: the machine was shared, figures are noisy` : ''}${maxClient > 0.85 ? `; the load generator used up to ${fmt(maxClient)} cores, so on this ${machine.availableParallelism}-core machine it may cap the faster server` : ''})`,
    '',
    `ratio wmark/bare, segment GET req/s:        ${fmt(ratio)}  (per round ${rounds.map((r) => fmt(r.ratio)).join(' ')}; spread ${fmt(Math.min(...rounds.map((r) => r.ratio)))}-${fmt(Math.max(...rounds.map((r) => r.ratio)))})`,
    `ratio wmark/bare, segment GET p99 latency:  ${fmt(p99Ratio)}`,
    `ratio wmark/bare, server CPU per request:   ${fmt(cpuRatio)}`,
    `wmark POST /2.0/watermark (existing):       ${fmt(med.wmarkPost.reqPerS, 0)} req/s, p50 ${fmt(med.wmarkPost.latencyP50Ms)} ms, p99 ${fmt(med.wmarkPost.latencyP99Ms)} ms, ${fmt(med.wmarkPost.serverCpuUsPerReq, 0)} us server CPU/request`,
    `server RSS after the runs: wmark ${fmt(rss.wmarkMiB, 0)} MiB, bare ${fmt(rss.bareMiB, 0)} MiB`,
    '',
  ];
}
