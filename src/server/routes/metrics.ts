// GET /metrics: the server's figures in Prometheus' text format, for a scraper on serve's own machine without
// credentials (as /healthz), and for one elsewhere only when the operator opened it (`serve --metrics-public`).
import { WmarkError } from '../../core/errors.js';
import type { ServerMetrics } from '../metrics.js';
import type { Routes } from '../route-table.js';
import type { ServerContext } from '../server-context.js';
import { isLocalCaller } from './auth.js';

export function metricsRoutes(routes: Routes, ctx: ServerContext, metrics: ServerMetrics, options: { public: boolean }): void {
  routes.add(['GET'], ['/metrics'], async (req) => {
    if (!options.public && !isLocalCaller(ctx, req)) {
      throw new WmarkError('METRICS_NOT_PUBLIC', '/metrics answers callers on this machine only (this serve was not started with --metrics-public)');
    }
    const { contentType, body } = await metrics.scrape();
    return { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' }, body };
  });
}
