// Unit tests for the signed links of a watermark: every verifier refuses an expiration beyond 2^53 as malformed.
import { describe, expect, it } from 'vitest';
import { verifySignedUrl } from '../../../src/core/sign-url.js';
import { signPlayerUrl, verifyPlayerUrl, watermarkUrls } from '../../../src/core/watermark-urls.js';

const SECRET = 'test-secret-do-not-use';
const NOW = 1_800_000_000_000;
const UNSAFE = ['9007199254740992', '9007199254740993', '9999999999999999'];
const urls = (api: '1.0' | '2.0') =>
  watermarkUrls({
    baseUrl: 'http://127.0.0.1:8080',
    apiVersion: api,
    videoId: '00000000-0000-4000-8000-000000000000',
    watermarkId: '0123456789abcdef0123456789abcdef',
    secret: SECRET,
    mediaExpirationMs: NOW + 60_000,
    statusExpirationMs: NOW + 60_000,
    includeMp4: true,
  });
const withExpiration = (url: string, value: string) => {
  const u = new URL(url);
  u.searchParams.set('expiration', value);
  return u;
};

describe('unsafe-integer expirations', () => {
  it('the player verifier accepts its own link and refuses 16-digit values at or above 2^53 without throwing', () => {
    const player = urls('1.0').player;
    expect(verifyPlayerUrl(SECRET, new URL(player), NOW)).toEqual({ ok: true, expirationMs: NOW + 60_000 });
    for (const value of UNSAFE) expect(verifyPlayerUrl(SECRET, withExpiration(player, value), NOW)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyPlayerUrl(SECRET, withExpiration(player, String(Number.MAX_SAFE_INTEGER)), NOW)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('the media and href verifier refuses them too', () => {
    const { m3u8, mp4, status } = urls('1.0');
    const scope = '/1.0/watermark/00000000-0000-4000-8000-000000000000/0123456789abcdef0123456789abcdef/';
    expect(verifySignedUrl(SECRET, m3u8, NOW, { scope }).ok).toBe(true);
    expect(verifySignedUrl(SECRET, status, NOW).ok).toBe(true);
    for (const value of UNSAFE) {
      expect(verifySignedUrl(SECRET, withExpiration(m3u8, value).href, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
      expect(verifySignedUrl(SECRET, withExpiration(mp4!, value).href, NOW, { scope })).toEqual({ ok: false, reason: 'malformed' });
      expect(verifySignedUrl(SECRET, withExpiration(status, value).href, NOW)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('signing an unsafe expiration is refused loudly (never a link nobody can verify)', () => {
    expect(() => signPlayerUrl(SECRET, 'http://h/player/2.0/', 2 ** 53)).toThrow(RangeError);
  });
});
