// The band suite's pure parts: spreads, x264's PSNR line, cutting a band stream like the segments, the gate verdict.
import { describe, expect, it } from 'vitest';
import { cutPictures, gateFindings, showSpread, spread, x264GlobalPsnr } from '../lib/band-figures.js';

describe('band figures', () => {
  it('gives the min, median and max of runs, ignoring failed ones', () => {
    expect(spread([3, 1, 2])).toEqual({ min: 1, median: 2, max: 3 });
    expect(spread([4, 1, 3, 2, NaN])).toEqual({ min: 1, median: 2.5, max: 4 });
    expect(showSpread(spread([0.2, 0.1, 0.15]))).toBe('0.15 (0.10-0.20)');
    expect(spread([]).median).toBeNaN();
  });

  it("reads the global PSNR from x264's summary", () => {
    const stderr = 'x264 [info]: kb/s:2551.02\nx264 [info]: PSNR Mean Y:44.123 U:46.001 V:46.2 Avg:44.7 Global:43.707 kb/s:2551.02\nencoded 150 frames';
    expect(x264GlobalPsnr(stderr)).toBe(43.707);
    expect(x264GlobalPsnr('encoded 150 frames')).toBeNaN();
  });

  it('cuts pictures into segments of the given sizes, and refuses a total that does not match', () => {
    expect(cutPictures(['a', 'b', 'c', 'd', 'e'], [2, 3])).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e'],
    ]);
    expect(() => cutPictures(['a', 'b'], [3])).toThrow(/3 pictures, the stream 2/);
  });

  it('passes a segment whose regions match, and says which part differs otherwise', () => {
    const want = { outside: [['x', 'y']], inside: ['m', 'n'] };
    expect(gateFindings({ outside: [['x', 'y']], inside: ['m', 'n'] }, want)).toEqual([]);
    expect(gateFindings({ outside: [['x', 'z']], inside: ['m', 'n'] }, want)).toEqual(['region 0 outside the band differs from the shared encode']);
    expect(gateFindings({ outside: [['x', 'y']], inside: [] }, { outside: [['x', 'y']], inside: [] })).toEqual(['the band differs from the band stream']);
  });
});
