// Turns a service's error response ({message} string or array, {message, code}, or anything else) into a WmarkError, message kept as sent.
import { ERRORS, type ErrorKind, ServiceError } from '../core/errors.js';

export interface ServerErrorInfo {
  status: number;
  /** The service's own error code, when its body carried one. */
  code?: string;
  /** The service's messages, as sent (an array stays an array). */
  messages: string[];
  hint?: string;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asMessages(v: unknown): string[] {
  if (typeof v === 'string') return v.trim() ? [v] : [];
  if (Array.isArray(v))
    return v.flatMap((m) =>
      typeof m === 'string' ? [m] : isRecord(m) && typeof m.message === 'string' ? [m.message] : m === null || m === undefined ? [] : [JSON.stringify(m)],
    );
  return [];
}

/** Reads an error body: JSON `{message, code?, hint?}` (also `error` as a string or such an object); otherwise a short piece of the text. */
export function parseErrorBody(status: number, contentType: string | null, text: string): ServerErrorInfo {
  const info: ServerErrorInfo = { status, messages: [] };
  let body: unknown;
  try {
    body = text.trim() ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (isRecord(body)) {
    const inner = isRecord(body.error) ? body.error : body;
    info.messages = asMessages(inner.message);
    if (!info.messages.length) info.messages = asMessages(body.error ?? body.errors ?? body.detail);
    const code = inner.code ?? body.code;
    if (typeof code === 'string' && code.trim()) info.code = code.trim();
    else if (typeof code === 'number') info.code = String(code);
    if (typeof inner.hint === 'string' && inner.hint.trim()) info.hint = inner.hint;
  } else if (Array.isArray(body) || typeof body === 'string') {
    info.messages = asMessages(body);
  } else if (text.trim() && !/html/i.test(contentType ?? '') && !/^\s*</.test(text)) {
    const line = text.trim().replace(/\s+/g, ' ');
    info.messages = [line.length > 300 ? `${line.slice(0, 300)}…` : line];
  }
  return info;
}

/** How a status the service answered with is treated here: 401/403 are credentials, 429 and 5xx the service's trouble. */
export function kindForStatus(status: number): ErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not-found';
  if (status === 409) return 'conflict';
  if (status === 410) return 'gone';
  if (status === 422) return 'unprocessable';
  if (status === 429 || status >= 500 || status < 400) return 'remote';
  return 'usage';
}

/** Exit codes for a service's own codes, by kind, as the catalogue gives them to ours (README: exit codes). */
function exitCodeFor(kind: ErrorKind): number {
  return { auth: ERRORS.AUTH_INVALID.exit, remote: ERRORS.REMOTE_UNREACHABLE.exit, timeout: ERRORS.TIMEOUT.exit }[kind as string] ?? ERRORS.USAGE.exit;
}

function defaultHint(status: number): string | undefined {
  if (status === 401) return 'Log in with `wmark auth login`, or check WMARK_TOKEN, WMARK_CLIENT_ID and WMARK_API_KEY.';
  if (status === 429) return 'The service is limiting requests: try again later, or lower --concurrency.';
  if (status >= 500) return 'The service failed or is unavailable: try again later.';
  return undefined;
}

export interface ServerErrorOptions {
  /** e.g. "POST http://host/1.0/watermark", added to the details. */
  request?: string;
  kind?: ErrorKind;
  exitCode?: number;
  hint?: string;
  /** Added after the server's hint-less message, e.g. "(gave up after 5 attempts)". */
  note?: string;
}

/** `HTTP 400 Bad Request (VALIDATION_FAILED): <the service's message>`; several messages become a list, every one kept. */
export function serverError(info: ServerErrorInfo, options: ServerErrorOptions = {}): ServiceError {
  const reason = REASONS[info.status];
  const serviceCode = info.code && /^[A-Za-z0-9_.-]{1,64}$/.test(info.code) ? info.code : undefined;
  const head = `HTTP ${info.status}${reason ? ` ${reason}` : ''}${serviceCode ? ` (${serviceCode})` : ''}`;
  const body =
    info.messages.length === 0
      ? 'the service gave no message'
      : info.messages.length === 1
        ? info.messages[0]!
        : `${info.messages.length} problems:\n  - ${info.messages.join('\n  - ')}`;
  const message = `${head}: ${body}${options.note ? ` ${options.note}` : ''}`;
  const code = serviceCode ?? `HTTP_${info.status}`;
  const kind = options.kind ?? kindForStatus(info.status);
  return new ServiceError(code, kind, options.exitCode ?? exitCodeFor(kind), message, {
    httpStatus: info.status,
    hint: options.hint ?? info.hint ?? defaultHint(info.status),
    details: [...(info.messages.length > 1 ? info.messages : []), ...(options.request ? [`request: ${options.request}`] : [])],
  });
}
