// Unit tests for whether a process renders in bands: WMARK_BAND=off turns it off on purpose, a missing patched x264
// turns it off with the reason said once per process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bandSupport, sayOnce } from '../../../src/engine/band/band-support.js';

// --fullhelp lines of the current patch and of the older one-band patch.
const SEVERAL = '      --band-rows <top,bottom[,top,bottom...]> Bands of macroblock rows: slices\n';
const ONE = '      --band-rows <top,bottom> Slices split at these macroblock rows; motion outside\n';

const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-band-support-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bandSupport', () => {
  it('finds the patched x264 in WMARK_X264, else in the cache folder', () => {
    const bin = path.join(dir, 'x264');
    writeFileSync(bin, '');
    expect(bandSupport({ WMARK_X264: bin }, () => SEVERAL)).toEqual({ x264: bin });
    expect(bandSupport({ WMARK_X264_CACHE: path.join(dir, 'nothing-here') })).toEqual({
      off: 'band rendering off: patched x264 not found (build it with scripts/build-x264.sh, or set WMARK_X264)',
    });
  });

  it('is off, and says why, with an x264 that takes one band only or does not answer --fullhelp', () => {
    const bin = path.join(dir, 'x264');
    writeFileSync(bin, '');
    const off = { off: `band rendering off: ${bin} takes one band only (built from an older patch: rebuild it with scripts/build-x264.sh)` };
    expect(bandSupport({ WMARK_X264: bin }, () => ONE)).toEqual(off);
    // The real probe: an empty file does not run.
    expect(bandSupport({ WMARK_X264: bin })).toEqual(off);
  });

  it('is off on purpose with WMARK_BAND=off, even with the x264 there', () => {
    expect(bandSupport({ WMARK_BAND: 'off', WMARK_X264: path.join(dir, 'x264') })).toEqual({ off: 'band rendering off: WMARK_BAND=off', chosen: true });
  });
});

describe('sayOnce', () => {
  it('says a message the first time only', () => {
    const lines: string[] = [];
    const write = (line: string) => lines.push(line);
    sayOnce('band rendering off: a test reason', write);
    sayOnce('band rendering off: a test reason', write);
    sayOnce('band rendering off: another reason', write);
    expect(lines).toEqual(['wmark: band rendering off: a test reason\n', 'wmark: band rendering off: another reason\n']);
  });
});
