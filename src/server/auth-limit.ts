// Brute-force brake (README.md, "Security model"): failed credential checks (a wrong API key or secret, an invalid
// token) are counted per client address in a fixed window; past the limit, every request from that address that carries
// credentials is answered 429 with Retry-After until the window ends, so guessing cannot go on, right guesses included.
// Behind a reverse proxy every client shares the proxy's address: the limit then applies to all of them together.
// A request without an address (called in-process, no socket) is not limited.
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

export function authLimiter(options: AuthLimitOptions, now: () => number): AuthLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const keyOf = (req: ApiRequest) => req.remoteAddress ?? '';
  return {
    check(req) {
      if (!req.remoteAddress || !CREDENTIAL_HEADERS.some((h) => req.headers[h] !== undefined)) return;
      const w = windows.get(keyOf(req));
      const t = now();
      if (!w || t >= w.resetAt || w.count < options.failures) return;
      const seconds = Math.max(1, Math.ceil((w.resetAt - t) / 1000));
      throw new WmarkError('RATE_LIMITED', `too many failed credential checks from this address; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    },
    record(req, error) {
      if (!req.remoteAddress || !(error instanceof WmarkError) || !FAILURES.has(error.code)) return;
      const key = keyOf(req);
      const t = now();
      let w = windows.get(key);
      if (!w || t >= w.resetAt) {
        windows.delete(key);
        if (windows.size >= MAX_TRACKED) windows.delete(windows.keys().next().value!);
        w = { count: 0, resetAt: t + options.windowMs };
        windows.set(key, w);
      }
      w.count++;
    },
  };
}
