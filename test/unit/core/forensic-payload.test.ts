// Forensic payload parsing in both API versions (1.0: exactly 2 ASCII characters; 2.0: base64 of exactly 2 bytes), the
// inverse encoding used to print payloads, and the CLI's --forensic flag (0..65535, 2 ASCII chars or base64).
import { describe, expect, it } from 'vitest';
import { parseForensicPayload } from '../../../src/cli/forensic-flag.js';
import { isWmarkError } from '../../../src/core/errors.js';
import { decodeForensicContent, encodeForensicContent } from '../../../src/core/forensic-payload.js';
import { parseSettings } from '../../../src/core/setting-schema.js';

const ok = (content: string, v: '1.0' | '2.0') => {
  const d = decodeForensicContent(content, v);
  if (!d.ok) throw new Error(`expected ${JSON.stringify(content)} to decode in ${v}: ${d.message}`);
  return d.payload;
};
const message = (content: string, v: '1.0' | '2.0') => {
  const d = decodeForensicContent(content, v);
  if (d.ok) throw new Error(`expected ${JSON.stringify(content)} to be refused in ${v}, got ${d.payload}`);
  return d.message;
};

describe('API 1.0: exactly 2 ASCII characters', () => {
  it('reads the two character codes as the high and low byte', () => {
    expect(ok('AB', '1.0')).toBe(0x4142);
    expect(ok('BA', '1.0')).toBe(0x4241);
    expect(ok('00', '1.0')).toBe(0x3030);
    expect(ok('\u0000\u0000', '1.0')).toBe(0);
    expect(ok('\u007f\u007f', '1.0')).toBe(0x7f7f);
    expect(ok(' z', '1.0')).toBe(0x207a);
  });

  it.each([
    ['', '0 characters'],
    ['A', '1 characters'],
    ['ABC', '3 characters'],
    ['QUI=', '4 characters'],
    ['é1', 'non-ASCII characters'],
    ['\u0080A', 'non-ASCII characters'],
    ['😀', 'non-ASCII characters'],
  ])('refuses %j, naming the expected form (%s)', (content, why) => {
    const m = message(content, '1.0');
    expect(m).toContain('expected exactly 2 ASCII characters');
    expect(m).toContain(why);
  });

  it('an astral character is one character, not two UTF-16 units', () => {
    // "😀" is 2 UTF-16 code units: counting those would accept it as 2 characters.
    expect('😀').toHaveLength(2);
    expect(message('😀', '1.0')).toContain('expected exactly 2 ASCII characters');
  });
});

describe('API 2.0: base64 of exactly 2 bytes', () => {
  it('accepts standard and URL-safe alphabets, with or without padding', () => {
    expect(ok('QUI=', '2.0')).toBe(0x4142);
    expect(ok('QUI', '2.0')).toBe(0x4142);
    expect(ok('AAA=', '2.0')).toBe(0);
    expect(ok('//8=', '2.0')).toBe(0xffff);
    expect(ok('__8', '2.0')).toBe(0xffff);
    expect(ok('-_8=', '2.0')).toBe(0xfbff);
    expect(ok('+/8=', '2.0')).toBe(0xfbff);
  });

  it.each([
    ['', 'decodes to 0 bytes'],
    ['QQ==', 'decodes to 1 bytes'],
    ['QUJD', 'decodes to 3 bytes'],
    ['QUJDRA==', 'decodes to 4 bytes'],
    ['QUJ=', 'not canonical'],
    ['QUI==', 'not valid base64'],
    ['Q', 'not valid base64'],
    ['AB!=', 'not valid base64'],
    ['QU I=', 'not valid base64'],
    ['+_8=', 'not valid base64'],
  ])('refuses %j, naming the expected form (%s)', (content, why) => {
    const m = message(content, '2.0');
    expect(m).toContain('expected base64 of exactly 2 bytes');
    expect(m).toContain(why);
  });

  it('AB (valid in 1.0) is not a 2.0 payload, and QUI= (valid in 2.0) is not a 1.0 payload', () => {
    expect(message('AB', '2.0')).toContain('base64 of exactly 2 bytes');
    expect(message('QUI=', '1.0')).toContain('exactly 2 ASCII characters');
  });
});

describe('encodeForensicContent', () => {
  it('round-trips every 16-bit payload through 2.0, and every ASCII-spellable one through 1.0', { timeout: 60_000 }, () => {
    let ascii = 0;
    for (let u = 0; u < 65536; u++) {
      const b64 = encodeForensicContent(u, '2.0')!;
      expect(b64).toMatch(/^[A-Za-z0-9+/]{3}=$/);
      if (ok(b64, '2.0') !== u) throw new Error(`2.0 round trip of ${u} gave ${ok(b64, '2.0')}`);
      const a = encodeForensicContent(u, '1.0');
      if (u >> 8 < 128 && (u & 0xff) < 128) {
        ascii++;
        if (a === undefined || ok(a, '1.0') !== u) throw new Error(`1.0 round trip of ${u} failed (${a})`);
      } else if (a !== undefined) throw new Error(`payload ${u} has a non-ASCII byte but 1.0 spelled it ${JSON.stringify(a)}`);
    }
    expect(ascii).toBe(128 * 128);
  });

  it('refuses values that are not 16-bit payloads', () => {
    for (const v of [-1, 65536, 1.5, Number.NaN]) {
      expect(encodeForensicContent(v, '2.0')).toBeUndefined();
      expect(encodeForensicContent(v, '1.0')).toBeUndefined();
    }
  });
});

describe('FORENSIC settings: the payload in the parsed setting', () => {
  it('1.0 "AB" and 2.0 "QUI=" are the same payload', () => {
    const v1 = parseSettings([{ type: 'FORENSIC', content: 'AB' }], { apiVersion: '1.0' });
    const v2 = parseSettings([{ type: 'FORENSIC', content: 'QUI=' }], { apiVersion: '2.0' });
    expect(v1).toEqual({ ok: true, value: [{ type: 'FORENSIC', payload: 0x4142 }] });
    expect(v2).toEqual(v1);
  });

  it('the issue names the field and the expected form', () => {
    const r = parseSettings([{ content: 'hello' }, { type: 'FORENSIC', content: 'ABC' }], { apiVersion: '1.0' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues).toEqual([expect.stringMatching(/^settings\[1\]\.content: expected exactly 2 ASCII characters .*got "ABC" \(3 characters\)$/)]);
    const r2 = parseSettings([{ type: 'FORENSIC', content: 'QUJD' }], { apiVersion: '2.0' });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.issues).toEqual([expect.stringMatching(/^settings\[0\]\.content: expected base64 of exactly 2 bytes .*\(decodes to 3 bytes\)$/)]);
  });
});

describe('--forensic <payload> (CLI)', () => {
  it.each([
    ['0', 0],
    ['65535', 65535],
    ['16706', 0x4142],
    [' 42 ', 42],
    ['007', 7],
    ['AB', 0x4142],
    ['QUI=', 0x4142],
    ['QUI', 0x4142],
    ['__8', 0xffff],
    ['ascii:AB', 0x4142],
    ['ascii:12', 0x3132],
    ['ascii:-1', 0x2d31],
    ['base64:QUI=', 0x4142],
    ['base64:AAA', 0],
  ])('%j -> %i', (flag, payload) => {
    expect(parseForensicPayload(flag)).toBe(payload);
  });

  it('the three spellings of one payload agree', () => {
    const n = 0x5a31;
    expect(parseForensicPayload(String(n))).toBe(n);
    expect(parseForensicPayload(encodeForensicContent(n, '1.0')!)).toBe(n);
    expect(parseForensicPayload(encodeForensicContent(n, '2.0')!)).toBe(n);
  });

  it.each([
    ['65536', /does not fit in 16 bits \(0\.\.65535\)/],
    ['99999999999999999999', /does not fit in 16 bits/],
    ['A', /base64 of exactly 2 bytes/],
    ['ABC', /base64 of exactly 2 bytes/],
    ['QUJD', /decodes to 3 bytes/],
    ['-1', /-1 is a signed number; a payload is 0\.\.65535, written without a sign/],
    ['+5', /signed number/],
    ['-0', /signed number/],
    ['ascii:ABC', /exactly 2 ASCII characters/],
    ['ascii:é1', /non-ASCII/],
    ['base64:AB', /base64 of exactly 2 bytes/],
    ['', /base64 of exactly 2 bytes/],
  ])('%j is a usage error (exit 2) that says what is expected', (flag, why) => {
    let error: unknown;
    try {
      parseForensicPayload(flag);
    } catch (e) {
      error = e;
    }
    expect(isWmarkError(error), `no error for ${JSON.stringify(flag)}`).toBe(true);
    if (!isWmarkError(error)) return;
    expect(error.code).toBe('BAD_FORENSIC');
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/^--forensic: /);
    expect(error.message).toMatch(why);
  });
});
