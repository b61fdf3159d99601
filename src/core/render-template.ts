// Settings-template placeholders (SPEC 2.3): discovery, one-pass substitution, then re-validation.
import type { ApiVersion } from './api-version.js';
import { describeValue, joinPath, type Result } from './issue-text.js';
import { placeholderRegExp, templatePlaceholders } from './placeholders.js';
import { parseSettings } from './setting-schema.js';
import type { Setting, TemplateSetting } from './setting-types.js';

export interface RenderOptions {
  /** Prefix of issues about the rendered settings; defaults to `template.settings`. */
  path?: string;
  /** Prefix of issues about the mappings; defaults to `settingsTemplateMapping.mappings`. */
  mappingsPath?: string;
}

/**
 * Replaces every placeholder in one left-to-right pass, so text coming from a mapping value is
 * never scanned again: a viewer name like "%email%" is drawn as typed, not expanded.
 */
function substitute(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(placeholderRegExp(), (whole: string, bracketed?: string, plain?: string) => {
    const value = values.get(bracketed ?? plain ?? '');
    return value ?? whole;
  });
}

/**
 * Renders a template's settings with the request's mappings and validates the result exactly like
 * explicit settings for `apiVersion` (FORENSIC content is decoded with that version's encoding).
 * Mapping problems (missing, unused, not a string) are reported first and alone, since rendering
 * with a hole would only produce follow-on noise.
 */
export function renderTemplate(
  settings: readonly TemplateSetting[],
  mappings: unknown,
  apiVersion: ApiVersion,
  opts: RenderOptions = {},
): Result<Setting[]> {
  const mappingsPath = opts.mappingsPath ?? 'settingsTemplateMapping.mappings';
  if (typeof mappings !== 'object' || mappings === null || Array.isArray(mappings)) {
    return { ok: false, issues: [`${mappingsPath}: expected an object of placeholder names to string values, got ${describeValue(mappings)}`] };
  }
  const record = mappings as Record<string, unknown>;
  const used = templatePlaceholders(settings);
  const issues: string[] = [];
  const values = new Map<string, string>();

  for (const name of used) {
    // Own properties only: a placeholder named "constructor" must not find Object.prototype's.
    if (!Object.hasOwn(record, name)) issues.push(`${mappingsPath}: missing value for placeholder "${name}"`);
  }
  for (const [name, value] of Object.entries(record)) {
    if (!used.includes(name)) {
      issues.push(`${mappingsPath}: mapping ${JSON.stringify(name)} is not used by template`);
    } else if (typeof value !== 'string') {
      issues.push(`${joinPath(mappingsPath, name)}: expected a string value, got ${describeValue(value)}`);
    } else values.set(name, value);
  }
  if (issues.length > 0) return { ok: false, issues };

  const rendered = settings.map((s) => ({ ...s, content: substitute(s.content, values) }));
  return parseSettings(rendered, { apiVersion, path: opts.path ?? 'template.settings' });
}
