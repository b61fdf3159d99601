// The leak reader's ffmpeg plan, and when detection decodes without deblocking: long leaks only (a long leak's
// detection time is mostly its decode). What the option does to real frames is in test/integration/leak-reader.
import { describe, expect, it } from 'vitest';
import { LONG_LEAK_SECONDS, skipsLoopFilter } from '../../../src/engine/forensic/detect.js';
import { leakDecodeArgs } from '../../../src/engine/forensic/leak-reader.js';

const plan = (skipLoopFilter?: boolean) => leakDecodeArgs({ file: 'leak.mp4', fps: { num: 30000, den: 1001 }, width: 128, height: 72, skipLoopFilter });

describe('leakDecodeArgs', () => {
  it('decodes exactly by default: the first video stream at its own rate, area-scaled, 16-bit grey to stdout', () => {
    const a = plan();
    expect(a).not.toContain('-skip_loop_filter');
    expect(a.slice(a.indexOf('-i'), a.indexOf('-i') + 4)).toEqual(['-i', 'leak.mp4', '-map', '0:v:0']);
    expect(a[a.indexOf('-vf') + 1]).toBe('fps=30000/1001,scale=128:72:flags=area,format=gray16le');
    expect(a.slice(-3)).toEqual(['-f', 'rawvideo', 'pipe:1']);
  });

  it('skips deblocking when asked, as an input option (before -i, where ffmpeg applies it to the decoder)', () => {
    const a = plan(true);
    const at = a.indexOf('-skip_loop_filter');
    expect(a[at + 1]).toBe('all');
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(a.indexOf('-i'));
  });
});

describe('skipsLoopFilter (detect)', () => {
  it('is for leaks of 20 minutes or more; an unknown duration decodes exactly', () => {
    expect(LONG_LEAK_SECONDS).toBe(1200);
    expect(skipsLoopFilter(5 * 60)).toBe(false);
    expect(skipsLoopFilter(LONG_LEAK_SECONDS - 1)).toBe(false);
    expect(skipsLoopFilter(LONG_LEAK_SECONDS)).toBe(true);
    expect(skipsLoopFilter(2 * 3600)).toBe(true);
    expect(skipsLoopFilter(NaN)).toBe(false);
  });
});
