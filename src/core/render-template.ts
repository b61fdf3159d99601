// Settings-template placeholders (docs/api.md, "Templates"): discovery, one-pass substitution, then re-validation.
import type { ApiVersion } from './api-version.js';
import type { Result } from './issue-text.js';
import { checkMappings, placeholderRegExp, templatePlaceholders } from './placeholders.js';
import { parseSettings } from './setting-schema.js';
import type { Setting, TemplateSetting } from './setting-types.js';

export interface TemplateRenderOptions {
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
  opts: TemplateRenderOptions = {},
): Result<Setting[]> {
  const mappingsPath = opts.mappingsPath ?? 'settingsTemplateMapping.mappings';
  const issues = checkMappings(templatePlaceholders(settings), mappings, mappingsPath);
  if (issues.length > 0) return { ok: false, issues };
  const values = new Map(Object.entries(mappings as Record<string, string>));

  const rendered = settings.map((s) => ({ ...s, content: substitute(s.content, values) }));
  return parseSettings(rendered, { apiVersion, path: opts.path ?? 'template.settings' });
}
