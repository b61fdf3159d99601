// Where wmark's own files are on this machine (package.json, the built-in templates, the docs, the player page, the
// binary): every lookup of a shipped file goes through here. This module sits at a different depth when it runs from
// src/ (tsx), from tsc's dist/ and from the bundle in dist/bundle/, so the root is found by walking up to the package's
// own package.json rather than by counting '../'.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'wmark';

/** The nearest folder at or above `start` whose package.json names this package. */
function findPackageRoot(start: string): string {
  for (let dir = path.resolve(start); ; ) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && manifestName(manifest) === PACKAGE_NAME) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json named "${PACKAGE_NAME}" at or above ${start}: is the install complete?`);
    dir = up;
  }
}

function manifestName(file: string): unknown {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}

const PACKAGE_ROOT: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The shipped files and folders other modules read, by what they are. */
export const PACKAGE_FILES = {
  manifest: path.join(PACKAGE_ROOT, 'package.json'),
  docs: path.join(PACKAGE_ROOT, 'docs'),
  templates: path.join(PACKAGE_ROOT, 'templates'),
  player: path.join(PACKAGE_ROOT, 'templates', 'player'),
  bin: path.join(PACKAGE_ROOT, 'bin', 'wmark.js'),
} as const;
