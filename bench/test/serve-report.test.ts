// The serve suite's figures: medians per measurement, ratios taken round by round, and the table's rows in run order.
import { describe, expect, it } from 'vitest';
import type { Measurement } from '../lib/serve-load.js';
import { type ServeRound, serveFigures, serveRows } from '../serve-report.js';

const m = (label: string, reqPerS: number, p99: number, cpuUs: number, non2xx = 0): Measurement => ({
  label,
  reqPerS,
  totalRequests: reqPerS * 10,
  latencyP50Ms: p99 / 2,
  latencyP99Ms: p99,
  latencyMaxMs: p99 * 2,
  mbPerS: reqPerS / 4,
  ok2xx: reqPerS * 10 - non2xx,
  non2xx,
  errors: 0,
  timeouts: 0,
  statusCodes: { '200': reqPerS * 10 },
  serverCores: 1,
  serverCpuUsPerReq: cpuUs,
  serverUserS: 8,
  serverSysS: 2,
  clientCores: 0.5,
  otherCores: 0.1,
  durationS: 10,
});
const round = (r: number, wmark: number, bare: number, order: ServeRound['order']): ServeRound => ({
  round: r,
  order,
  wmarkGet: m('wmark GET', wmark, 20, 300),
  bareGet: m('bare GET', bare, 10, 100),
  wmarkPost: m('wmark POST', 500, 40, 900, r),
  ratio: wmark / bare,
});

describe('serve figures', () => {
  const rounds = [
    round(1, 800, 1000, ['wmarkGet', 'bareGet', 'wmarkPost']),
    round(2, 900, 1000, ['bareGet', 'wmarkGet', 'wmarkPost']),
    round(3, 600, 1200, ['wmarkGet', 'bareGet', 'wmarkPost']),
  ];

  it('takes medians per measurement, sums the failures, and the ratios round by round', () => {
    const f = serveFigures(rounds);
    expect(f.median.wmarkGet.reqPerS).toBe(800);
    expect(f.median.bareGet.reqPerS).toBe(1000);
    expect(f.median.wmarkPost.non2xx).toBe(1 + 2 + 3);
    expect(f.median.wmarkGet.label).toBe('wmark GET');
    expect(f.ratio).toBe(0.8);
    expect(f.p99Ratio).toBe(2);
    expect(f.cpuRatio).toBe(3);
  });

  it('lists each round in the order it ran, then the three medians', () => {
    const rows = serveRows(rounds, serveFigures(rounds).median);
    expect(rows.map((r) => r[0])).toEqual([
      '1  wmark GET segment',
      '1  bare  GET segment',
      '1  wmark POST existing',
      '2  bare  GET segment',
      '2  wmark GET segment',
      '2  wmark POST existing',
      '3  wmark GET segment',
      '3  bare  GET segment',
      '3  wmark POST existing',
      'median  wmark GET segment',
      'median  bare  GET segment',
      'median  wmark POST existing',
    ]);
    expect(rows[2]).toEqual(['1  wmark POST existing', 500, 20, 40, 125, 1, 1, 900, 0.5, 0.1]);
  });
});
