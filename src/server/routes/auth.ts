// Authentication and service routes: the token endpoint (1.0's GET, and API 0.1's POST /token with a lone key and an
// empty body), GET /{v} (who am I, limits), /healthz (and the render farm's queue, when serve has one).
import { isLoopbackAddress } from '../../core/ip-address.js';
import { MAX_SETTINGS } from '../../core/setting-types.js';
import { VERSION } from '../../version.js';
import { type ApiRequest, BODY_LIMIT_BYTES, json } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

export function authRoutes(routes: Routes, ctx: ServerContext): void {
  // On a render farm, also the queue's state. /healthz needs no credentials (load balancers ask it), so a peer on
  // another machine hears only whether the queue answers, its depth and the workers' versions; where the queue and the
  // store are and the workers' host names are for this machine's own callers (`wmark status`, an operator's curl,
  // an in-process request).
  routes.add(['GET'], ['/healthz'], async (req) => {
    const health = await ctx.service.health();
    if (!health.detail) return json(200, { ok: true });
    const local = req.remoteAddress === undefined || isLoopbackAddress(req.remoteAddress);
    return json(200, { ok: true, queue: local ? health.detail : health.publicDetail });
  });

  const issueToken = async (req: ApiRequest) => {
    const clientId = await ctx.checkKeyHeaders(req);
    const token = await ctx.service.issueToken(clientId, ctx.tokenTtlSeconds);
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
