// Which of a watermark's segments a media store's listing holds.
import { describe, expect, it } from 'vitest';
import { segmentsListed } from '../../../src/engine/watermark/watermark-job.js';

describe('segmentsListed', () => {
  const prefix = 'watermarks/v1/w1/';
  it('marks the segments a listing holds, by index', () => {
    expect(segmentsListed([`${prefix}seg_00000.ts`, `${prefix}seg_00002.ts`], prefix, 4)).toEqual([true, false, true, false]);
  });

  it('ignores other files, other folders, deeper keys and segments past the count', () => {
    const keys = [
      `${prefix}video.m3u8`,
      `${prefix}.work/seg_00001.ts`,
      'watermarks/v1/w2/seg_00001.ts',
      `${prefix}seg_00001.ts.part`,
      `${prefix}seg_00009.ts`,
      `${prefix}seg_00001.ts`,
    ];
    expect(segmentsListed(keys, prefix, 3)).toEqual([false, true, false]);
  });

  it('says none for an empty listing', () => {
    expect(segmentsListed([], prefix, 2)).toEqual([false, false]);
  });
});
