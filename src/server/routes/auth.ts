// Authentication and service routes: the token endpoint (1.0's GET, and API 0.1's POST /token with a lone key and an
// empty body), GET /{v} (who am I, limits), /healthz (liveness, and the render farm's queue when serve has one) and
// /readyz (readiness: whether every dependency answers now, and not while the server drains before it stops).
import { type DependencyStatus, unavailableError } from '../../core/dependency.js';
import { WmarkError } from '../../core/errors.js';
import { isLoopbackAddress } from '../../core/ip-address.js';
import { MAX_SETTINGS } from '../../core/setting-types.js';
import { VERSION } from '../../version.js';
import { type ApiRequest, BODY_LIMIT_BYTES, json } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

/**
 * Whether the caller is on this machine (`wmark status`, an operator's curl, an in-process request). Health routes need
 * no credentials (load balancers ask them), so where the queue and the store are, why a connection failed and the
 * workers' host names are for such callers only; a peer on another machine hears states, depths and versions. Behind
 * a trusted proxy on this machine, the caller is the client it names, not the proxy.
 */
/** Whether the caller (behind the trusted proxies) is on this machine: it is shown more, and /metrics. */
export function isLocalCaller(ctx: ServerContext, req: ApiRequest): boolean {
  const address = ctx.clientAddress(req);
  return address === undefined || isLoopbackAddress(address);
}

/** A dependency as a caller on another machine sees it: its name and state, not where it is or why it failed. */
function publicStatus(status: DependencyStatus): Partial<DependencyStatus> {
  return { name: status.name, up: status.up, ...(status.downSince !== undefined ? { downSince: status.downSince } : {}) };
}

export function authRoutes(routes: Routes, ctx: ServerContext): void {
  // Liveness: 200 while this process can answer, whatever its dependencies do (a load balancer reads /readyz).
  routes.add(['GET'], ['/healthz'], async (req) => {
    const local = isLocalCaller(ctx, req);
    // Asked first: asking the queue may be what finds it gone, and the states shown then agree with its answer.
    const health = await ctx.service.operations.health();
    const { ready, dependencies } = ctx.service.operations.readiness();
    // An engine with no dependency (everything in this process) has nothing more to say.
    const shown = dependencies.length ? { ready, dependencies: local ? dependencies : dependencies.map(publicStatus) } : {};
    if (!health.detail) return json(200, { ok: true, ...shown });
    return json(200, { ok: true, ...shown, queue: local ? health.detail : health.publicDetail });
  });

  // Readiness: 503 naming what is down while a dependency does not answer, 200 again once it does (no restart).
  routes.add(['GET', 'HEAD'], ['/readyz'], async (req) => {
    const { ready, dependencies } = ctx.service.operations.readiness();
    const shown = isLocalCaller(ctx, req) ? dependencies : dependencies.map(publicStatus);
    // Draining before a stop: not ready, whatever the dependencies say, so a load balancer moves on to the others.
    if (ctx.stopping()) {
      const error = new WmarkError('SHUTTING_DOWN', 'this instance is stopping: it answers the requests it gets until it closes, but should get no new ones');
      return json(503, { ready: false, code: error.code, message: error.message, dependencies: shown }, error.headers);
    }
    if (ready) return json(200, { ready, dependencies: shown });
    const error = unavailableError(dependencies.find((d) => !d.up)!, ctx.service.now());
    return json(503, { ready, code: error.code, message: error.message, dependencies: shown }, error.headers);
  });

  const issueToken = async (req: ApiRequest) => {
    const clientId = await ctx.checkKeyHeaders(req);
    const token = await ctx.service.credentials.issueToken(clientId, ctx.tokenTtlSeconds);
    return json(200, { token, expiresIn: ctx.tokenTtlSeconds });
  };
  routes.add(['GET'], ['/1.0/authenticate/accessToken'], issueToken);
  // The body (empty, or `{}`) says nothing: it is not read.
  routes.add(['POST'], ['/token', '/0.1/token'], issueToken);

  for (const { version, paths } of versioned('', { trailingSlash: true })) {
    routes.add(['GET'], paths, async (req) => {
      const client = await ctx.authenticate(req, version);
      return json(200, {
        service: 'wmark',
        version: VERSION,
        apiVersions: ['1.0', '2.0'],
        client,
        limits: {
          requestBodyBytes: BODY_LIMIT_BYTES,
          settingsPerRequest: MAX_SETTINGS,
          forensicMinimumSeconds: ctx.service.forensicMinimumSeconds,
          forensicPayloadBits: 16,
          pollIntervalSeconds: 3,
        },
      });
    });
  }
}
