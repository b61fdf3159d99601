// The leak reader's ffmpeg command (with a stand-in ffmpeg that records its arguments and prints raw frames), and when
// detection decodes without deblocking: long leaks only (issue 15, F11: a 2-hour leak's time is mostly its decode).
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_LEAK_SECONDS, skipsLoopFilter } from '../../../src/engine/detect.js';
import { readLeak } from '../../../src/engine/leak-reader.js';

let dir: string;
let fakeFfmpeg: string;
const W = 16, H = 8, FRAMES = 5;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wmark-leak-reader-'));
  fakeFfmpeg = path.join(dir, 'ffmpeg');
  // Writes its arguments (one a line) next to itself, then FRAMES grey16 frames of level 100 (0x6400 little-endian).
  await writeFile(
    fakeFfmpeg,
    `#!/bin/sh\nfor a in "$@"; do echo "$a"; done > "${path.join(dir, 'args.txt')}"\n` +
      `i=0; while [ $i -lt ${W * H * FRAMES} ]; do printf '\\000\\144'; i=$((i+1)); done\n`,
  );
  await chmod(fakeFfmpeg, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const args = async () => (await readFile(path.join(dir, 'args.txt'), 'utf8')).trim().split('\n');
const read = (skipLoopFilter?: boolean) => readLeak({ ffmpeg: fakeFfmpeg, file: 'leak.mp4', fps: { num: 25, den: 1 }, durationSeconds: FRAMES / 25, width: W, height: H, skipLoopFilter });

describe('readLeak', () => {
  it('decodes exactly by default: no decoder option before the input', async () => {
    const leak = await read();
    expect(leak.frameCount).toBe(FRAMES);
    expect(leak.frames.frames[0]).toBe(100 * 256);
    const a = await args();
    expect(a).not.toContain('-skip_loop_filter');
    expect(a.slice(a.indexOf('-i'), a.indexOf('-i') + 2)).toEqual(['-i', 'leak.mp4']);
  });

  it('skips the deblocking filter when asked (an input option, so before -i)', async () => {
    const leak = await read(true);
    expect(leak.frameCount).toBe(FRAMES);
    expect(leak.signature[0]).toBeCloseTo(100, 6);
    const a = await args();
    const at = a.indexOf('-skip_loop_filter');
    expect(at).toBeGreaterThan(0);
    expect(a[at + 1]).toBe('all');
    expect(at).toBeLessThan(a.indexOf('-i'));
  });
});

describe('skipsLoopFilter (detect)', () => {
  it('is for long leaks only; an unknown duration decodes exactly', () => {
    expect(LONG_LEAK_SECONDS).toBe(1200);
    expect(skipsLoopFilter(5 * 60)).toBe(false);
    expect(skipsLoopFilter(LONG_LEAK_SECONDS - 1)).toBe(false);
    expect(skipsLoopFilter(LONG_LEAK_SECONDS)).toBe(true);
    expect(skipsLoopFilter(2 * 3600)).toBe(true);
    expect(skipsLoopFilter(NaN)).toBe(false);
  });
});
