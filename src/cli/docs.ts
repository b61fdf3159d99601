// Where the user docs are on this machine: the docs/ folder of the installed package (a checkout, a global install,
// npx), so a pointer in help or in a hint opens from any working folder.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_FILES } from '../package-root.js';

/** The absolute path of a doc, e.g. docPath('api.md'). */
export function docPath(name: string): string {
  return path.join(PACKAGE_FILES.docs, name);
}

/**
 * Text with every relative doc reference ("docs/settings.md", "docs/settings.md#identity-and-expiration") turned into
 * the installed file's absolute path. The engine and the error catalogue name docs relative to the package (the same
 * words go to API clients); the CLI prints them where the reader can open them. A reference to a doc this package does
 * not ship is left as written.
 */
export function resolveDocRefs(text: string): string {
  return text.replace(/(?<![\w/.-])docs\/([\w-]+\.md)(#[\w-]+)?/g, (whole, name: string, anchor: string | undefined) =>
    existsSync(docPath(name)) ? `${docPath(name)}${anchor ?? ''}` : whole,
  );
}
