// When a remote request is worth another try, and how long to wait first: a pure policy (exponential backoff, jitter, Retry-After).
// Hand-written on purpose: which failures a non-idempotent POST may retry (the service cannot have acted) and a
// Retry-After capped by the --timeout deadline are rules (README.md, "Remote mode") that p-retry and got's retry
// options cannot express.

export interface RetryPolicy {
  /** Attempts in all, the first one included; Infinity = bounded only by the deadline. */
  maxAttempts: number;
  /** Backoff before the second attempt; doubles each time. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 10_000 };

/** What one attempt came to. */
export type AttemptOutcome =
  | { kind: 'response'; status: number; retryAfter?: string | null }
  /** The request failed below HTTP; `code` is the system/undici error code when there is one. */
  | { kind: 'network'; code?: string }
  /** No (complete) answer within the per-attempt timeout. */
  | { kind: 'timeout' };

export interface RetryInput {
  outcome: AttemptOutcome;
  /** 1 for the attempt that just failed. */
  attempt: number;
  /** Safe to repeat after the server may have acted on it (GET, or an idempotent POST). */
  idempotent: boolean;
  /** Time left before the caller's deadline. */
  remainingMs: number;
  nowMs: number;
  /** In [0, 1); injected so tests are deterministic. */
  random: number;
  policy?: RetryPolicy;
}

export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string };

/** Errors where the request surely never reached the server: always safe to send again. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** Connection dropped mid-way: the server may or may not have acted on it. */
const DROPPED = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Statuses that say "not now" rather than "no": a gateway or an overloaded/rate-limiting service. */
export function isTransientStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** Milliseconds to wait from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date names its weekday and month; anything else (e.g. "-3") is not one, whatever Date.parse thinks.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Exponential backoff with "equal jitter": half the step is fixed, half random, so retries spread out but never bunch at zero. */
export function backoffDelay(attempt: number, random: number, policy: RetryPolicy = DEFAULT_RETRY): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + (random * step) / 2);
}

function describe(outcome: AttemptOutcome): string {
  if (outcome.kind === 'response') return `HTTP ${outcome.status}`;
  if (outcome.kind === 'timeout') return 'no answer in time';
  return outcome.code ?? 'connection failed';
}

export function decideRetry(input: RetryInput): RetryDecision {
  const policy = input.policy ?? DEFAULT_RETRY;
  const { outcome } = input;
  const what = describe(outcome);
  let transient: boolean;
  if (outcome.kind === 'response') {
    // 429 and 503 say the request was not processed, so even a non-idempotent one may be sent again.
    transient = isTransientStatus(outcome.status) && (input.idempotent || outcome.status === 429 || outcome.status === 503);
  } else if (outcome.kind === 'network') {
    // A failure without a code (a bad port, an invalid URL) is not going to go away by itself.
    transient = (outcome.code !== undefined && NOT_SENT.has(outcome.code)) || (input.idempotent && outcome.code !== undefined && DROPPED.has(outcome.code));
  } else {
    transient = input.idempotent;
  }
  if (!transient) return { retry: false, reason: what };
  if (input.attempt >= policy.maxAttempts) return { retry: false, reason: `${what} (gave up after ${input.attempt} attempts)` };

  let delayMs = backoffDelay(input.attempt, input.random, policy);
  if (outcome.kind === 'response') {
    const asked = parseRetryAfter(outcome.retryAfter, input.nowMs);
    // The server's own estimate wins over ours; a little jitter keeps a batch from returning in lockstep.
    if (asked !== undefined) delayMs = asked + Math.round(input.random * Math.min(250, asked * 0.1));
  }
  if (delayMs >= input.remainingMs) return { retry: false, reason: `${what} (no time left to retry before the timeout)` };
  return { retry: true, delayMs, reason: what };
}
