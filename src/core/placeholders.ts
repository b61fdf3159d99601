// Template placeholders (SPEC 2.3): `%name%` (1.0) and `[%name%]` (2.0), found and listed.
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
