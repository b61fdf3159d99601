// The user docs stay inside the repository: every relative link and picture in README.md and docs/*.md names a file
// that exists (and a heading that exists, for #anchors), and nothing a user reads points at the design notes that are
// not shipped (DESIGN.md, SPEC.md, "SPEC 2.2").
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../../harness/fixtures.js';
import { codeFiles } from '../../helpers/code-files.js';
import { anchors } from '../../helpers/markdown.js';

const DOCS = [
  'README.md',
  ...readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Links and images outside code blocks and inline code: `[text](target)`. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('links in the user docs', () => {
  it('finds the docs and their links (the checker itself works)', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/settings.md']));
    expect(links('see [a](b.md#c) and ![p](img/x.png) but not `[x](y)`\n```\n[z](w)\n```')).toEqual(['b.md#c', 'img/x.png']);
    expect(anchors('## Identity and expiration\n### `GET /{v}`: one')).toEqual(new Set(['identity-and-expiration', 'get-v-one']));
  });

  for (const doc of DOCS) {
    it(`${doc}: every relative link resolves to a file (and heading) in the repository`, () => {
      const text = readFileSync(path.join(REPO, doc), 'utf8');
      const relative = links(text).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
      if (doc.startsWith('docs/')) expect(relative.length).toBeGreaterThan(0);
      const broken: string[] = [];
      for (const link of relative) {
        const [file = '', anchor] = link.split('#');
        const target = file === '' ? path.join(REPO, doc) : path.resolve(path.dirname(path.join(REPO, doc)), decodeURI(file));
        if (!target.startsWith(REPO + path.sep) || !existsSync(target)) {
          broken.push(`${link} (no file ${path.relative(REPO, target)})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && statSync(target).isFile() && !anchors(readFileSync(target, 'utf8')).has(anchor)) {
          broken.push(`${link} (no heading #${anchor} in ${path.relative(REPO, target)})`);
        }
      }
      expect(broken).toEqual([]);
    });

    it(`${doc}: points at no document outside the repository`, () => {
      expect(readFileSync(path.join(REPO, doc), 'utf8')).not.toMatch(/DESIGN\.md|SPEC\.md|\bSPEC \d|\bDESIGN \d|DESIGN\.md §/);
    });
  }

  it('no user-visible string in src (help, errors, hints) cites SPEC or DESIGN', () => {
    const offenders: string[] = [];
    for (const file of codeFiles(path.join(REPO, 'src'))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, '');
          if (/^\s*(\*|\/\*)/.test(line)) return;
          if (/['"`][^'"`]*\b(SPEC|DESIGN)\b[^'"`]*['"`]/.test(code)) offenders.push(`${path.relative(REPO, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
