// Parses `--forensic <payload>`: the 16-bit forensic payload as an integer, 2 ASCII characters or base64 of 2 bytes.
import { WmarkError } from '../core/errors.js';
import { decodeForensicContent } from '../core/forensic-payload.js';

export function parseForensicPayload(value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    if (n <= 0xffff) return n;
    throw new WmarkError('BAD_FORENSIC', `--forensic: ${v} does not fit in 16 bits (0..65535)`);
  }
  // A signed number ("-1", "+5") is two ASCII characters too, but meant as a number: marking the viewer with the payload
  // of the characters "-1" (11569) instead of refusing would silently issue a mark nobody asked for.
  if (/^[+-]\d+$/.test(v)) {
    throw new WmarkError('BAD_FORENSIC', `--forensic: ${v} is a signed number; a payload is 0..65535, written without a sign`, {
      hint: `For the two characters themselves, write ascii:${v}.`,
    });
  }
  const prefixed = /^(ascii|base64):(.*)$/s.exec(v);
  const [kind, body] = prefixed ? [prefixed[1], prefixed[2]!] : [v.length === 2 ? 'ascii' : 'base64', v];
  const decoded = decodeForensicContent(body, kind === 'ascii' ? '1.0' : '2.0');
  if (!decoded.ok) {
    throw new WmarkError('BAD_FORENSIC', `--forensic: ${decoded.message}`, {
      hint: 'Give 0..65535, two ASCII characters (ascii:AB) or base64 of two bytes (base64:QUI=).',
    });
  }
  return decoded.payload;
}
