// Sends a media file with the headers players and CDNs expect: type, length, validators, byte ranges (206/416), HEAD.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { HttpError } from './http-kit.js';

export const CONTENT_TYPES: Record<string, string> = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.mp4': 'video/mp4',
  '.m4s': 'video/iso.segment',
  '.js': 'text/javascript; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

/** Parses a single-range `Range` header; anything we don't serve as one range (multi-range, other units) gets the whole file. */
export function parseRange(header: string | undefined, size: number): ByteRange {
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

export interface ServeFileOptions {
  cacheControl: string;
  headers?: Record<string, string>;
}

export async function serveFile(req: IncomingMessage, res: ServerResponse, file: string, contentType: string, options: ServeFileOptions): Promise<void> {
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new HttpError(404, 'NOT_FOUND', 'no such file');
  }
  if (!info.isFile()) throw new HttpError(404, 'NOT_FOUND', 'no such file');
  const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  const base: Record<string, string> = {
    ...options.headers,
    'Content-Type': contentType,
    'Accept-Ranges': 'bytes',
    'Cache-Control': options.cacheControl,
    ETag: etag,
    'Last-Modified': info.mtime.toUTCString(),
    'X-Content-Type-Options': 'nosniff',
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, base);
    return void res.end();
  }
  const range = parseRange(req.headers.range, info.size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...base, 'Content-Range': `bytes */${info.size}`, 'Content-Length': '0' });
    return void res.end();
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? info.size - 1;
  const headers = { ...base, 'Content-Length': String(info.size === 0 ? 0 : end - start + 1), ...(range ? { 'Content-Range': `bytes ${start}-${end}/${info.size}` } : {}) };
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD' || info.size === 0) return void res.end();
  // A larger read buffer measurably raises throughput for 100-500 KB segments (DESIGN.md section 7).
  await pipeline(createReadStream(file, { start, end, highWaterMark: 256 * 1024 }), res).catch(() => res.destroy());
}
