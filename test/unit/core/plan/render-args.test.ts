// Unit tests for the segment render and mp4 join argument lists: thread limits, timestamps kept, the closed GOP, stream copy.
import { describe, expect, it } from 'vitest';
import { joinMp4Args, type SegmentRenderPlan, segmentRenderArgs } from '../../../../src/core/plan/render-args.js';
import { expectFixedClosedGop, indicesOf, valueAfter } from '../../../helpers/ffmpeg-args.js';

describe('segmentRenderArgs', () => {
  const plan = (over: Partial<SegmentRenderPlan> = {}): SegmentRenderPlan => ({
    input: '/media/videos/v/seg_00003.ts',
    output: 'seg_00003.ts.part',
    filterScript: 'filter.txt',
    gop: 120,
    threads: 1,
    encode: { preset: 'veryfast', crf: 23 },
    hasAudio: true,
    ...over,
  });

  it.each([1, 2, 8])('limits decoder and encoder to %d thread(s): -threads both before and after -i', (threads) => {
    const args = segmentRenderArgs(plan({ threads }));
    const input = args.indexOf('-i');
    const t = indicesOf(args, '-threads');
    expect(t).toHaveLength(2);
    expect(t[0]!).toBeLessThan(input);
    expect(t[1]!).toBeGreaterThan(input);
    expect(t.map((i) => args[i + 1])).toEqual([String(threads), String(threads)]);
    expect(args[input + 1]).toBe('/media/videos/v/seg_00003.ts');
  });

  it('keeps the input timestamps and adds no mux delay, so segments join seamlessly', () => {
    const args = segmentRenderArgs(plan());
    expect(args.indexOf('-copyts')).toBeGreaterThanOrEqual(0);
    expect(args.indexOf('-copyts')).toBeLessThan(args.indexOf('-i'));
    expect(valueAfter(args, '-muxdelay')).toBe('0');
    expect(valueAfter(args, '-f')).toBe('mpegts');
    expect(args.at(-1)).toBe('seg_00003.ts.part');
  });

  it('re-encodes video as one fixed closed GOP through the filter script, and copies audio', () => {
    const args = segmentRenderArgs(plan({ gop: 96, encode: { preset: 'fast', crf: 20 } }));
    expectFixedClosedGop(args, 96);
    expect(valueAfter(args, '-filter_script:v')).toBe('filter.txt');
    expect(valueAfter(args, '-preset')).toBe('fast');
    expect(valueAfter(args, '-crf')).toBe('20');
    expect(valueAfter(args, '-pix_fmt')).toBe('yuv420p');
    expect(indicesOf(args, '-map').map((i) => args[i + 1])).toEqual(['0:v:0', '0:a:0']);
    expect(valueAfter(args, '-c:a')).toBe('copy');
    const mute = segmentRenderArgs(plan({ hasAudio: false }));
    expect(indicesOf(mute, '-map').map((i) => mute[i + 1])).toEqual(['0:v:0']);
    expect(mute).not.toContain('-c:a');
  });
});

describe('joinMp4Args', () => {
  it('joins by stream copy, without any encoder', () => {
    const args = joinMp4Args(['seg_00000.ts', 'seg_00001.ts', 'seg_00002.ts'], 'video.mp4.part', true);
    expect(valueAfter(args, '-i')).toBe('concat:seg_00000.ts|seg_00001.ts|seg_00002.ts');
    expect(valueAfter(args, '-c')).toBe('copy');
    expect(args).not.toContain('libx264');
    expect(args).not.toContain('-c:v');
    expect(args).not.toContain('-vf');
    expect(indicesOf(args, '-map').map((i) => args[i + 1])).toEqual(['0:v:0', '0:a:0']);
    // ADTS AAC from MPEG-TS must become MP4's ASC form.
    expect(valueAfter(args, '-bsf:a')).toBe('aac_adtstoasc');
    expect(valueAfter(args, '-movflags')).toBe('+faststart');
    expect(valueAfter(args, '-f')).toBe('mp4');
    expect(args.at(-1)).toBe('video.mp4.part');
  });

  it('maps only video and needs no audio filter without audio', () => {
    const args = joinMp4Args(['seg_00000.ts'], 'out.mp4', false);
    expect(indicesOf(args, '-map').map((i) => args[i + 1])).toEqual(['0:v:0']);
    expect(args).not.toContain('-bsf:a');
    expect(valueAfter(args, '-c')).toBe('copy');
  });
});
