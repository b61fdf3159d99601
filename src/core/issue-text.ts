// How validation issues name places and values: dotted paths, a short description of a rejected value, and the
// nearest known key for a typo. Shared by settings, templates, batches, request bodies and config.
import { z } from 'zod';

export type Result<T> = { ok: true; value: T } | { ok: false; issues: string[] };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

export function quote(s: string): string {
  const chars = Array.from(s);
  // Long values would drown the message; the start is enough to recognise the input.
  return chars.length > 60 ? `${JSON.stringify(chars.slice(0, 60).join(''))}...` : JSON.stringify(s);
}

export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `the string ${quote(v)}`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Closest candidate within edit distance 2, ignoring case (FontColor, fontcolour -> fontColor). */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(key.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// zod issues in the same style

/**
 * A catchall for z.object that refuses each unknown key with its own issue (z.strictObject would report them all as
 * one). `message` gets the key: zod words an issue once its path is complete, so the key is the path's last step.
 */
export function rejectKey(message: (key: string) => string) {
  return z.unknown().refine(() => false, { error: (issue) => message(String(issue.path?.at(-1))) });
}

/**
 * zod reports an object's unknown keys, and rules spanning fields, after its fields. This lists issues in the order
 * the keys are declared instead, unknown keys first, so a misspelt key comes right before the "required" it causes.
 * keysAt(depth) gives the declared keys of the object at that depth of the paths; ties keep zod's order.
 */
export function inDeclaredOrder<T extends { path: readonly PropertyKey[] }>(issues: readonly T[], keysAt: (depth: number) => readonly string[]): T[] {
  const rank = (issue: T) => issue.path.map((key, depth) => keysAt(depth).indexOf(String(key)));
  return issues.toSorted((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    for (let depth = 0; depth < Math.min(ra.length, rb.length); depth++) if (ra[depth] !== rb[depth]) return ra[depth]! - rb[depth]!;
    return ra.length - rb.length;
  });
}

/** zod issues as `path: message` lines under `base`; with no base, the top-level key is shown as it is. */
export function issueLines(issues: readonly { path: readonly PropertyKey[]; message: string }[], base = ''): string[] {
  return issues.map(({ path, message }) => {
    const at = path.reduce<string>((p, key) => (p === '' ? String(key) : joinPath(p, typeof key === 'number' ? key : String(key))), base);
    return at === '' ? message : `${at}: ${message}`;
  });
}
