// Unit tests for whether a process renders in bands: WMARK_BAND=off turns it off on purpose, a missing patched x264
// turns it off with the reason said once per process.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bandSupport, sayOnce } from '../../../src/engine/band/band-support.js';

// --fullhelp lines of the current patch and of the older one-band patch.
const SEVERAL = '      --band-rows <top,bottom[,top,bottom...]> Bands of macroblock rows: slices\n';
const ONE = '      --band-rows <top,bottom> Slices split at these macroblock rows; motion outside\n';

const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-band-support-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable shell script standing in for x264. */
function script(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('bandSupport', () => {
  it('finds the patched x264 in WMARK_X264, else in the cache folder', async () => {
    const bin = path.join(dir, 'x264');
    writeFileSync(bin, '');
    expect(await bandSupport({ WMARK_X264: bin }, async () => SEVERAL)).toEqual({ x264: bin });
    expect(await bandSupport({ WMARK_X264_CACHE: path.join(dir, 'nothing-here') })).toEqual({
      off: 'band rendering off: patched x264 not found (build it with scripts/build-x264.sh, or set WMARK_X264)',
    });
  });

  it('is off, and says why, with an x264 that takes one band only or does not answer --fullhelp', async () => {
    const bin = path.join(dir, 'x264');
    writeFileSync(bin, '');
    const offFor = (x264: string) => ({
      off: `band rendering off: ${x264} takes one band only (built from an older patch: rebuild it with scripts/build-x264.sh)`,
    });
    expect(await bandSupport({ WMARK_X264: bin }, async () => ONE)).toEqual(offFor(bin));
    // The real question, through the process runner: an empty file does not run, and one that fails is not believed.
    expect(await bandSupport({ WMARK_X264: bin })).toEqual(offFor(bin));
    const failing = script('x264-failing', `printf '%s' '${SEVERAL.trim()}'; exit 3`);
    expect(await bandSupport({ WMARK_X264: failing })).toEqual(offFor(failing));
  });

  it('asks a real x264 its --fullhelp once per binary, and renders in bands with one that takes several', async () => {
    const asked = path.join(dir, 'asked');
    const bin = script('x264-several', `echo >> '${asked}'; printf '%s\\n' '${SEVERAL.trim()}'`);
    expect(await bandSupport({ WMARK_X264: bin })).toEqual({ x264: bin });
    expect(await bandSupport({ WMARK_X264: bin })).toEqual({ x264: bin });
    expect(readFileSync(asked, 'utf8')).toBe('\n');
  });

  it('is off on purpose with WMARK_BAND=off, even with the x264 there', async () => {
    expect(await bandSupport({ WMARK_BAND: 'off', WMARK_X264: path.join(dir, 'x264') })).toEqual({
      off: 'band rendering off: WMARK_BAND=off',
      chosen: true,
    });
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
