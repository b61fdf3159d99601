// Markdown as GitHub shows it, for the tests that check what the docs and the code's comments point at.

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+)$/gm)) out.add(anchorOf(m[1]!));
  return out;
}

/** The anchor GitHub gives a heading with this text. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
