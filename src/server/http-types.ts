// The server's handlers work on plain data: a request (method, raw target, headers, a body to read on demand) in, a
// response (status, headers, body: text, bytes or a file range) out. node:http is only at the edge (node-server.ts),
// so every handler can be called in-process, as hono's own tests call app.request().
import type { Readable } from 'node:stream';
import { isWmarkError, WmarkError } from '../core/errors.js';
import { checkStorableJson, decodeUtf8 } from '../core/storable-text.js';

export interface ApiRequest {
  method: string;
  /** The request target exactly as sent (path and query): signatures are checked on it, never on a parsed form. */
  rawUrl: string;
  /** The raw path, before any decoding. */
  path: string;
  url: URL;
  /** Lower-case names; a repeated header keeps its first value. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The JSON body: undefined when empty; BODY_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE or INVALID_JSON when it is not one. */
  body(): Promise<unknown>;
  /** The peer's address, when there is a socket. */
  remoteAddress?: string;
}

/** A byte range of a file, streamed by the edge (inclusive bounds). */
export interface FileBody {
  file: string;
  start: number;
  end: number;
}

/** An object of a media store too large to hold in memory, already opened (a store that fails did so before the head). */
export interface StoreBody {
  stream: Readable;
  /** The bytes the head announced: a stream that gives other than these cuts the transfer. */
  length: number;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body?: string | Buffer | FileBody | StoreBody;
  /** The route pattern that answered (set by the app, for its logs and metrics). */
  route?: string;
}

export type Params = Readonly<Record<string, string | undefined>>;
export type RouteHandler = (req: ApiRequest, params: Params) => Promise<ApiResponse>;

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** CORS for media and signed links: any origin may GET (players fetch cross-origin), never with credentials. */
export const MEDIA_CORS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Range',
  'Access-Control-Expose-Headers': 'Content-Length, Content-Range, Accept-Ranges',
  'Access-Control-Max-Age': '600',
};

export function isFileBody(body: ApiResponse['body']): body is FileBody {
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && 'file' in body;
}

export function isStoreBody(body: ApiResponse['body']): body is StoreBody {
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && 'stream' in body;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers },
    body: JSON.stringify(body),
  };
}

/** Error body: `{message, code}` (a validation error lists every problem as an array of messages). Never a stack. */
export function errorResponse(error: unknown, headers: Record<string, string> = {}): ApiResponse {
  if (!isWmarkError(error) || error.kind === 'unexpected') return json(500, { message: 'internal error', code: 'INTERNAL' }, headers);
  const message = error.kind === 'usage' && error.details.length ? error.details : error.message;
  return json(error.httpStatus, { message, code: error.code, ...(error.hint ? { hint: error.hint } : {}) }, { ...headers, ...error.headers });
}

/**
 * Reads a JSON body from its bytes (or text): JSON only (by Content-Type), empty allowed (undefined), and only text a
 * state store can hold (TEXT_NOT_STORABLE naming the field otherwise).
 */
export function parseJsonBody(body: string | Uint8Array, contentType: string | undefined): unknown {
  const text = typeof body === 'string' ? body : decodeUtf8('body', body);
  if (!text.trim()) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new WmarkError('UNSUPPORTED_MEDIA_TYPE', `request bodies must be JSON (Content-Type: application/json), got ${type || 'no Content-Type'}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new WmarkError('INVALID_JSON', `malformed JSON body: ${(error as Error).message}`);
  }
  checkStorableJson(parsed);
  return parsed;
}

export function bodyTooLarge(): WmarkError {
  return new WmarkError('BODY_TOO_LARGE', `request body is larger than ${BODY_LIMIT_BYTES} bytes`);
}
