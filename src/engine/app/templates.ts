// Settings templates: user templates in the store plus the built-in ones shipped in templates/*.json.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { parseTemplateBody, type TemplateOrder } from '../../core/template-schema.js';
import { PACKAGE_FILES } from '../../package-root.js';
import type { TemplateResource, Templates } from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import type { TemplateRecord } from '../state/state-store.js';
import { templateBody } from './api-bodies.js';

const BUILTIN_TEMPLATE_DIR = PACKAGE_FILES.templates;

/** A template saved without a name (as API 1.0 allows) goes by its id, so every list shows a name. */
function named(id: string, body: TemplateOrder, createdOn: number): TemplateRecord {
  return { id, ...body, name: body.name ?? id, createdOn };
}

let builtinCache: TemplateRecord[] | undefined;

/** Built-in templates: id = file name without .json; validated like user templates (a broken one is a packaging bug). */
function builtinTemplates(): TemplateRecord[] {
  builtinCache ??= readdirSync(BUILTIN_TEMPLATE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const body = JSON.parse(readFileSync(path.join(BUILTIN_TEMPLATE_DIR, file), 'utf8')) as unknown;
      return named(file.replace(/\.json$/, ''), parseTemplateBody(body), 0);
    });
  return builtinCache;
}

export async function createTemplate(engine: Engine, order: TemplateOrder): Promise<TemplateRecord> {
  const record = named(engine.newId(), order, engine.now());
  await engine.store.insertTemplate(record);
  return record;
}

export async function findTemplate(engine: Engine, id: string): Promise<TemplateRecord | undefined> {
  return builtinTemplates().find((t) => t.id === id) ?? (await engine.store.getTemplate(id));
}

export async function getTemplate(engine: Engine, id: string): Promise<TemplateRecord> {
  const t = await findTemplate(engine, id);
  if (!t) throw new WmarkError('TEMPLATE_NOT_FOUND', `no template with id "${id}"`, { hint: 'See `wmark template list`.' });
  return t;
}

async function listTemplates(engine: Engine): Promise<(TemplateRecord & { builtin: boolean })[]> {
  return [...builtinTemplates().map((t) => ({ ...t, builtin: true })), ...(await engine.store.listTemplates()).map((t) => ({ ...t, builtin: false }))];
}

async function deleteTemplate(engine: Engine, id: string): Promise<void> {
  if (builtinTemplates().some((t) => t.id === id)) throw new WmarkError('TEMPLATE_BUILTIN', `"${id}" is a built-in template and cannot be deleted`);
  if (!(await engine.store.deleteTemplate(id))) throw new WmarkError('TEMPLATE_NOT_FOUND', `no template with id "${id}"`);
}

/** Templates as a service: the API's shapes, and delete, which only a local engine offers. */
export class LocalTemplates implements Templates {
  constructor(private readonly engine: Engine) {}

  async create(order: TemplateOrder): Promise<TemplateResource> {
    return templateBody(await createTemplate(this.engine, order));
  }

  async list(): Promise<TemplateResource[]> {
    return (await listTemplates(this.engine)).map(templateBody);
  }

  async get(id: string): Promise<TemplateResource> {
    const t = await findTemplate(this.engine, id);
    if (!t) throw new WmarkError('TEMPLATE_NOT_FOUND', `no template with id "${id}"`);
    return templateBody(t);
  }

  delete(id: string): Promise<void> {
    return deleteTemplate(this.engine, id);
  }
}
