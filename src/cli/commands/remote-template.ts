// `wmark template create|list|show --remote`: settings templates on a remote service (/{v}/templates, DESIGN 3).
import type { ChalkInstance } from 'chalk';
import { WmarkError } from '../../core/errors.js';
import type { RemoteTemplate } from '../../remote/schemas.js';
import type { CliContext } from '../context.js';
import { readJsonInput } from '../read-input.js';
import { openRemote, type RemoteFlags } from './remote-common.js';

export async function remoteTemplateCreate(ctx: CliContext, file: string, opts: RemoteFlags): Promise<number> {
  const body = await readJsonInput(ctx.io, file);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new WmarkError('TEMPLATE_INVALID', `${file}: expected a JSON object {"name", "description"?, "settings": [...]}`);
  const { session, api } = await openRemote(ctx, opts);
  const template = await session.createTemplate(await session.resolveApi(api), body);
  ctx.output.result(template, (c) => renderRemoteTemplate(template, c));
  return 0;
}

export async function remoteTemplateList(ctx: CliContext, opts: RemoteFlags): Promise<number> {
  const { session, api } = await openRemote(ctx, opts);
  const all = await session.listTemplates(await session.resolveApi(api));
  ctx.output.result(all, (c) =>
    all.length
      ? all.map((t) => `${c.bold(t.id)}${t.builtin === true ? c.dim(' (built-in)') : ''}  ${t.name ?? ''}${t.placeholders ? `\n  placeholders: ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}` : ''}`).join('\n')
      : c.dim(`no templates on ${session.baseUrl}`),
  );
  return 0;
}

export async function remoteTemplateShow(ctx: CliContext, id: string, opts: RemoteFlags): Promise<number> {
  const { session, api } = await openRemote(ctx, opts);
  const template = await session.getTemplate(await session.resolveApi(api), id);
  ctx.output.result(template, (c) => renderRemoteTemplate(template, c));
  return 0;
}

function renderRemoteTemplate(t: RemoteTemplate, c: ChalkInstance): string {
  return [
    `${c.bold('template')}  ${t.id}`,
    ...(t.name ? [`  name          ${t.name}`] : []),
    ...(t.description ? [`  description   ${t.description}`] : []),
    ...(t.placeholders ? [`  placeholders  ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}`] : []),
    ...(t.settings ? [`  settings      ${JSON.stringify(t.settings)}`] : []),
  ].join('\n');
}
