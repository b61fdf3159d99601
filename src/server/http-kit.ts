// Small HTTP helpers for the service: JSON bodies with limits, error responses, CORS and raw-path safety checks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WmarkError, isWmarkError } from '../core/errors.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string | string[],
    readonly headers: Record<string, string> = {},
  ) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.messages = Array.isArray(message) ? message : undefined;
  }
  readonly messages?: string[];
}

/** Error body: `{message, code}`; validation errors carry every problem as an array of messages. */
export function sendError(res: ServerResponse, error: unknown, corsHeaders: Record<string, string> = {}): void {
  let status = 500;
  let body: { message: string | string[]; code: string; hint?: string };
  let headers: Record<string, string> = {};
  if (error instanceof HttpError) {
    status = error.status;
    body = { message: error.messages ?? error.message, code: error.code };
    headers = error.headers;
  } else if (isWmarkError(error)) {
    status = error.httpStatus;
    body = { message: error.details.length > 1 && error.kind === 'usage' ? error.details : error.message, code: error.code, ...(error.hint ? { hint: error.hint } : {}) };
  } else {
    // Never a stack trace on the wire: the detail goes to the server log.
    body = { message: 'internal error', code: 'INTERNAL' };
  }
  sendJson(res, status, body, { ...corsHeaders, ...headers });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

/** Reads a JSON body: JSON only, at most 1 MiB, empty allowed (returns undefined). */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) {
    req.resume();
    throw new HttpError(413, 'BODY_TOO_LARGE', `request body is larger than ${BODY_LIMIT_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT_BYTES) throw new HttpError(413, 'BODY_TOO_LARGE', `request body is larger than ${BODY_LIMIT_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `request bodies must be JSON (Content-Type: application/json), got ${type || 'no Content-Type'}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, 'INVALID_JSON', `malformed JSON body: ${(error as Error).message}`);
  }
}

/** Rejects raw paths that try to climb or smuggle separators: `..`, encoded dots/slashes/backslashes, backslashes, NUL. */
export function checkRawPath(rawPath: string): void {
  if (/(^|\/)\.\.?(\/|$)|%2e|%2f|%5c|%00|\\/i.test(rawPath) || rawPath.includes('//')) {
    throw new HttpError(400, 'BAD_PATH', 'malformed request path');
  }
  // Route handlers decode their parameters; a broken escape (`%`, `%ZZ`, a cut UTF-8 sequence) is bad input, not a 500.
  try {
    decodeURIComponent(rawPath);
  } catch {
    throw new HttpError(400, 'BAD_PATH', 'malformed percent-encoding in the request path');
  }
}

/** CORS for media and signed links: any origin may GET (players fetch cross-origin), never with credentials. */
export const MEDIA_CORS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Range',
  'Access-Control-Expose-Headers': 'Content-Length, Content-Range, Accept-Ranges',
  'Access-Control-Max-Age': '600',
};

export function toHttpError(error: unknown): unknown {
  return isWmarkError(error) || error instanceof HttpError ? error : new WmarkError('INTERNAL', 'internal error', { cause: error });
}
