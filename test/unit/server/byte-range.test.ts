// Range headers as media players send them (RFC 9110 14.2): what is served as one range, what is 416, what gets the whole file.
import { describe, expect, it } from 'vitest';
import { parseRange } from '../../../src/server/byte-range.js';

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', { start: 0, end: 99 }],
    ['bytes=100-', { start: 100, end: 999 }],
    ['bytes=-100', { start: 900, end: 999 }],
    ['bytes=0-0', { start: 0, end: 0 }],
    ['bytes=999-999', { start: 999, end: 999 }],
    ['  bytes=10-20  ', { start: 10, end: 20 }],
  ])('%s of 1000 bytes is one range', (header, range) => {
    expect(parseRange(header, 1000)).toEqual(range);
  });

  it('clamps an end past the file to its last byte, and a suffix longer than the file to all of it', () => {
    expect(parseRange('bytes=500-5000', 1000)).toEqual({ start: 500, end: 999 });
    expect(parseRange('bytes=-5000', 1000)).toEqual({ start: 0, end: 999 });
  });

  it.each([
    ['a start at the size', 'bytes=1000-', 1000],
    ['a start past the size', 'bytes=2000-3000', 1000],
    ['a zero-length suffix', 'bytes=-0', 1000],
    ['any range of an empty file', 'bytes=0-', 0],
    ['a suffix of an empty file', 'bytes=-5', 0],
  ])('%s is unsatisfiable (416)', (_what, header, size) => {
    expect(parseRange(header, size)).toBe('unsatisfiable');
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another unit', 'items=0-5'],
    ['several ranges', 'bytes=0-5,10-15'],
    ['no positions', 'bytes=-'],
    ['an end before the start', 'bytes=50-10'],
    ['a negative start', 'bytes=--5'],
    ['letters', 'bytes=a-b'],
  ])('%s gets the whole file', (_what, header) => {
    expect(parseRange(header, 1000)).toBeUndefined();
  });
});
