// `wmark template create|list|show|delete`: settings templates with %name% / [%name%] placeholders, on the local
// engine or a remote service (which has no delete).
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { parseTemplateBody } from '../../core/template-schema.js';
import type { LocalService } from '../../engine/app/local-service.js';
import { action } from '../action.js';
import { readJsonInput } from '../read-input.js';
import { addRemoteOptions, positionalBeforeRemote, type RemoteFlags } from '../remote-flags.js';
import { renderTemplateDetail, renderTemplateList } from '../render.js';

export function registerTemplate(program: Command): void {
  const template = program.command('template').description('settings templates with placeholders (%name% or [%name%])');
  template
    .command('create')
    .description('create a template from a JSON file {"name", "description"?, "settings": [...]} ("-" reads stdin)')
    .argument('[file]', 'JSON file, or - for stdin')
    .action(
      action(async (ctx, given: string | undefined, opts: RemoteFlags) => {
        const file = positionalBeforeRemote(given, opts, 'file');
        const body = await readJsonInput(ctx.io, file);
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          throw new WmarkError('TEMPLATE_INVALID', `${file}: expected a JSON object {"name", "description"?, "settings": [...]}`);
        const order = parseTemplateBody(body);
        const service = await ctx.service(opts);
        const created = await service.templates.create(order);
        ctx.output.result(created, (c) => renderTemplateDetail(created, c));
      }),
    );
  template
    .command('list')
    .description('list templates and the placeholders each needs')
    .action(
      action(async (ctx, opts: RemoteFlags) => {
        const service = await ctx.service(opts);
        const all = await service.templates.list();
        ctx.output.result(all, (c) => renderTemplateList(all, service.description, c));
      }),
    );
  template
    .command('show')
    .description('show one template')
    .argument('[id]')
    .action(
      action(async (ctx, given: string | undefined, opts: RemoteFlags) => {
        const id = positionalBeforeRemote(given, opts, 'id');
        const found = await (await ctx.service(opts)).templates.get(id);
        ctx.output.result(found, (c) => renderTemplateDetail(found, c));
      }),
    );
  template
    .command('delete')
    .description('delete a template (watermarks made from it are kept)')
    .argument('<id>')
    .action(
      action(async (ctx, id: string) => {
        const service: LocalService = await ctx.localService();
        await service.templates.delete(id);
        ctx.output.result({ id, deleted: true }, () => `deleted template ${id}`);
      }),
    );
  // Templates on a remote service: create, list and show (the service API has no delete).
  for (const sub of template.commands) if (['create', 'list', 'show'].includes(sub.name())) addRemoteOptions(sub);
}
