// A media file as a response, with what players and CDNs expect: type, length, validators, byte ranges (206/416), HEAD.
import { stat } from 'node:fs/promises';
import { WmarkError } from '../core/errors.js';
import { parseRange } from './byte-range.js';
import type { ApiRequest, ApiResponse } from './http-types.js';

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.mp4': 'video/mp4',
  '.m4s': 'video/iso.segment',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface FileResponseOptions {
  contentType: string;
  cacheControl: string;
  headers?: Record<string, string>;
}

export async function fileResponse(req: ApiRequest, file: string, options: FileResponseOptions): Promise<ApiResponse> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new WmarkError('NOT_FOUND', 'no such file');
  const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  const headers: Record<string, string> = {
    ...options.headers,
    'Content-Type': options.contentType,
    'Accept-Ranges': 'bytes',
    'Cache-Control': options.cacheControl,
    ETag: etag,
    'Last-Modified': info.mtime.toUTCString(),
    'X-Content-Type-Options': 'nosniff',
  };
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  const range = parseRange(req.headers.range, info.size);
  if (range === 'unsatisfiable') return { status: 416, headers: { ...headers, 'Content-Range': `bytes */${info.size}`, 'Content-Length': '0' } };
  const start = range?.start ?? 0;
  const end = range?.end ?? info.size - 1;
  headers['Content-Length'] = String(info.size === 0 ? 0 : end - start + 1);
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${info.size}`;
  return { status: range ? 206 : 200, headers, ...(info.size > 0 ? { body: { file, start, end } } : {}) };
}
