// readLeak on a real encode with the real ffmpeg: exact decode vs decode without deblocking (what leaks of 20 minutes
// or more get). Skipping the filter lets blocking drift through the reference frames, so the pictures do differ; what
// detection needs is that the difference is not shaped like the mark: projected on the keyed patterns, it is a small
// fraction of the mark's amplitude, and the alignment signatures stay close.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natural } from '../../harness/fixtures.js';
import { FFMPEG, FFPROBE } from '../../harness/tools.js';
import { WmarkError } from '../../src/core/errors.js';
import { forensicKey, patternGrid } from '../../src/core/forensic/keyed-bits.js';
import { MARK_AMPLITUDE, patternField } from '../../src/core/forensic/pattern-image.js';
import { readLeak } from '../../src/engine/forensic/leak-reader.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { slope } from '../helpers/forensic-helpers.js';

const run = promisify(execFile);
const W = 128,
  H = 72;
let dir: string;
let leak: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wmark-leak-reader-'));
  leak = path.join(dir, 'leak.mp4');
  // A heavily compressed copy, where the deblocking filter has the most to do.
  await run(FFMPEG, ['-v', 'error', '-y', '-i', await natural(6), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '38', '-an', leak]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (skipLoopFilter: boolean) =>
  readLeak({ runner: createProcessRunner(FFMPEG, FFPROBE), file: leak, fps: { num: 30, den: 1 }, durationSeconds: 6, width: W, height: H, skipLoopFilter });

describe('readLeak without deblocking', () => {
  it("gives the same frames in time, close signatures, and a difference with nothing of the mark's shape", async () => {
    const [exact, fast] = await Promise.all([read(false), read(true)]);
    expect(exact.frameCount).toBe(180);
    expect(fast.frameCount).toBe(exact.frameCount);
    expect(Array.from(fast.times)).toEqual(Array.from(exact.times));
    const n = W * H;
    let frameDiff = 0,
      sigDiff = 0;
    for (let i = 0; i < exact.frameCount * n; i++) frameDiff += Math.abs(exact.frames.frames[i]! - fast.frames.frames[i]!) / 256;
    for (let i = 0; i < exact.signature.length; i++) sigDiff += Math.abs(exact.signature[i]! - fast.signature[i]!);
    frameDiff /= exact.frameCount * n;
    sigDiff /= exact.signature.length;
    // The option took effect: the decodes differ, by a level or two per pixel at CRF 38.
    expect(frameDiff).toBeGreaterThan(0.1);
    // Alignment's 4x4 cell means move by a fraction of a level.
    expect(sigDiff).toBeLessThan(0.3);
    // Per 2-s slot, the difference of the mean pictures projected on the keyed patterns: what it adds to a reading.
    const key = forensicKey(Buffer.alloc(32, 7));
    const projections: number[] = [];
    for (let s = 0; s < 3; s++) {
      const d = new Float64Array(n);
      for (let f = s * 60; f < (s + 1) * 60; f++)
        for (let p = 0; p < n; p++) d[p]! += (fast.frames.frames[f * n + p]! - exact.frames.frames[f * n + p]!) / 256 / 60;
      for (let slot = 0; slot < 8; slot++) projections.push(slope(patternField(patternGrid(key, 'video', slot), W, H), d));
    }
    // At CRF 38 (the worst case for blocking): typically under a tenth of the mark, none above a fifth. The
    // detection bench on real leaks (CRF 28-38, 180p-720p) reads the same z either way.
    const rms = Math.sqrt(projections.reduce((a, x) => a + x * x, 0) / projections.length);
    const worst = Math.max(...projections.map(Math.abs));
    expect(rms, `rms projection ${rms.toFixed(4)} vs the mark's ${MARK_AMPLITUDE}`).toBeLessThan(0.1 * MARK_AMPLITUDE);
    expect(worst, `largest projection ${worst.toFixed(4)} vs the mark's ${MARK_AMPLITUDE}`).toBeLessThan(0.2 * MARK_AMPLITUDE);
  });
});

describe('readLeak on a file ffmpeg cannot decode', () => {
  it('fails with LEAK_DECODE_FAILED, carrying ffmpeg’s own reason', async () => {
    const junk = path.join(dir, 'junk.mp4');
    await writeFile(junk, 'not a video');
    const error = await readLeak({
      runner: createProcessRunner(FFMPEG, FFPROBE),
      file: junk,
      fps: { num: 30, den: 1 },
      durationSeconds: 6,
      width: W,
      height: H,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WmarkError);
    expect((error as WmarkError).code).toBe('LEAK_DECODE_FAILED');
    expect((error as WmarkError).message).toMatch(/junk\.mp4|Invalid data/);
  });
});
