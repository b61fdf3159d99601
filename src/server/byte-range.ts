// The one byte range a `Range` header asks for (RFC 9110 14.2), for media players that seek within a file.

import type { ByteRange } from '../media/media-store.js';

/** What a `Range` header asks for: one range of bytes, one the file cannot satisfy, or none (the whole file). */
export type RequestedRange = ByteRange | 'unsatisfiable' | undefined;

/** Parses a single-range `Range` header; anything not served as one range (multi-range, other units) gets the whole file. */
export function parseRange(header: string | undefined, size: number): RequestedRange {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}
