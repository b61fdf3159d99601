// Unit tests for the ingest argument list: CFR H.264 in one fixed closed GOP per segment, stream mapping, scaling, and the lead cuts.
import { describe, expect, it } from 'vitest';
import { type IngestPlan, ingestArgs } from '../../../../src/core/plan/ingest-args.js';
import { expectFixedClosedGop, indicesOf, valueAfter } from '../../../helpers/ffmpeg-args.js';

describe('ingestArgs', () => {
  const plan = (over: Partial<IngestPlan> = {}): IngestPlan => ({
    source: '/in/movie.mp4',
    outDir: '/tmp/staging',
    fps: { num: 30000, den: 1001 },
    width: 320,
    height: 180,
    hasAudio: true,
    encode: { preset: 'veryfast', crf: 18 },
    lead: false,
    ...over,
  });

  it('normalises to CFR H.264 with one fixed closed GOP per segment', () => {
    const args = ingestArgs(plan());
    expect(valueAfter(args, '-i')).toBe('/in/movie.mp4');
    expectFixedClosedGop(args, 120);
    expect(valueAfter(args, '-vf')).toBe('fps=30000/1001,scale=320:180,format=yuv420p');
    expect(valueAfter(args, '-preset')).toBe('veryfast');
    expect(valueAfter(args, '-crf')).toBe('18');
    // The segment muxer cuts at the GOP length (120 frames at 29.97 = 4.004 s), tolerating half a frame.
    expect(valueAfter(args, '-f')).toBe('segment');
    expect(valueAfter(args, '-segment_format')).toBe('mpegts');
    expect(Number(valueAfter(args, '-segment_time'))).toBeCloseTo(4.004, 6);
    expect(Number(valueAfter(args, '-segment_time_delta'))).toBeCloseTo(1001 / 30000 / 2, 6);
    expect(valueAfter(args, '-segment_list')).toBe('/tmp/staging/segments.csv');
    expect(valueAfter(args, '-segment_list_type')).toBe('csv');
    expect(args.at(-1)).toBe('/tmp/staging/seg_%05d.ts');
  });

  it('maps the first video and audio streams and drops the rest', () => {
    const withAudio = ingestArgs(plan());
    expect(indicesOf(withAudio, '-map').map((i) => withAudio[i + 1])).toEqual(['0:v:0', '0:a:0']);
    expect(valueAfter(withAudio, '-c:a')).toBe('aac');
    expect(valueAfter(withAudio, '-ar')).toBe('48000');
    expect(withAudio).toEqual(expect.arrayContaining(['-sn', '-dn']));
    const mute = ingestArgs(plan({ hasAudio: false }));
    expect(indicesOf(mute, '-map').map((i) => mute[i + 1])).toEqual(['0:v:0']);
    expect(mute).not.toContain('-c:a');
  });

  it('scales to the recorded size, odd sizes rounded down to even ones (yuv420p needs them)', () => {
    expect(valueAfter(ingestArgs(plan({ width: 321, height: 181 })), '-vf')).toBe('fps=30000/1001,scale=320:180,format=yuv420p');
    expect(valueAfter(ingestArgs(plan({ width: 320, height: 181 })), '-vf')).toContain('scale=320:180,');
    // Even sizes too: a source that changes resolution mid-stream still gives segments of one size.
    expect(valueAfter(ingestArgs(plan({ width: 320, height: 180 })), '-vf')).toContain('scale=320:180,');
  });

  it.each([
    [{ num: 25, den: 1 }, 100, 4],
    [{ num: 24, den: 1 }, 96, 4],
    [{ num: 30, den: 1 }, 120, 4],
  ])('at %o fps: GOP %d, segment_time %d', (fps, gop, seconds) => {
    const args = ingestArgs(plan({ fps }));
    expectFixedClosedGop(args, gop);
    expect(Number(valueAfter(args, '-segment_time'))).toBeCloseTo(seconds, 6);
  });
});

describe('lead segments', () => {
  it('forces keyframes at every cut and has the muxer cut at those frames', () => {
    const args = ingestArgs({
      source: 'in.mp4',
      outDir: '/s',
      fps: { num: 30, den: 1 },
      width: 320,
      height: 180,
      hasAudio: false,
      encode: { preset: 'veryfast', crf: 15 },
      lead: true,
      maxFrames: 400,
    });
    expectFixedClosedGop(args, 120);
    expect(valueAfter(args, '-force_key_frames')).toBe('expr:eq(n,15)+eq(n,30)+eq(n,60)+not(mod(n,120))');
    expect(valueAfter(args, '-segment_frames')).toBe('15,30,60,120,240,360');
    expect(args).not.toContain('-segment_time');
  });

  it('falls back to plain GOP segments when the length is unknown', () => {
    const args = ingestArgs({
      source: 'in.mp4',
      outDir: '/s',
      fps: { num: 30, den: 1 },
      width: 320,
      height: 180,
      hasAudio: false,
      encode: { preset: 'veryfast', crf: 15 },
      lead: true,
    });
    expect(args).not.toContain('-segment_frames');
    expect(Number(valueAfter(args, '-segment_time'))).toBeCloseTo(4, 6);
  });
});
