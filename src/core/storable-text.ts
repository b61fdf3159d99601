// Text every state store can hold, checked once at the edge for each query parameter, header value and JSON string of a
// request: PostgreSQL refuses NUL in text outright (SQLite keeps it, so the two would answer differently), a lone
// surrogate has no UTF-8 form, and bytes that are not UTF-8 (an overlong NUL among them) would be read as U+FFFD, which
// silently makes them another string. Each is a 400 naming the field, whichever store sits behind.
import { WmarkError } from './errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();
// With the `u` flag a surrogate pair is one code point, so only a surrogate without its partner matches.
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `text` cannot be stored, or undefined when it can. */
function unstorableReason(text: string): string | undefined {
  if (text.includes('\0')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate';
  return undefined;
}

function refuse(field: string, reason: string): never {
  throw new WmarkError('TEXT_NOT_STORABLE', `${field}: ${reason}`);
}

/** Throws TEXT_NOT_STORABLE naming `field` when `text` cannot be stored. */
function checkStorableText(field: string, text: string): void {
  const reason = unstorableReason(text);
  if (reason) refuse(field, reason);
}

/** Bytes as UTF-8 text, or TEXT_NOT_STORABLE naming `field` when they are not UTF-8 (overlong forms included). */
export function decodeUtf8(field: string, bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return refuse(field, 'is not valid UTF-8');
  }
}

/** Checks every string of a parsed JSON value, names and values alike, naming the first bad one by its path. */
export function checkStorableJson(value: unknown, path = 'body'): void {
  if (typeof value === 'string') checkStorableText(path, value);
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkStorableJson(item, `${path}[${i}]`);
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) {
      checkStorableText(`${path} field name`, name);
      checkStorableJson(item, path === 'body' ? name : `${path}.${name}`);
    }
  }
}

/** A query component's bytes: `%XX` escapes as the byte they name, `+` as a space, other text as its UTF-8. */
function queryBytes(raw: string): Uint8Array {
  const bytes: number[] = [];
  for (const piece of raw.split(/(%[0-9a-fA-F]{2})/)) {
    if (/^%[0-9a-fA-F]{2}$/.test(piece)) bytes.push(parseInt(piece.slice(1), 16));
    else bytes.push(...encoder.encode(piece.replaceAll('+', ' ')));
  }
  return Uint8Array.from(bytes);
}

/** A raw query component as it would be decoded, or TEXT_NOT_STORABLE naming `field`. */
function queryText(field: string, raw: string): string {
  checkStorableText(field, raw);
  const text = decodeUtf8(field, queryBytes(raw));
  checkStorableText(field, text);
  return text;
}

/** Checks each parameter of a raw query string (names and values) as it would be decoded. */
export function checkStorableQuery(rawQuery: string): void {
  for (const pair of rawQuery.split('&')) {
    const at = pair.indexOf('=');
    const name = queryText('query parameter name', at < 0 ? pair : pair.slice(0, at));
    if (at >= 0) queryText(`query parameter "${name}"`, pair.slice(at + 1));
  }
}

/** Checks each header value (names are tokens the HTTP parser has already held to ASCII). */
export function checkStorableHeaders(headers: Readonly<Record<string, string | undefined>>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) checkStorableText(`header ${name}`, value);
  }
}
