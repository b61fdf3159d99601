// The HTTP client of the remote service: fetch with a per-attempt timeout and a deadline, transient failures retried, JSON checked with zod.
import type { z } from 'zod';
import { type ErrorKind, WmarkError } from '../core/errors.js';
import { sleep } from '../service/watch.js';
import { type AttemptOutcome, DEFAULT_RETRY, decideRetry, type RetryPolicy } from './retry.js';
import { parseErrorBody, serverError } from './server-error.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

interface RetryNotice {
  request: string;
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface ClientOptions {
  fetch?: FetchLike;
  /** Longest wait for one attempt (a long-poll may hold the request); the deadline caps it further. */
  attemptTimeoutMs?: number;
  retry?: RetryPolicy;
  /** User cancellation (Ctrl-C). */
  signal?: AbortSignal;
  now?: () => number;
  random?: () => number;
  userAgent?: string;
  onRetry?: (notice: RetryNotice) => void;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE' | 'HEAD';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Safe to repeat after a dropped connection; GET by default. */
  idempotent?: boolean;
  /** Absolute time (ms) after which the request, retries included, gives up with exit 124. */
  deadline: number;
  /** What the deadline came from, for the message (e.g. "--timeout 30s"). */
  timeoutLabel?: string;
  retry?: RetryPolicy;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The request as "METHOD url" (the URL without its query, which may carry a signature). */
  request: string;
  attempts: number;
  /** Set when a transient failure status was returned because retrying stopped (attempts or time used up). */
  gaveUp?: string;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 150_000;

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed while sending',
  UND_ERR_SOCKET: 'connection closed by the service',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** The request for messages: method and URL without query (signed links carry their signature there). */
export function describeRequest(method: string, url: string): string {
  try {
    const u = new URL(url);
    return `${method} ${u.origin}${u.pathname}`;
  } catch {
    return `${method} ${url}`;
  }
}

/** The system/undici code behind a fetch failure ("fetch failed" hides it in `cause`). */
export function networkCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'ERR_INVALID_ARG_TYPE') return code;
    const errors = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.length) {
      const inner = networkCode(errors[0]);
      if (inner) return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The most specific message in a cause chain ("fetch failed" says nothing; its cause says "bad port"). */
function rootMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let e = (error as { cause?: unknown })?.cause, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e.message) message = e.message;
  return message;
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

function interrupted(): WmarkError {
  return new WmarkError('INTERRUPTED', 'interrupted');
}

function timeoutError(request: string, waitedMs: number, label?: string): WmarkError {
  return new WmarkError('TIMEOUT', `timed out after ${formatSeconds(waitedMs)}: no answer from ${request}`, {
    hint: label ? `Raise ${label}, or check that the service is healthy.` : 'Raise --timeout, or check that the service is healthy.',
  });
}

export class HttpClient {
  private readonly fetchImpl: FetchLike;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: ClientOptions = {}) {
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get signal(): AbortSignal | undefined {
    return this.options.signal;
  }

  /** Sends the request, retrying transient failures within the deadline; any final HTTP status is returned, not thrown. */
  async send(spec: RequestSpec): Promise<RawResponse> {
    const request = describeRequest(spec.method, spec.url);
    const idempotent = spec.idempotent ?? (spec.method === 'GET' || spec.method === 'HEAD');
    const policy = spec.retry ?? this.options.retry ?? DEFAULT_RETRY;
    const started = this.now();
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...(this.options.userAgent ? { 'User-Agent': this.options.userAgent } : {}),
      ...(spec.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...spec.headers,
    };
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    for (let attempt = 1; ; attempt++) {
      const remaining = spec.deadline - this.now();
      if (remaining <= 0) throw timeoutError(request, this.now() - started, spec.timeoutLabel);
      const result = await this.attempt(spec, headers, body, Math.min(this.options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS, remaining));
      const outcome: AttemptOutcome =
        result.kind === 'response'
          ? { kind: 'response', status: result.status, retryAfter: result.headers.get('retry-after') }
          : result.kind === 'timeout'
            ? { kind: 'timeout' }
            : { kind: 'network', code: result.code };
      if (result.kind === 'response' && result.status < 400) return { ...result, request, attempts: attempt };
      const decision = decideRetry({ outcome, attempt, idempotent, remainingMs: spec.deadline - this.now(), nowMs: this.now(), random: this.random(), policy });
      if (!decision.retry) {
        if (result.kind === 'response')
          return {
            ...result,
            request,
            attempts: attempt,
            ...(attempt > 1 || result.status === 429 || result.status >= 500 ? { gaveUp: decision.reason } : {}),
          };
        if (result.kind === 'timeout' || spec.deadline - this.now() <= 0) throw timeoutError(request, this.now() - started, spec.timeoutLabel);
        const words = (result.code && NETWORK_WORDS[result.code]) ?? result.message;
        throw new WmarkError(
          'REMOTE_UNREACHABLE',
          `cannot reach the service: ${request}: ${words}${result.code && !words.includes(result.code) ? ` (${result.code})` : ''}${attempt > 1 ? ` (gave up after ${attempt} attempts)` : ''}`,
          {
            hint: 'Check the URL (--remote, WMARK_API_URL or remote.url in the config) and that the service is running.',
            cause: result.error,
          },
        );
      }
      this.options.onRetry?.({ request, attempt, delayMs: decision.delayMs, reason: decision.reason });
      await sleep(decision.delayMs, this.options.signal);
    }
  }

  private async attempt(
    spec: RequestSpec,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<
    | { kind: 'response'; status: number; headers: Headers; text: string }
    | { kind: 'timeout' }
    | { kind: 'network'; code?: string; message: string; error: unknown }
  > {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const user = this.options.signal;
    const onUserAbort = () => controller.abort();
    if (user?.aborted) throw interrupted();
    user?.addEventListener('abort', onUserAbort, { once: true });
    try {
      const res = await this.fetchImpl(spec.url, { method: spec.method, headers, body, signal: controller.signal, redirect: 'follow' });
      // The body is read under the same timer: a service that sends headers and then stalls is still cut off.
      const text = await res.text();
      return { kind: 'response', status: res.status, headers: res.headers, text };
    } catch (error) {
      if (user?.aborted) throw interrupted();
      if (timedOut) return { kind: 'timeout' };
      return { kind: 'network', code: networkCode(error), message: rootMessage(error), error };
    } finally {
      clearTimeout(timer);
      user?.removeEventListener('abort', onUserAbort);
    }
  }
}

/** A 2xx response's JSON checked against a schema (unknown fields kept by the schema); anything else becomes a WmarkError. */
export function expectJson<S extends z.ZodType>(res: RawResponse, schema: S, what: string): z.infer<S> {
  if (res.status < 200 || res.status >= 300) throw errorFromResponse(res);
  let value: unknown;
  try {
    value = JSON.parse(res.text);
  } catch {
    const snippet = res.text.trim().replace(/\s+/g, ' ').slice(0, 120);
    throw new WmarkError(
      'BAD_RESPONSE',
      `the service answered HTTP ${res.status} to ${res.request} with a body that is not valid JSON${snippet ? `: ${JSON.stringify(snippet)}${res.text.trim().length > 120 ? '…' : ''}` : ' (empty)'}`,
      {
        hint: 'Check that the URL points at a watermarking service that speaks API 1.0 or 2.0 (docs/api.md).',
      },
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? `${i.path.map(String).join('.')}: ` : ''}${i.message}`);
    throw new WmarkError('BAD_RESPONSE', `unexpected ${what} from ${res.request}: ${issues.join('; ')}`, {
      details: issues,
      hint: 'Check that the URL points at a watermarking service that speaks API 1.0 or 2.0 (docs/api.md).',
    });
  }
  return parsed.data;
}

/** A non-2xx response as a WmarkError carrying the service's message and status. */
export function errorFromResponse(res: RawResponse, options: { kind?: ErrorKind; exitCode?: number; hint?: string } = {}): WmarkError {
  const info = parseErrorBody(res.status, res.headers.get('content-type'), res.text);
  return serverError(info, { request: res.request, note: res.gaveUp && res.attempts > 1 ? `(gave up after ${res.attempts} attempts)` : undefined, ...options });
}
