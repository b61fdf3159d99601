// Template routes (docs/api.md, "Templates"): POST /{v}/templates creates one (201), GET lists them (built-ins
// included) or shows one.
import { parseTemplateBody } from '../../core/template-schema.js';
import { json } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

export function templateRoutes(routes: Routes, ctx: ServerContext): void {
  for (const { version, paths } of versioned('/templates', { trailingSlash: true })) {
    routes.add(['POST'], paths, async (req) => {
      await ctx.authenticate(req, version);
      return json(201, await ctx.service.templates.create(parseTemplateBody((await req.body()) ?? {}, version)));
    });
    routes.add(['GET'], paths, async (req) => {
      await ctx.authenticate(req, version);
      return json(200, await ctx.service.templates.list());
    });
  }
  for (const { version, paths } of versioned('/templates/:id')) {
    routes.add(['GET'], paths, async (req, params) => {
      await ctx.authenticate(req, version);
      const { builtin: _builtin, ...template } = await ctx.service.templates.get(params.id!);
      return json(200, template);
    });
  }
}
