// Durations as people type them: `90s`, `5m`, `1h30m`, `1.5s`, `250ms`, `7d`, `2w`. One parser for --timeout,
// --interval and the duration form of --expiration.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;

export type DurationParse = { ok: true; ms: number } | { ok: false; reason: 'invalid' | 'repeated-unit' };

/** Milliseconds of a duration with units; a bare number is not a duration here (callers decide what it means). */
export function parseDuration(text: string): DurationParse {
  const t = text.trim();
  if (!WHOLE.test(t)) return { ok: false, reason: 'invalid' };
  const seen = new Set<string>();
  let ms = 0;
  for (const [, amount, unit] of t.matchAll(PART)) {
    // `1h1h` is more likely a typo than a way to write 2h.
    if (seen.has(unit!)) return { ok: false, reason: 'repeated-unit' };
    seen.add(unit!);
    ms += Number(amount) * UNIT_MS[unit!]!;
  }
  return Number.isFinite(ms) ? { ok: true, ms } : { ok: false, reason: 'invalid' };
}
