// The forensic bench's parts and `--only`: which targets a run measures (the default runs them all), so one target
// (e.g. F9 at 720p) can be measured without the hour the rest takes.

/** Parts in report order. f2b, f7b, f6b: the hard leaks F2', F7', F6' (2-minute excerpts, three colluders, null trials on real copies); f9s: F9 step by step, run only when named. */
export const PARTS = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f2b', 'f9', 'f9s', 'f10', 'f7b', 'f6b'] as const;
export type Part = (typeof PARTS)[number];

/** Parts a run without --only leaves out (diagnostics, not targets). */
const NOT_BY_DEFAULT: readonly Part[] = ['f9s'];

/** `--only f9,F6'` -> those parts (F2' may be written f2b or f2'); absent: null (the default set). */
export function parseOnly(value: string | true | undefined): Set<Part> | null {
  if (value === undefined) return null;
  if (value === true) throw new Error(`--only: expected a comma-separated list of parts (${PARTS.join(', ')})`);
  const names = value
    .split(',')
    .map((x) => x.trim().toLowerCase().replace(/'$/, 'b'))
    .filter(Boolean);
  const unknown = names.filter((x) => !(PARTS as readonly string[]).includes(x));
  if (unknown.length || !names.length) throw new Error(`--only: unknown part(s) ${unknown.join(', ') || '(none given)'}; parts: ${PARTS.join(', ')}`);
  return new Set(names as Part[]);
}

/** Whether a run with this --only set measures `part`. */
export function wants(only: Set<Part> | null, part: Part): boolean {
  return only ? only.has(part) : !NOT_BY_DEFAULT.includes(part);
}
