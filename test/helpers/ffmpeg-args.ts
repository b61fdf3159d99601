// Reading ffmpeg argument lists in tests: the value after a flag, where a flag occurs, and the fixed closed GOP every x264 plan asks for.
import { expect } from 'vitest';

export function valueAfter(args: readonly string[], flag: string, from = 0): string | undefined {
  const i = args.indexOf(flag, from);
  return i < 0 ? undefined : args[i + 1];
}

export function indicesOf(args: readonly string[], flag: string): number[] {
  return args.flatMap((a, i) => (a === flag ? [i] : []));
}

export function expectFixedClosedGop(args: readonly string[], gop: number): void {
  expect(valueAfter(args, '-g')).toBe(String(gop));
  expect(valueAfter(args, '-keyint_min')).toBe(String(gop));
  expect(valueAfter(args, '-sc_threshold')).toBe('0');
  expect(valueAfter(args, '-x264-params')).toBe('open-gop=0');
  expect(valueAfter(args, '-c:v')).toBe('libx264');
}

/**
 * ffmpeg arguments, after a video input (raw H.264), that mux it as it is with `seconds` of a generated tone into an
 * HLS-like MPEG-TS segment (one picture per PES) at `output`.
 */
export function withToneToTs(seconds: number, output: string): string[] {
  const tone = ['-f', 'lavfi', '-i', `sine=d=${seconds}`, '-map', '0:v', '-map', '1:a'];
  return [...tone, '-c:v', 'copy', '-c:a', 'aac', '-muxdelay', '0', '-f', 'mpegts', output];
}
