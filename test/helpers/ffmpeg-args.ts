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
