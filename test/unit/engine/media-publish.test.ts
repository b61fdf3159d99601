// The pure parts of publishing to a shared media store: a file's key, and which segments a listing holds.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mediaKey, segmentsListed } from '../../../src/engine/media-publish.js';

const root = path.join(path.sep, 'data', 'wmark', 'media');

describe('mediaKey', () => {
  it('is the path below the media folder with / separators, the layout workers use', () => {
    expect(mediaKey(root, path.join(root, 'videos', 'v1', 'seg_00000.ts'))).toBe('videos/v1/seg_00000.ts');
    expect(mediaKey(root, path.join(root, 'watermarks', 'v1', 'w1', 'video.m3u8'))).toBe('watermarks/v1/w1/video.m3u8');
    expect(mediaKey(`${root}${path.sep}`, path.join(root, 'videos', 'v1', 'forensic', 'ab_00003.ts'))).toBe('videos/v1/forensic/ab_00003.ts');
  });

  it('refuses a file outside the media folder, or the folder itself (MEDIA_KEY_INVALID)', () => {
    for (const file of [path.join(root, '..', 'wmark.db'), root, path.join(path.sep, 'etc', 'passwd'), `${root}-other${path.sep}x.ts`]) {
      expect(() => mediaKey(root, file), file).toThrow(expect.objectContaining({ code: 'MEDIA_KEY_INVALID' }));
    }
  });

  it('keeps a name that starts with two dots inside the folder', () => {
    expect(mediaKey(root, path.join(root, '..x', 'seg_00000.ts'))).toBe('..x/seg_00000.ts');
  });
});

describe('segmentsListed', () => {
  const prefix = 'watermarks/v1/w1/';
  it('marks the segments a listing holds, by index', () => {
    expect(segmentsListed([`${prefix}seg_00000.ts`, `${prefix}seg_00002.ts`], prefix, 4)).toEqual([true, false, true, false]);
  });

  it('ignores other files, other folders, deeper keys and segments past the count', () => {
    const keys = [`${prefix}video.m3u8`, `${prefix}.work/seg_00001.ts`, 'watermarks/v1/w2/seg_00001.ts', `${prefix}seg_00001.ts.part`, `${prefix}seg_00009.ts`, `${prefix}seg_00001.ts`];
    expect(segmentsListed(keys, prefix, 3)).toEqual([false, true, false]);
  });

  it('says none for an empty listing', () => {
    expect(segmentsListed([], prefix, 2)).toEqual([false, false]);
  });
});
