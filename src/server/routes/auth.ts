// Authentication and service routes: the 1.0 token endpoint, GET /{v} (who am I, limits), /healthz (and the render
// farm's queue, when serve has one).
import { isLoopbackAddress } from '../../core/ip-address.js';
import { MAX_SETTINGS } from '../../core/setting-types.js';
import { VERSION } from '../../version.js';
import { BODY_LIMIT_BYTES, json } from '../http-types.js';
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

  routes.add(['GET'], ['/1.0/authenticate/accessToken'], async (req) => {
    const clientId = await ctx.checkKeyHeaders(req);
    const token = await ctx.service.issueToken(clientId, ctx.tokenTtlSeconds);
    return json(200, { token, expiresIn: ctx.tokenTtlSeconds });
  });

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
