// Template placeholders (docs/api.md, "Templates"): `%name%` (1.0) and `[%name%]` (2.0), found and listed.
import { describeValue, isPlainObject, joinPath } from './issue-text.js';
import type { TemplateSetting } from './setting-types.js';

const NAME = '[A-Za-z_][A-Za-z0-9_.-]{0,63}';

/**
 * Placeholder grammar: `[%name%]` (2.0) is tried first so its brackets are consumed with it,
 * otherwise `%name%` (1.0). Group 1 or group 2 holds the name.
 * Returns a fresh global RegExp each call because global regexps carry lastIndex state.
 */
export function placeholderRegExp(): RegExp {
  return new RegExp(`\\[%(${NAME})%\\]|%(${NAME})%`, 'g');
}

export function hasPlaceholder(text: string): boolean {
  return placeholderRegExp().test(text);
}

/** Placeholder names in `text` (either notation), unique, in order of first appearance. */
export function findPlaceholders(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(placeholderRegExp())) {
    const name = m[1] ?? m[2];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

/** Placeholder names used by any content field of the template, unique, in order of first appearance. */
export function templatePlaceholders(settings: readonly TemplateSetting[]): string[] {
  const names: string[] = [];
  for (const s of settings) {
    for (const name of findPlaceholders(s.content)) if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * Problems with a template's mappings: not an object, a placeholder without a value, a value no placeholder
 * uses, a value that is not a string. Each issue starts with `path` (e.g. "--map" or "rows.csv line 4").
 */
export function checkMappings(placeholders: readonly string[], mappings: unknown, path: string): string[] {
  if (!isPlainObject(mappings)) return [`${path}: expected an object of placeholder names to string values, got ${describeValue(mappings)}`];
  const issues: string[] = [];
  for (const name of placeholders) {
    // Own properties only: a placeholder named "constructor" must not find Object.prototype's.
    if (!Object.hasOwn(mappings, name)) issues.push(`${path}: missing value for placeholder "${name}"`);
  }
  for (const [name, value] of Object.entries(mappings)) {
    if (!placeholders.includes(name)) issues.push(`${path}: mapping ${JSON.stringify(name)} is not used by template`);
    else if (typeof value !== 'string') issues.push(`${joinPath(path, name)}: expected a string value, got ${describeValue(value)}`);
  }
  return issues;
}
