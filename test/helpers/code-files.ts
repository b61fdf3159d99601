// The repository's own code files under a folder, for tests that read the source itself (generated output and
// installed packages left out).
import { readdirSync } from 'node:fs';
import path from 'node:path';

const NOT_SOURCE = ['node_modules', 'out', 'dist'];

/** Every file under `dir` whose name matches `names` (default: TypeScript), recursively. */
export function codeFiles(dir: string, names = /\.ts$/): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return NOT_SOURCE.includes(e.name) ? [] : codeFiles(full, names);
    return names.test(e.name) ? [full] : [];
  });
}
