// Comments that send the reader to a section of the docs (`README.md, "Security model"`, `docs/api.md "Templates"`,
// `docs/api.md#authentication`) name a section that exists: a renamed or removed heading fails here, not in a
// reader's search. The docs' own cross-links are checked in links.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../../harness/fixtures.js';
import { codeFiles } from '../../helpers/code-files.js';
import { anchorOf, anchors } from '../../helpers/markdown.js';

const SOURCES = ['src', 'harness', 'test', 'bench', 'scripts'];
const CODE = /\.(ts|mts|mjs|js|sh)$/;

/** Comment text with wrapped lines joined, so a title broken over two comment lines is read whole. */
function joined(source: string): string {
  return source.replace(/\n[ \t]*(?:\/\/|\*|#)[ \t]*/g, ' ');
}

/** Every section a text cites: the document (README.md or docs/NAME.md) and the cited title or #anchor. */
function citations(text: string): { doc: string; anchor: string; cited: string }[] {
  const out: { doc: string; anchor: string; cited: string }[] = [];
  const doc = (name: string) => (name.startsWith('README') ? 'README.md' : name);
  for (const m of joined(text).matchAll(
    /\b(README(?:\.md)?|docs\/[\w-]+\.md)(?:'s)?,?(?:\s+[a-z]+){0,3}(?:\s+\(?|\s*\()\s*(?:section\s+)?["“]([^"”\n]{2,100})["”]/g,
  ))
    out.push({ doc: doc(m[1]!), anchor: anchorOf(m[2]!.replace(/`/g, '')), cited: `${m[1]} "${m[2]}"` });
  for (const m of text.matchAll(/\b(README(?:\.md)?|docs\/[\w-]+\.md)#([\w-]+)/g)) out.push({ doc: doc(m[1]!), anchor: m[2]!, cited: m[0] });
  return out;
}

describe('sections cited in comments', () => {
  it('reads the forms the code uses (the checker itself works)', () => {
    const text = `// see README.md, "Security model" and README "Rolling\n// restarts", README's "Use it", docs/api.md "The \`x\` route" or docs/api.md#templates;\n// README ("Limits"), docs/forensic.md measures it ("Layouts")`;
    expect(citations(text).map((c) => `${c.doc}#${c.anchor}`)).toEqual([
      'README.md#security-model',
      'README.md#rolling-restarts',
      'README.md#use-it',
      'docs/api.md#the-x-route',
      'README.md#limits',
      'docs/forensic.md#layouts',
      'docs/api.md#templates',
    ]);
  });

  it('every cited README/docs section exists', () => {
    const headings = new Map<string, Set<string>>();
    const broken: string[] = [];
    let count = 0;
    for (const file of SOURCES.flatMap((dir) => codeFiles(path.join(REPO, dir), CODE))) {
      for (const c of citations(readFileSync(file, 'utf8'))) {
        if (file.endsWith('cited-sections.test.ts')) continue;
        count++;
        const doc = path.join(REPO, c.doc);
        if (!headings.has(c.doc)) headings.set(c.doc, existsSync(doc) ? anchors(readFileSync(doc, 'utf8')) : new Set());
        if (!headings.get(c.doc)!.has(c.anchor)) broken.push(`${path.relative(REPO, file)}: ${c.cited} (no heading #${c.anchor} in ${c.doc})`);
      }
    }
    expect(count).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });
});
