// The data folder's layout: where its files are, and the media keys that name objects in the folder or a shared store.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataLayout, mediaFile, mediaKeys } from '../../../src/engine/data-folder/layout.js';

describe('dataLayout', () => {
  it('lays out the data folder', () => {
    expect(dataLayout('/d')).toEqual({
      root: '/d',
      db: path.join('/d', 'wmark.db'),
      secret: path.join('/d', 'secret.key'),
      serveRecord: path.join('/d', 'serve.json'),
      sharedMedia: path.join('/d', 'shared-media.json'),
      media: path.join('/d', 'media'),
      videos: path.join('/d', 'media', 'videos'),
      watermarks: path.join('/d', 'media', 'watermarks'),
      tmp: path.join('/d', 'tmp'),
      locks: path.join('/d', 'locks'),
      samples: path.join('/d', 'samples'),
      logs: path.join('/d', 'logs'),
    });
  });
});

describe('mediaKeys', () => {
  it('name every object below the media folder, the same keys in a shared store', () => {
    expect(mediaKeys.workingSegment('v1', 3)).toBe('videos/v1/seg_00003.ts');
    expect(mediaKeys.forensicFile('v1', 'ab_00002.ts')).toBe('videos/v1/forensic/ab_00002.ts');
    expect(mediaKeys.segment('v1', 'w1', 0)).toBe('watermarks/v1/w1/seg_00000.ts');
    expect(mediaKeys.watermarkFile('v1', 'w1', 'video.m3u8')).toBe('watermarks/v1/w1/video.m3u8');
    expect(mediaKeys.sharedText('v1', 'h', 'a_00001.ts')).toBe('watermarks/v1/_shared/h/a_00001.ts');
  });

  it('are files of the media folder on this machine, the layout a folder store and mounting workers share', () => {
    const layout = dataLayout('/d');
    expect(mediaFile(layout, mediaKeys.workingSegment('v1', 0))).toBe(path.join('/d', 'media', 'videos', 'v1', 'seg_00000.ts'));
    expect(mediaFile(layout, mediaKeys.watermark('v1', 'w1'))).toBe(path.join(layout.watermarks, 'v1', 'w1'));
    expect(mediaFile(layout, mediaKeys.video('v1'))).toBe(path.join(layout.videos, 'v1'));
  });
});
