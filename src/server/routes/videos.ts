// Video routes (docs/api.md, "Videos"): POST /{v}/videos registers (201) or finds (200) a video and ingests it in the
// background; GET lists (?key=, limit, page) or shows one. API 0.1 (`/videos`, `/0.1/videos`) is the 1.0 handler, its
// ?key= read raw: the oldest SDKs append the key unencoded (as 1.0's PHP SDK does: a raw URL key is read whole there too).
import { listQueryOf, parseListQuery, parseVideoRequest } from '../../core/api-requests.js';
import { json } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

export function videoRoutes(routes: Routes, ctx: ServerContext): void {
  for (const { version, paths, legacy } of versioned('/videos', { trailingSlash: true, legacy: true })) {
    routes.add(['POST'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const { video, created } = await ctx.service.videos.create(parseVideoRequest(await req.body()));
      return json(created ? 201 : 200, video);
    });
    routes.add(['GET'], paths, async (req) => {
      await ctx.authenticate(req, version);
      const q = parseListQuery(listQueryOf(req.rawUrl, legacy));
      return json(200, await ctx.service.videos.list(q));
    });
  }
  for (const { version, paths } of versioned('/videos/:id')) {
    routes.add(['GET'], paths, async (req, params) => {
      await ctx.authenticate(req, version);
      return json(200, await ctx.service.videos.get(params.id!));
    });
  }
}
