// Rules of the source that no compiler holds: a name exported from src/ means one thing (one declaration, in one
// file); the code explains itself, citing no issue and no section of a contract the repository does not ship; and every
// code of the error catalogue is one that wmark raises (a code nobody raises is a promise to callers that nothing keeps).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';
import { codeFiles } from '../helpers/code-files.js';

const SRC = path.resolve('src');

const files = codeFiles(SRC).map((file) => ({ file: path.relative(SRC, file), text: readFileSync(file, 'utf8') }));

/** Names a file declares and exports (not what it re-exports from another file). */
function exportedDeclarations(text: string): string[] {
  const found = text.matchAll(
    /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|interface|type|const|let|enum)\s+([A-Za-z_$][\w$]*)/gm,
  );
  return [...new Set([...found].map((m) => m[1]!))];
}

describe('source names', () => {
  it('reads an exported declaration of each kind, and not a re-export', () => {
    const text = [
      'export interface A {}',
      'export type B = string;',
      'export async function c() {}',
      'export const D = 1;',
      'export class E {}',
      'export function c(x: number): void;',
      "export { F } from './f.js';",
      "export type { G } from './g.js';",
    ].join('\n');
    expect(exportedDeclarations(text)).toEqual(['A', 'B', 'c', 'D', 'E']);
  });

  it('gives every exported name of src/ one declaration, in one file', () => {
    const where = new Map<string, string[]>();
    for (const { file, text } of files) for (const name of exportedDeclarations(text)) where.set(name, [...(where.get(name) ?? []), file]);
    const twice = [...where].filter(([, at]) => at.length > 1).map(([name, at]) => `${name}: ${at.join(', ')}`);
    expect(twice).toEqual([]);
  });

  it('cites no issue number and no section of the contract the repository does not ship, in any code of the repository', () => {
    const cites = /\b(?:SPEC|DESIGN)(?:\.md)?\s*(?:§|\d)|\bFORENSIC\.md|\bSTYLE\.md|\b[Ii]ssues? #?\d+\b/;
    const code = ['src', 'harness', 'test', 'bench', 'scripts'].flatMap((dir) => codeFiles(path.resolve(dir), /\.(ts|mts|mjs|sh)$/));
    // The tests that name the forms they refuse.
    const rules = [path.resolve('test/unit/docs/links.test.ts'), path.resolve('test/unit/source-names.test.ts')];
    const citing = code
      .filter((file) => !rules.includes(file))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, i) => (cites.test(line) ? [`${path.relative(process.cwd(), file)}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(citing).toEqual([]);
  });

  it('raises every code of the error catalogue somewhere in src/', () => {
    const others = files.filter((f) => f.file !== path.join('core', 'errors.ts'));
    const unraised = Object.keys(ERRORS).filter((code) => !others.some((f) => f.text.includes(`'${code}'`) || f.text.includes(`"${code}"`)));
    expect(unraised).toEqual([]);
  });
});
