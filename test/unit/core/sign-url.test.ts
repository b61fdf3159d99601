// Unit tests for HMAC-signed URLs: round trips, tampering, expiry, scopes and traversal forms.
import { describe, expect, it } from 'vitest';
import { isWithinScope, signPath, signUrl, verifySignedUrl } from '../../../src/core/sign-url.js';

const SECRET = 'test-secret-do-not-use';
const NOW = 1_800_000_000_000;
const LATER = NOW + 60_000;
const BASE = 'http://127.0.0.1:8080';
const FOLDER = '/2.0/watermark/vid1/abc123/';
const PLAYLIST_PATH = `${FOLDER}video.m3u8`;

/** The request target a server sees (`req.url`): path and query only. */
function target(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

function withParam(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.href;
}

describe('signPath', () => {
  it('is a deterministic base64url HMAC over scope and expiration', () => {
    const a = signPath(SECRET, PLAYLIST_PATH, LATER);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signPath(SECRET, PLAYLIST_PATH, LATER)).toBe(a);
    expect(signPath(SECRET, PLAYLIST_PATH, LATER + 1)).not.toBe(a);
    expect(signPath(SECRET, `${PLAYLIST_PATH}x`, LATER)).not.toBe(a);
    expect(signPath(Buffer.from(SECRET), PLAYLIST_PATH, LATER)).toBe(a);
  });

  it('refuses an empty secret, a relative scope and a non-integer expiration', () => {
    expect(() => signPath('', PLAYLIST_PATH, LATER)).toThrow(TypeError);
    expect(() => signPath(SECRET, 'video.m3u8', LATER)).toThrow(RangeError);
    expect(() => signPath(SECRET, PLAYLIST_PATH, 1.5)).toThrow(RangeError);
    expect(() => signPath(SECRET, PLAYLIST_PATH, -1)).toThrow(RangeError);
  });
});

describe('signUrl + verifySignedUrl', () => {
  it('round-trips an absolute URL string, a URL object and a request target', () => {
    const signed = signUrl(SECRET, `${BASE}${PLAYLIST_PATH}`, { expirationMs: LATER });
    expect(signed.startsWith(`${BASE}${PLAYLIST_PATH}?expiration=${LATER}&signature=`)).toBe(true);
    expect(verifySignedUrl(SECRET, signed, NOW)).toEqual({ ok: true, expirationMs: LATER });
    expect(verifySignedUrl(SECRET, new URL(signed), NOW)).toEqual({ ok: true, expirationMs: LATER });
    expect(verifySignedUrl(SECRET, target(signed), NOW)).toEqual({ ok: true, expirationMs: LATER });

    const fromObject = signUrl(SECRET, new URL(`${BASE}${PLAYLIST_PATH}`), { expirationMs: LATER });
    expect(fromObject).toBe(signed);
  });

  it('keeps other query params and the fragment, and replaces old signature params', () => {
    const once = signUrl(SECRET, `${BASE}${PLAYLIST_PATH}?a=1&b=x%20y#t=5`, { expirationMs: NOW });
    const twice = signUrl(SECRET, once, { expirationMs: LATER });
    const parsed = new URL(twice);
    expect(parsed.search.startsWith('?a=1&b=x%20y&expiration=')).toBe(true);
    expect(parsed.searchParams.getAll('expiration')).toEqual([String(LATER)]);
    expect(parsed.searchParams.getAll('signature')).toHaveLength(1);
    expect(parsed.hash).toBe('#t=5');
    expect(verifySignedUrl(SECRET, twice, NOW)).toEqual({ ok: true, expirationMs: LATER });
  });

  it('does not mutate a URL object it is given', () => {
    const url = new URL(`${BASE}${PLAYLIST_PATH}`);
    signUrl(SECRET, url, { expirationMs: LATER });
    expect(url.search).toBe('');
  });

  it('signs a path-absolute string and keeps it path-absolute', () => {
    const signed = signUrl(SECRET, PLAYLIST_PATH, { expirationMs: LATER });
    expect(signed.startsWith(`${PLAYLIST_PATH}?expiration=`)).toBe(true);
    expect(verifySignedUrl(SECRET, signed, NOW)).toEqual({ ok: true, expirationMs: LATER });
  });

  it('signs a relative segment URI against a folder scope so it verifies once resolved', () => {
    const signed = signUrl(SECRET, 'seg-00001.ts', { expirationMs: LATER, scope: FOLDER });
    expect(signed.startsWith('seg-00001.ts?expiration=')).toBe(true);
    const resolved = new URL(signed, `${BASE}${PLAYLIST_PATH}`);
    expect(verifySignedUrl(SECRET, target(resolved.href), NOW, { scope: FOLDER }).ok).toBe(true);
    expect(() => signUrl(SECRET, 'seg-00001.ts', { expirationMs: LATER })).toThrow(/scope/);
  });

  it('refuses to sign a URL outside the scope it names', () => {
    expect(() => signUrl(SECRET, `${BASE}/2.0/watermark/vid1/other/x.ts`, { expirationMs: LATER, scope: FOLDER })).toThrow(RangeError);
  });
});

describe('verifySignedUrl failures', () => {
  const signed = signUrl(SECRET, `${BASE}${PLAYLIST_PATH}`, { expirationMs: LATER });
  const signature = new URL(signed).searchParams.get('signature') ?? '';

  it('reports missing params', () => {
    expect(verifySignedUrl(SECRET, `${BASE}${PLAYLIST_PATH}`, NOW)).toEqual({ ok: false, reason: 'missing' });
    expect(verifySignedUrl(SECRET, `${PLAYLIST_PATH}?expiration=${LATER}`, NOW)).toEqual({ ok: false, reason: 'missing' });
    expect(verifySignedUrl(SECRET, `${PLAYLIST_PATH}?signature=${signature}`, NOW)).toEqual({ ok: false, reason: 'missing' });
  });

  it('rejects a tampered signature, expiration or path as invalid', () => {
    const flipped = (signature.startsWith('A') ? 'B' : 'A') + signature.slice(1);
    expect(verifySignedUrl(SECRET, withParam(signed, 'signature', flipped), NOW)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifySignedUrl(SECRET, withParam(signed, 'expiration', String(LATER + 1)), NOW)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    const otherPath = signed.replace('video.m3u8', 'other.m3u8');
    expect(verifySignedUrl(SECRET, otherPath, NOW)).toEqual({ ok: false, reason: 'invalid' });
    const otherVideo = signed.replace('/vid1/', '/vid2/');
    expect(verifySignedUrl(SECRET, otherVideo, NOW)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('rejects a signature made with another secret', () => {
    expect(verifySignedUrl('another-secret', signed, NOW)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('reports expiry only after now has passed the expiration', () => {
    expect(verifySignedUrl(SECRET, signed, LATER).ok).toBe(true);
    expect(verifySignedUrl(SECRET, signed, LATER + 1)).toEqual({ ok: false, reason: 'expired' });
  });

  it('says invalid, not expired, for a forged URL with a past expiration', () => {
    const forged = withParam(signed, 'expiration', String(NOW - 1));
    expect(verifySignedUrl(SECRET, forged, NOW)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('handles signatures of other lengths without throwing', () => {
    for (const candidate of ['', 'A', signature.slice(0, -1), `${signature}A`, signature.repeat(3)]) {
      const url = `${PLAYLIST_PATH}?expiration=${LATER}&signature=${candidate}`;
      expect(() => verifySignedUrl(SECRET, url, NOW)).not.toThrow();
      expect(verifySignedUrl(SECRET, url, NOW).ok).toBe(false);
    }
    expect(verifySignedUrl(SECRET, `${PLAYLIST_PATH}?expiration=${LATER}&signature=A`, NOW)).toEqual({
      ok: false,
      reason: 'invalid',
    });
  });

  it('rejects malformed expirations and signatures', () => {
    for (const expiration of ['', '1e12', '-1', '+1', '0x10', '1.5', ` ${LATER}`, `0${LATER}`, '99999999999999999999']) {
      const url = `${PLAYLIST_PATH}?expiration=${encodeURIComponent(expiration)}&signature=${signature}`;
      expect(verifySignedUrl(SECRET, url, NOW), expiration).toEqual({ ok: false, reason: 'malformed' });
    }
    for (const bad of ['abc+def', 'abc/def', 'abc=', 'ab cd']) {
      const url = `${PLAYLIST_PATH}?expiration=${LATER}&signature=${encodeURIComponent(bad)}`;
      expect(verifySignedUrl(SECRET, url, NOW), bad).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('rejects duplicated params as malformed', () => {
    expect(verifySignedUrl(SECRET, `${target(signed)}&expiration=${LATER}`, NOW)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignedUrl(SECRET, `${target(signed)}&signature=${signature}`, NOW)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('folder-prefix scope', () => {
  const expirationMs = LATER;
  const folderSignature = signPath(SECRET, FOLDER, expirationMs);
  const at = (path: string): string => `${path}?expiration=${expirationMs}&signature=${folderSignature}`;

  it('accepts files under the prefix', () => {
    for (const file of ['video.m3u8', 'seg-00001.ts', 'init.mp4', 'sub/dir/file.ts', '']) {
      expect(verifySignedUrl(SECRET, at(`${FOLDER}${file}`), NOW, { scope: FOLDER }), file).toEqual({
        ok: true,
        expirationMs,
      });
    }
  });

  it('rejects paths outside the prefix, sibling prefixes and the folder without its slash', () => {
    for (const path of [
      '/2.0/watermark/vid1/abc1234/seg.ts',
      '/2.0/watermark/vid1/abc12/seg.ts',
      '/2.0/watermark/vid1/other/seg.ts',
      '/2.0/watermark/vid1/abc123',
      '/seg.ts',
    ]) {
      expect(verifySignedUrl(SECRET, at(path), NOW, { scope: FOLDER }), path).toEqual({ ok: false, reason: 'invalid' });
    }
  });

  it('treats a scope without a trailing slash as an exact path, not a prefix', () => {
    const signature = signPath(SECRET, '/a/b', expirationMs);
    const url = (path: string): string => `${path}?expiration=${expirationMs}&signature=${signature}`;
    expect(verifySignedUrl(SECRET, url('/a/b'), NOW, { scope: '/a/b' }).ok).toBe(true);
    expect(verifySignedUrl(SECRET, url('/a/bc/x.ts'), NOW, { scope: '/a/b' })).toEqual({ ok: false, reason: 'invalid' });
    expect(verifySignedUrl(SECRET, url('/a/b/x.ts'), NOW, { scope: '/a/b' })).toEqual({ ok: false, reason: 'invalid' });
  });

  it('keeps /a/b/ and /a/bc/ apart', () => {
    expect(isWithinScope('/a/b/x.ts', '/a/b/')).toBe(true);
    expect(isWithinScope('/a/bc/x.ts', '/a/b/')).toBe(false);
    const signature = signPath(SECRET, '/a/b/', expirationMs);
    const bc = `/a/bc/x.ts?expiration=${expirationMs}&signature=${signature}`;
    expect(verifySignedUrl(SECRET, bc, NOW, { scope: '/a/b/' })).toEqual({ ok: false, reason: 'invalid' });
    expect(verifySignedUrl(SECRET, bc, NOW, { scope: '/a/bc/' })).toEqual({ ok: false, reason: 'invalid' });
  });

  it('does not accept an exact-path signature under a folder scope or the reverse', () => {
    const exact = signUrl(SECRET, `${FOLDER}video.m3u8`, { expirationMs });
    expect(verifySignedUrl(SECRET, exact, NOW, { scope: FOLDER })).toEqual({ ok: false, reason: 'invalid' });
    expect(verifySignedUrl(SECRET, at(`${FOLDER}video.m3u8`), NOW)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('traversal and ambiguous encodings', () => {
  const expirationMs = LATER;
  const scope = '/a/b/';
  const signature = signPath(SECRET, scope, expirationMs);
  const query = `?expiration=${expirationMs}&signature=${signature}`;

  it.each([
    '/a/b/../c',
    '/a/b/../../etc/passwd',
    '/a/b/./c.ts',
    '/a/b/%2e%2e/c',
    '/a/b/%2E%2e/c',
    '/a/b/%2E%2E/c',
    '/a/b/.%2e/c',
    '/a/b/x%2ets',
    '/a/b/..%2fc',
    '/a/b/..%2Fc',
    '/a/b/%2f..%2fc',
    '/a/b/..%5cc',
    '/a/b/..%5Cc',
    '/a/b/..\\c',
    '/a/b/\\..\\c',
    '/a/b/x%00.ts',
    '/a/b//etc/passwd',
  ])('rejects %s as malformed', (path) => {
    expect(verifySignedUrl(SECRET, `${path}${query}`, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignedUrl(SECRET, `http://127.0.0.1${path}${query}`, NOW, { scope })).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('rejects encoded slashes left in a parsed URL object', () => {
    const url = new URL(`http://127.0.0.1/a/b/..%2fc${query}`);
    expect(verifySignedUrl(SECRET, url, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('rejects a relative request target', () => {
    expect(verifySignedUrl(SECRET, `a/b/c.ts${query}`, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('reports traversal as malformed even with a wrong secret (checked before the HMAC)', () => {
    expect(verifySignedUrl('wrong', `/a/b/../c${query}`, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('still accepts ordinary percent-encoding elsewhere in the path', () => {
    const path = '/a/b/my%20file.ts';
    expect(verifySignedUrl(SECRET, `${path}${query}`, NOW, { scope })).toEqual({ ok: true, expirationMs });
  });
});
