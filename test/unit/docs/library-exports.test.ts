// The library's surface is the one README.md's "Use it from code" documents: the names the package entry exports at
// run time, the types its declarations export, and the package.json exports map that leads to both.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../../harness/fixtures.js';

const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('### Use it from code'), readme.indexOf('\n### ', readme.indexOf('### Use it from code') + 1));

/** The first column of the exports table: `connect(options?)` is connect. */
const documentedValues = [...section.matchAll(/^\| `(\w+)[^`]*` \|/gm)].map((m) => m[1]!).sort();
const documentedTypes = [...(/^Types: ([^\n]+(?:\n[^\n]+)*)\./m.exec(section)?.[1] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();

describe('the library entry', () => {
  it('README documents its values and its types', () => {
    expect(documentedValues).toEqual(['WmarkClient', 'WmarkError', 'connect']);
    expect(documentedTypes.length).toBeGreaterThan(5);
  });

  it('exports at run time exactly the documented values', async () => {
    const entry = await import('../../../src/index.js');
    expect(Object.keys(entry).sort()).toEqual(documentedValues);
  });

  it('exports as types exactly the documented types', () => {
    const source = readFileSync(path.join(REPO, 'src/index.ts'), 'utf8');
    const types = [...source.matchAll(/export type \{([^}]+)\}/g)]
      .flatMap((m) =>
        m[1]!
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean),
      )
      .sort();
    expect(types).toEqual(documentedTypes);
  });

  it("package.json's exports map leads `import 'wmark'` to the built entry and its declarations", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    expect([pkg.main, pkg.types]).toEqual(['./dist/index.js', './dist/index.d.ts']);
    const build = JSON.parse(readFileSync(path.join(REPO, 'tsconfig.build.json'), 'utf8'));
    expect([build.compilerOptions.rootDir, build.compilerOptions.outDir, build.compilerOptions.declaration]).toEqual(['src', 'dist', true]);
  });
});
