// Parses a watermark's expiration from the CLI (`--expiration`) or an API body into Unix seconds.
//
// The API's `expiration` is Unix time in seconds (docs/settings.md, "Identity and
// expiration"), while signed URLs carry milliseconds; a millisecond value pasted where
// seconds belong would mean "in the year 55,000", so such values are refused with a hint
// instead of being accepted and silently never expiring.
import { parseDuration } from './duration.js';

export type ExpirationResult = { ok: true; unixSeconds: number } | { ok: false; message: string; hint?: string };

/** Unix seconds above this are almost certainly milliseconds (1e11 s is the year 5138). */
const MILLISECONDS_THRESHOLD = 1e11;
/** How far ahead an expiration may be; further than this is more likely a typo than intent. */
const MAX_EXPIRATION_AHEAD_MS = 3653 * 24 * 3600 * 1000;

// A calendar date is required; time and offset are optional. A time without an offset is
// local time, as in ECMAScript's Date.parse.
const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

const FORMS_HINT = 'use Unix seconds (e.g. 1893456000), an ISO 8601 date/time (e.g. 2030-01-01T00:00:00Z) or a duration (e.g. 30m, 12h, 7d, 1d12h)';

/** The CLI flag: Unix seconds, an ISO 8601 date/time, or a duration from now (`30s`..`2w`, `1d12h`). */
export function parseExpirationInput(input: string, nowMs: number): ExpirationResult {
  const label = '--expiration';
  const text = input.trim();
  if (text === '') return { ok: false, message: `${label}: expected a time, got an empty value`, hint: FORMS_HINT };

  if (/^[0-9]+$/.test(text)) return checkUnixSeconds(label, Number(text), nowMs);

  const duration = parseDuration(text);
  if (duration.ok || duration.reason === 'repeated-unit') {
    if (!duration.ok) return { ok: false, message: `${label}: ${JSON.stringify(text)} repeats a unit`, hint: 'write each unit once, e.g. 1d12h' };
    if (duration.ms === 0) return { ok: false, message: `${label}: a duration of zero is not in the future` };
    // Round up so the URL lives at least as long as asked.
    return checkWindow(label, text, Math.ceil((nowMs + duration.ms) / 1000), nowMs);
  }

  const iso = parseIsoMs(text);
  if (iso !== undefined) {
    if (Number.isNaN(iso)) return { ok: false, message: `${label}: ${JSON.stringify(text)} is not a valid date/time` };
    return checkWindow(label, text, iso / 1000, nowMs);
  }

  return {
    ok: false,
    message: `${label}: expected Unix time in seconds, an ISO 8601 date/time or a duration, got ${JSON.stringify(text)}`,
    hint: FORMS_HINT,
  };
}

/** The API body field: a number of Unix seconds (integer or fractional), or an ISO 8601 string. */
export function parseExpirationField(value: unknown, nowMs: number): ExpirationResult {
  const label = 'expiration';
  if (typeof value === 'number') return checkUnixSeconds(label, value, nowMs);
  if (typeof value === 'string') {
    const iso = parseIsoMs(value.trim());
    if (iso !== undefined && !Number.isNaN(iso)) return checkWindow(label, value, iso / 1000, nowMs);
    return {
      ok: false,
      message: `${label}: expected Unix time in seconds (a number) or an ISO 8601 date/time, got ${describe(value)}`,
    };
  }
  return { ok: false, message: `${label}: expected Unix time in seconds, got ${describe(value)}` };
}

function checkUnixSeconds(label: string, seconds: number, nowMs: number): ExpirationResult {
  if (!Number.isFinite(seconds) || seconds <= 0) {
    return { ok: false, message: `${label}: expected Unix time in seconds, got ${describe(seconds)}` };
  }
  if (seconds > MILLISECONDS_THRESHOLD) {
    return {
      ok: false,
      message: `${label}: ${String(seconds)} looks like milliseconds; expected Unix time in seconds`,
      hint: `did you mean ${Math.floor(seconds / 1000)}?`,
    };
  }
  return checkWindow(label, String(seconds), seconds, nowMs);
}

function checkWindow(label: string, shown: string, unixSeconds: number, nowMs: number): ExpirationResult {
  const ms = unixSeconds * 1000;
  if (ms <= nowMs) {
    return {
      ok: false,
      message: `${label}: ${shown} (${isoOf(ms)}) is not in the future (now is ${isoOf(nowMs)})`,
    };
  }
  if (ms > nowMs + MAX_EXPIRATION_AHEAD_MS) {
    return {
      ok: false,
      message: `${label}: ${shown} (${isoOf(ms)}) is more than 10 years ahead`,
    };
  }
  return { ok: true, unixSeconds };
}

/** Milliseconds for an ISO 8601 string; undefined when it isn't ISO-shaped, NaN when it is but is no real time. */
function parseIsoMs(text: string): number | undefined {
  const match = ISO_PATTERN.exec(text);
  if (match === null) return undefined;
  const part = (i: number): string => match[i] ?? '';
  const [y, mo, d] = [Number(part(1)), Number(part(2)), Number(part(3))];
  const [hour, minute, second, offset] = [part(4), part(5), part(6), part(7)];
  // Date.parse rolls 2030-02-30 over to March 2 instead of refusing it.
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return Number.NaN;
  if (hour !== '' && (Number(hour) > 23 || Number(minute) > 59 || (second !== '' && Number(second) > 59))) {
    return Number.NaN;
  }
  // Normalise to the ECMAScript date-time string format so parsing doesn't rely on V8 leniency.
  let normalised = text.replace(/^(.{10})[t ]/, '$1T').replace(/z$/, 'Z');
  if (offset !== '' && /^[+-]\d{4}$/.test(offset)) {
    normalised = `${normalised.slice(0, -5)}${offset.slice(0, 3)}:${offset.slice(3)}`;
  }
  return Date.parse(normalised);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isoOf(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? 'invalid date' : date.toISOString();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
    return `string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
