// The 16-bit FORENSIC payload and its wire forms (see docs/settings.md): 2 ASCII characters in API 1.0, base64 of
// 2 bytes in 2.0.
import type { ApiVersion } from './api-version.js';
import { quote } from './issue-text.js';

const BASE64_STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Strict base64 decode (one alphabet per string, optional exact padding, zero spare bits). */
function decodeBase64(text: string): number[] | string {
  const invalid = 'not valid base64';
  const body = text.replace(/={1,2}$/, '');
  const padding = text.length - body.length;
  if (body.length % 4 === 1) return invalid;
  if (padding > 0 && (body.length + padding) % 4 !== 0) return invalid;
  const alphabet = /[-_]/.test(body) ? BASE64_URL : BASE64_STANDARD;
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const ch of body) {
    const v = alphabet.indexOf(ch);
    if (v < 0) return invalid;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((acc >> bits) & 0xff);
      acc &= (1 << bits) - 1;
    }
  }
  // Non-zero spare bits would let two strings ("QUI", "QUJ") name one payload; a client building
  // per-viewer payloads that way would silently hand two viewers the same mark.
  if (acc !== 0) return 'not canonical base64: unused low bits of the last character must be zero';
  return bytes;
}

export type ForensicDecode = { ok: true; payload: number } | { ok: false; message: string };

/** Turns FORENSIC content into its 16-bit payload: 1.0 is 2 ASCII characters, 2.0 is base64 of 2 bytes. */
export function decodeForensicContent(content: string, apiVersion: ApiVersion): ForensicDecode {
  if (apiVersion === '1.0') {
    const chars = Array.from(content);
    const ascii = chars.every((c) => (c.codePointAt(0) ?? 128) <= 127);
    const c0 = content.charCodeAt(0);
    const c1 = content.charCodeAt(1);
    if (chars.length === 2 && ascii) return { ok: true, payload: (c0 << 8) | c1 };
    const why = ascii ? `${chars.length} characters` : 'non-ASCII characters';
    return {
      ok: false,
      message: `expected exactly 2 ASCII characters (16-bit payload, API 1.0, e.g. "AB"), got ${quote(content)} (${why})`,
    };
  }
  const expected = 'expected base64 of exactly 2 bytes (16-bit payload, API 2.0, standard or URL-safe alphabet, padding optional, e.g. "QUI=")';
  const bytes = decodeBase64(content);
  if (typeof bytes === 'string') return { ok: false, message: `${expected}, got ${quote(content)} (${bytes})` };
  const [b0, b1] = bytes;
  if (bytes.length !== 2 || b0 === undefined || b1 === undefined) {
    return { ok: false, message: `${expected}, got ${quote(content)} (decodes to ${bytes.length} bytes)` };
  }
  return { ok: true, payload: (b0 << 8) | b1 };
}

/** Inverse of decodeForensicContent; undefined when 1.0 cannot spell the payload (a byte > 127). */
export function encodeForensicContent(payload: number, apiVersion: ApiVersion): string | undefined {
  if (!Number.isInteger(payload) || payload < 0 || payload > 0xffff) return undefined;
  const b0 = payload >> 8;
  const b1 = payload & 0xff;
  if (apiVersion === '1.0') return b0 > 127 || b1 > 127 ? undefined : String.fromCharCode(b0, b1);
  const n = (b0 << 16) | (b1 << 8);
  return `${[18, 12, 6].map((s) => BASE64_STANDARD[(n >> s) & 63]).join('')}=`;
}
