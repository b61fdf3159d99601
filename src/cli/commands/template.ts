// `wmark template create|list|show|delete`: settings templates with %name% / [%name%] placeholders.
import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { toTemplateResource, type TemplateResource } from '../../engine/resources.js';
import { createTemplate, deleteTemplate, getTemplate, listTemplates } from '../../engine/templates.js';
import { action } from '../program.js';
import { readJsonInput } from '../read-input.js';
import { addRemoteOptions, positionalBeforeRemote, type RemoteFlags } from './remote-common.js';
import { remoteTemplateCreate, remoteTemplateList, remoteTemplateShow } from './remote-template.js';

export function registerTemplate(program: Command): void {
  const template = program.command('template').description('settings templates with placeholders (%name% or [%name%])');
  template
    .command('create')
    .description('create a template from a JSON file {"name", "description"?, "settings": [...]} ("-" reads stdin)')
    .argument('[file]', 'JSON file, or - for stdin')
    .action(
      action(async (ctx, given: string | undefined, opts: RemoteFlags) => {
        const file = positionalBeforeRemote(given, opts, 'file');
        if (opts.remote !== undefined) return remoteTemplateCreate(ctx, file, opts);
        const body = await readJsonInput(ctx.io, file);
        const engine = await ctx.openEngine();
        const resource = toTemplateResource(createTemplate(engine, body));
        ctx.output.result(resource, (c) => renderTemplate(resource, c));
      }),
    );
  template
    .command('list')
    .description('list templates and the placeholders each needs')
    .action(
      action(async (ctx, opts: RemoteFlags) => {
        if (opts.remote !== undefined) return remoteTemplateList(ctx, opts);
        const engine = await ctx.openEngine();
        const all = listTemplates(engine).map((t) => ({ ...toTemplateResource(t), builtin: t.builtin }));
        ctx.output.result(all, (c) =>
          all
            .map((t) => `${c.bold(t.id)}${t.builtin ? c.dim(' (built-in)') : ''}  ${t.name}\n  placeholders: ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}`)
            .join('\n'),
        );
      }),
    );
  template
    .command('show')
    .description('show one template')
    .argument('[id]')
    .action(
      action(async (ctx, given: string | undefined, opts: RemoteFlags) => {
        const id = positionalBeforeRemote(given, opts, 'id');
        if (opts.remote !== undefined) return remoteTemplateShow(ctx, id, opts);
        const engine = await ctx.openEngine();
        const resource = toTemplateResource(getTemplate(engine, id));
        ctx.output.result(resource, (c) => renderTemplate(resource, c));
      }),
    );
  template
    .command('delete')
    .description('delete a template (watermarks made from it are kept)')
    .argument('<id>')
    .action(
      action(async (ctx, id: string) => {
        const engine = await ctx.openEngine();
        deleteTemplate(engine, id);
        ctx.output.result({ id, deleted: true }, () => `deleted template ${id}`);
      }),
    );
  // Templates on a remote service: create, list and show (the service API has no delete).
  for (const sub of template.commands) if (['create', 'list', 'show'].includes(sub.name())) addRemoteOptions(sub);
}

function renderTemplate(t: TemplateResource, c: ChalkInstance): string {
  return [
    `${c.bold('template')}  ${t.id}`,
    `  name          ${t.name}`,
    ...(t.description ? [`  description   ${t.description}`] : []),
    `  placeholders  ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}`,
    `  settings      ${JSON.stringify(t.settings)}`,
  ].join('\n');
}
