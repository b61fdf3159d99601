// Band placement in macroblock rows, the patched x264's arguments, the band's source cut and the qpfile.
import { describe, expect, it } from 'vitest';
import { WmarkError } from '../../../../src/core/errors.js';
import { bandEncodeArgs, bandRowsAt, bandSourceArgs, checkBandRows, checkBands, qpfileFor, sharedEncodeArgs } from '../../../../src/core/plan/band-plan.js';

const options = { preset: 'veryfast', crf: 23, gop: 50, refs: 3 };

describe('band rows', () => {
  it('rounds a band up to whole macroblock rows at the top or the bottom', () => {
    expect(bandRowsAt('bottom', 720, 80)).toEqual({ top: 40, bottom: 45 });
    expect(bandRowsAt('bottom', 720, 64)).toEqual({ top: 41, bottom: 45 });
    expect(bandRowsAt('top', 720, 70)).toEqual({ top: 0, bottom: 5 });
    expect(bandRowsAt('bottom', 1080, 80)).toEqual({ top: 63, bottom: 68 });
    expect(bandRowsAt('top', 176, 10)).toEqual({ top: 0, bottom: 3 });
  });

  it('refuses a band or a region beside it of fewer than 3 rows', () => {
    expect(() => checkBandRows({ top: 2, bottom: 6 }, 176)).toThrow(WmarkError);
    expect(() => checkBandRows({ top: 3, bottom: 9 }, 176)).toThrow(/do not fit 11 macroblock rows/);
    expect(() => checkBandRows({ top: 4, bottom: 6 }, 176)).toThrow(WmarkError);
    expect(() => checkBandRows({ top: 3, bottom: 8 }, 176)).not.toThrow();
  });

  it('takes several bands, sorted, apart, with 3+ rows in each band and region', () => {
    expect(() => checkBands([bandRowsAt('top', 176, 48), bandRowsAt('bottom', 176, 48)], 176)).not.toThrow();
    expect(() =>
      checkBands(
        [
          { top: 0, bottom: 3 },
          { top: 6, bottom: 9 },
          { top: 12, bottom: 15 },
        ],
        240,
      ),
    ).not.toThrow();
    for (const bands of [
      [
        { top: 0, bottom: 3 },
        { top: 5, bottom: 8 },
      ], // 2 rows between
      [
        { top: 0, bottom: 3 },
        { top: 3, bottom: 6 },
      ], // touching
      [
        { top: 8, bottom: 11 },
        { top: 0, bottom: 3 },
      ], // not sorted
      [
        { top: 0, bottom: 4 },
        { top: 2, bottom: 6 },
      ], // overlapping
      [
        { top: 0, bottom: 3 },
        { top: 6, bottom: 12 },
      ], // past the picture
      [],
    ]) {
      expect(() => checkBands(bands, 176)).toThrow(WmarkError);
    }
  });
});

describe('band encodes', () => {
  it('gives both encodes the settings their slices must share, and the shared encode a fixed GOP', () => {
    const shared = sharedEncodeArgs('in.y4m', 'out.264', { top: 40, bottom: 45 }, options);
    const band = bandEncodeArgs('band.y4m', 'band.264', 'qp.txt', options);
    for (const args of [shared, band]) {
      for (const [flag, value] of [
        ['--bframes', '0'],
        ['--weightp', '0'],
        ['--ref', '3'],
        ['--keyint', '50'],
        ['--scenecut', '0'],
      ]) {
        expect(args[args.indexOf(flag!) + 1]).toBe(value);
      }
      expect(args).toContain('--aud');
    }
    expect(shared[shared.indexOf('--band-rows') + 1]).toBe('40,45');
    expect(band).toContain('--band-self');
    expect(band[band.indexOf('--qpfile') + 1]).toBe('qp.txt');
    // The shared encode takes the caller's threads, a band encode one.
    const threaded = { ...options, threads: 2 };
    expect(sharedEncodeArgs('i', 'o', { top: 40, bottom: 45 }, threaded)).toEqual(expect.arrayContaining(['--threads', '2']));
    const single = bandEncodeArgs('b', 'o', 'q', threaded);
    expect(single[single.indexOf('--threads') + 1]).toBe('1');
    expect(sharedEncodeArgs('i', 'o', { top: 0, bottom: 3 }, { ...options, sceneCuts: true })).not.toContain('--scenecut');
    const several = sharedEncodeArgs(
      'i',
      'o',
      [
        { top: 0, bottom: 5 },
        { top: 40, bottom: 45 },
      ],
      options,
    );
    expect(several[several.indexOf('--band-rows') + 1]).toBe('0,5,40,45');
  });

  it('cuts the band rows, padding a band that reaches into the cropped rows', () => {
    const vf = (args: string[]) => args[args.indexOf('-vf') + 1];
    expect(vf(bandSourceArgs('s.y4m', 'b.y4m', { top: 40, bottom: 45 }, { width: 1280, height: 720 }, 'drawtext=x'))).toBe('crop=1280:80:0:640,drawtext=x');
    expect(vf(bandSourceArgs('s.y4m', 'b.y4m', { top: 63, bottom: 68 }, { width: 1920, height: 1080 }))).toBe('crop=1920:72:0:1008,pad=1920:80:0:0');
  });

  it('writes a qpfile of frame types with rate-controlled QPs', () => {
    expect(qpfileFor(['I', 'P', 'i', 'P'])).toBe('0 I -1\n1 P -1\n2 i -1\n3 P -1\n');
  });
});
