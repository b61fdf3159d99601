// Video routes (docs/api.md, "Videos"): POST /{v}/videos registers (201) or finds (200) a video and ingests it in the
// background; GET lists (?key=, limit, page) or shows one.
import { parseListQuery } from '../../core/api-requests.js';
import type { VideoRequest } from '../../service/watermark-service.js';
import { json } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

export function videoRoutes(routes: Routes, ctx: ServerContext): void {
  for (const { version, paths } of versioned('/videos', { trailingSlash: true })) {
    routes.add(['POST'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const { video, created } = await ctx.service.createVideo((await req.body()) as VideoRequest);
      return json(created ? 201 : 200, video);
    });
    routes.add(['GET'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const q = parseListQuery(Object.fromEntries(req.url.searchParams));
      return json(200, await ctx.service.listVideos(q));
    });
  }
  for (const { version, paths } of versioned('/videos/:id')) {
    routes.add(['GET'], paths, async (req, params) => {
      await ctx.authenticate(req, version);
      return json(200, await ctx.service.getVideo(params.id!));
    });
  }
}
