// Watermark routes: POST /{v}/watermark and the signed status link: the 1.0 long-poll href, or the 2.0 resource
// link that answers with freshly signed URLs.
import type { WatermarkRequest } from '../../service/watermark-service.js';
import { json, MEDIA_CORS } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';
import type { SignedLinks } from '../signed-links.js';

export function watermarkRoutes(routes: Routes, ctx: ServerContext, links: SignedLinks): void {
  for (const { version, paths } of versioned('/watermark', { trailingSlash: true })) {
    routes.add(['POST'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const result = await ctx.service.requestWatermark((await req.body()) as WatermarkRequest, { api: version, baseUrl: ctx.baseUrlOf(req) });
      return json(result.created ? 201 : 200, result.resource);
    });
  }
  for (const { version, paths } of versioned('/watermark/:videoId/:watermarkId')) {
    routes.add(
      ['GET', 'HEAD'],
      paths,
      async (req, params) => {
        const { watermark: w } = await links.watermark(req, version, params);
        if (version === '1.0') ctx.service.media.checkStatusLinkAge(w);
        return json(200, ctx.service.body(w, version, ctx.baseUrlOf(req), version === '2.0'), MEDIA_CORS);
      },
      { cors: true },
    );
  }
}
