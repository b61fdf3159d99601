// Brute-force brake (README.md, "Security model"): failed credential checks (a wrong API key or secret, an invalid
// token) are counted per client address in a fixed window; past the limit, every request from that address that carries
// credentials is answered 429 with Retry-After until the window ends, so guessing cannot go on, right guesses included.
// The address is the client's as the server context reads it: behind proxies named with --trust-proxy, from
// X-Forwarded-For; otherwise the socket's peer, so behind an untrusted proxy every client shares the proxy's address
// and the limit applies to all of them together. A request without an address (in-process, no socket) is not limited.
// The count is this process's: each instance behind a load balancer keeps its own.
import { WmarkError } from '../core/errors.js';
import type { ApiRequest } from './http-types.js';

export interface AuthLimitOptions {
  /** Failures allowed per address in one window. */
  failures: number;
  windowMs: number;
}

/** The defaults, documented in the README ("Security model"). */
export const AUTH_LIMIT: Readonly<AuthLimitOptions> = { failures: 10, windowMs: 60_000 };
const MAX_TRACKED = 10_000;
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-api-secret', 'x-api-client-id'];
/** The errors that mean "these credentials are wrong" (an expired token is not a guess). */
const FAILURES = new Set(['AUTH_INVALID', 'TOKEN_INVALID']);

export interface AuthLimiter {
  /** Throws 429 RATE_LIMITED when the request carries credentials and its address is over the limit. */
  check(req: ApiRequest): void;
  /** Counts `error` against the request's address when it is a failed credential check. */
  record(req: ApiRequest, error: unknown): void;
}

export interface AuthLimiterParts {
  now: () => number;
  /** The client's address; undefined for a request that has none. */
  addressOf: (req: ApiRequest) => string | undefined;
  /** Told once per window when an address reaches the limit. */
  log?: (line: string) => void;
}

export function authLimiter(options: AuthLimitOptions, { now, addressOf, log }: AuthLimiterParts): AuthLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    check(req) {
      if (!CREDENTIAL_HEADERS.some((h) => req.headers[h] !== undefined)) return;
      const key = addressOf(req);
      if (!key) return;
      const w = windows.get(key);
      const t = now();
      if (!w || t >= w.resetAt || w.count < options.failures) return;
      const seconds = Math.max(1, Math.ceil((w.resetAt - t) / 1000));
      throw new WmarkError('RATE_LIMITED', `too many failed credential checks from this address; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    },
    record(req, error) {
      if (!(error instanceof WmarkError) || !FAILURES.has(error.code)) return;
      const key = addressOf(req);
      if (!key) return;
      const t = now();
      let w = windows.get(key);
      if (!w || t >= w.resetAt) {
        windows.delete(key);
        if (windows.size >= MAX_TRACKED) windows.delete(windows.keys().next().value!);
        w = { count: 0, resetAt: t + options.windowMs };
        windows.set(key, w);
      }
      w.count++;
      if (w.count === options.failures)
        log?.(`${options.failures} failed credential checks from ${key}: its requests with credentials get 429 for ${Math.ceil((w.resetAt - t) / 1000)} s`);
    },
  };
}
