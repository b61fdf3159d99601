// --media URLs and media keys: what names a store, and which keys can never leave it.
import { describe, expect, it } from 'vitest';
import { checkKey, checkPrefix, parseMediaUrl } from '../../../src/media/media-store.js';

const codeOf = (f: () => unknown) => {
  try {
    f();
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe('parseMediaUrl', () => {
  it('reads an S3 bucket and prefix, without a trailing slash', () => {
    expect(parseMediaUrl('s3://wmark-media/farm/prod/')).toEqual({ kind: 's3', bucket: 'wmark-media', prefix: 'farm/prod' });
    expect(parseMediaUrl('s3://abc')).toEqual({ kind: 's3', bucket: 'abc', prefix: '' });
    expect(parseMediaUrl('s3://my.bucket-1/')).toEqual({ kind: 's3', bucket: 'my.bucket-1', prefix: '' });
  });

  it('reads an absolute folder, also as a file:// URL', () => {
    expect(parseMediaUrl('/mnt/wmark/')).toEqual({ kind: 'folder', root: '/mnt/wmark' });
    expect(parseMediaUrl('file:///mnt/wm%20ark')).toEqual({ kind: 'folder', root: '/mnt/wm ark' });
  });

  it('refuses what it cannot name, saying what to give', () => {
    for (const url of ['s3://ab/x', 's3://Upper/x', 's3://-bad', 's3://a..b', 's3://bucket/../x', 'relative/folder', 'http://example.com/x', 'gs://bucket']) {
      expect(
        codeOf(() => parseMediaUrl(url)),
        url,
      ).toBe('BAD_MEDIA_URL');
    }
    expect(() => parseMediaUrl('s3://ab')).toThrow(/"ab" is not an S3 bucket name/);
  });
});

describe('media keys', () => {
  it('takes plain relative paths', () => {
    for (const key of ['videos/v1/seg_00000.ts', 'a', 'watermarks/0f-9/video.mp4', 'x/y_z-1.2']) expect(checkKey(key)).toBe(key);
  });

  it('refuses anything that could escape the store or collide with a temp file', () => {
    for (const key of ['', '/a', 'a/', 'a//b', '.', '..', 'a/../b', '.a', 'a/.b', 'a\\b', 'a b', 'ü', 'x'.repeat(901)]) {
      expect(
        codeOf(() => checkKey(key)),
        key,
      ).toBe('MEDIA_KEY_INVALID');
    }
  });

  it('takes listing prefixes that end in a folder or in part of a name, and the empty one only where asked', () => {
    expect(checkPrefix('videos/v1/', { allowEmpty: false })).toBe('videos/v1/');
    expect(checkPrefix('videos/v1/seg_', { allowEmpty: false })).toBe('videos/v1/seg_');
    expect(checkPrefix('', { allowEmpty: true })).toBe('');
    expect(codeOf(() => checkPrefix('', { allowEmpty: false }))).toBe('MEDIA_KEY_INVALID');
    expect(codeOf(() => checkPrefix('../', { allowEmpty: true }))).toBe('MEDIA_KEY_INVALID');
    expect(codeOf(() => checkPrefix('videos/.x', { allowEmpty: true }))).toBe('MEDIA_KEY_INVALID');
  });
});
