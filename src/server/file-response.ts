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

/** What a response needs to know of a stored body: its size and last modification (ms since the epoch). */
export interface BodyStat {
  size: number;
  modified: number;
}

/** The validator for a body of this size and modification time (the same for a local file and a stored object). */
export function bodyEtag(info: BodyStat): string {
  return `"${info.size.toString(16)}-${Math.floor(info.modified).toString(16)}"`;
}

/**
 * The status and headers for a body, whether a file or a stored object: 304 on a matching If-None-Match, 416 for a
 * range past the end, 206 with Content-Range for a satisfiable one, else 200; `range` is the bytes to send, if any.
 */
export function bodyResponseHead(
  req: ApiRequest,
  info: BodyStat,
  options: FileResponseOptions,
): { status: number; headers: Record<string, string>; range?: { start: number; end: number } } {
  const etag = bodyEtag(info);
  const headers: Record<string, string> = {
    ...options.headers,
    'Content-Type': options.contentType,
    'Accept-Ranges': 'bytes',
    'Cache-Control': options.cacheControl,
    ETag: etag,
    'Last-Modified': new Date(info.modified).toUTCString(),
    'X-Content-Type-Options': 'nosniff',
  };
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  const range = parseRange(req.headers.range, info.size);
  if (range === 'unsatisfiable') return { status: 416, headers: { ...headers, 'Content-Range': `bytes */${info.size}`, 'Content-Length': '0' } };
  const start = range?.start ?? 0;
  const end = range?.end ?? info.size - 1;
  headers['Content-Length'] = String(info.size === 0 ? 0 : end - start + 1);
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${info.size}`;
  return { status: range ? 206 : 200, headers, ...(info.size > 0 ? { range: { start, end } } : {}) };
}

export async function fileResponse(req: ApiRequest, file: string, options: FileResponseOptions): Promise<ApiResponse> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new WmarkError('NOT_FOUND', 'no such file');
  const { status, headers, range } = bodyResponseHead(req, { size: info.size, modified: info.mtimeMs }, options);
  return { status, headers, ...(range ? { body: { file, ...range } } : {}) };
}
