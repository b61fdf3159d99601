// Watermark routes: POST /{v}/watermark and the signed status link: the 1.0 long-poll href, or the 2.0 resource
// link that answers with freshly signed URLs. API 0.1 (`/watermark`, `/0.1/watermark`) is the 1.0 request, its settings
// also in the Java SDK's encoding object; its answer's href is the 1.0 status link, polled with or without a token.
// DELETE of the 2.0 resource link removes a watermark.
import { legacyWatermarkBody, parseWatermarkOrder } from '../../core/api-requests.js';
import { WmarkError } from '../../core/errors.js';
import { json, MEDIA_CORS } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';
import type { SignedLinks } from '../signed-links.js';

export function watermarkRoutes(routes: Routes, ctx: ServerContext, links: SignedLinks): void {
  for (const { version, paths, legacy } of versioned('/watermark', { trailingSlash: true, legacy: true })) {
    routes.add(['POST'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const body = legacy ? legacyWatermarkBody(await req.body()) : await req.body();
      const order = parseWatermarkOrder(body, { api: version, nowMs: ctx.service.now() });
      const result = await ctx.service.watermarks.request(order, { api: version, baseUrl: ctx.linkBase });
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
        return json(200, ctx.service.watermarks.body(w, version, ctx.linkBase, version === '2.0'), MEDIA_CORS);
      },
      { cors: true },
    );
  }
  // Beyond the contract: an API client removes a watermark it no longer needs (its record, files and links) through
  // any instance, as `wmark watermark rm` does locally.
  routes.add(['DELETE'], ['/2.0/watermark/:videoId/:watermarkId'], async (req, params) => {
    await ctx.authenticate(req, '2.0');
    const w = await ctx.service.watermarks.record(params.watermarkId ?? '');
    if (w.videoId !== params.videoId) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${params.watermarkId} of video ${params.videoId}`);
    await ctx.service.watermarks.delete(w.id);
    return { status: 204, headers: {} };
  });
}
