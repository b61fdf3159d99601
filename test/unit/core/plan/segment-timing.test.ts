// Unit tests for cutting a video into segments: the GOP length per frame rate, the lead segments, frame counts and cut points.
import { describe, expect, it } from 'vitest';
import { framesPerSegment, leadSegmentFrames, SEGMENT_SECONDS, segmentBoundaries, segmentFrameCounts } from '../../../../src/core/plan/segment-timing.js';

describe('framesPerSegment', () => {
  it.each([
    [{ num: 30, den: 1 }, 120, 4],
    [{ num: 30000, den: 1001 }, 120, 4.004],
    [{ num: 25, den: 1 }, 100, 4],
    [{ num: 24, den: 1 }, 96, 4],
    [{ num: 24000, den: 1001 }, 96, 4.004],
    [{ num: 60, den: 1 }, 240, 4],
  ])('%o fps -> %d frames (%d s)', (fps, frames, seconds) => {
    expect(framesPerSegment(fps)).toBe(frames);
    expect((frames * fps.den) / fps.num).toBeCloseTo(seconds, 9);
  });

  it('uses 4 s segments and never less than one frame', () => {
    expect(SEGMENT_SECONDS).toBe(4);
    expect(framesPerSegment({ num: 30, den: 1 }, 2)).toBe(60);
    expect(framesPerSegment({ num: 1, den: 10 })).toBe(1);
  });
});

describe('lead segments', () => {
  it.each([
    [{ num: 30, den: 1 }, [15, 15, 30, 60], 120],
    [{ num: 25, den: 1 }, [13, 13, 25, 49], 100],
    [{ num: 30000, den: 1001 }, [15, 15, 30, 60], 120],
    [{ num: 24000, den: 1001 }, [12, 12, 24, 48], 96],
    [{ num: 15, den: 2 }, [4, 4, 8, 14], 30],
    [{ num: 2, den: 1 }, [1, 1, 2, 4], 8],
  ])('at %o fps the lead segments are %o frames, one GOP of %d together', (fps, lead, gop) => {
    expect(leadSegmentFrames(fps)).toEqual(lead);
    expect(framesPerSegment(fps)).toBe(gop);
    expect(lead.reduce((a, b) => a + b, 0)).toBe(gop);
  });

  it('has no lead segments when a GOP is too short to give each a frame', () => {
    expect(leadSegmentFrames({ num: 1, den: 2 })).toEqual([]);
  });

  it('counts frames per segment: lead, then one GOP each, the last holding the rest', () => {
    const fps = { num: 30, den: 1 };
    expect(segmentFrameCounts(fps, 315, true)).toEqual([15, 15, 30, 60, 120, 75]);
    expect(segmentFrameCounts(fps, 45, true)).toEqual([15, 15, 15]);
    expect(segmentFrameCounts(fps, 240, true)).toEqual([15, 15, 30, 60, 120]);
    expect(segmentFrameCounts(fps, 315, false)).toEqual([120, 120, 75]);
    expect(segmentFrameCounts(fps, 1, true)).toEqual([1]);
  });

  it('cuts after each lead segment, then every GOP, up to the bound', () => {
    expect(segmentBoundaries([15, 15, 30, 60], 120, 500)).toEqual([15, 30, 60, 120, 240, 360, 480]);
    expect(segmentBoundaries([15, 15, 30, 60], 120, 0)).toEqual([15, 30, 60, 120]);
  });
});
