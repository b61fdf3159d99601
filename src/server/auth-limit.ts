// Brute-force brake (README.md, "Security model"): credential checks (an API key, an access token) are counted per
// client source in a fixed window, in the state database, so every instance on it shares one count. A check is counted
// as running before it runs and settled after, so checks that race (many at once, on many instances) cannot slip past
// the count: of N wrong ones at once, exactly `failures` are checked and the rest are 429. While running checks fill
// the limit, the next one waits briefly for them rather than be refused. Past the limit, every request from that
// source with credentials is 429 with Retry-After until the window ends, right ones included. The source is the
// client's address as the server context reads it (behind --trust-proxy proxies, X-Forwarded-For), an IPv6 one by
// its prefix. A request without an address (in-process, no socket) is not limited.
import { createHash } from 'node:crypto';
import { WmarkError } from '../core/errors.js';
import { addressGroup } from '../core/ip-address.js';
import type { AuthAttempt } from '../engine/app/credentials.js';
import type { ApiRequest } from './http-types.js';

export interface AuthLimitOptions {
  /** Failed checks allowed per source in one window. */
  failures: number;
  windowMs: number;
  /** Bits of an IPv6 address that name its source (default 64). */
  ipv6PrefixBits?: number;
}

/** The defaults, documented in the README ("Security model"). */
export const AUTH_LIMIT: Readonly<Required<AuthLimitOptions>> = { failures: 10, windowMs: 60_000, ipv6PrefixBits: 64 };
const MAX_TRACKED = 10_000;
/** The errors that mean "these credentials are wrong" (an expired token is not a guess). */
const FAILURES = new Set(['AUTH_INVALID', 'TOKEN_INVALID']);

/** Where the count is kept: the state database, shared by every instance on it. */
interface AttemptCounter {
  take(source: string, windowMs: number, limit: number): Promise<AuthAttempt>;
  settle(source: string, resetAt: number, failed: boolean): Promise<number>;
}

export interface AuthLimiterParts {
  now: () => number;
  counter: AttemptCounter;
  /** The client's address; undefined for a request that has none. */
  addressOf: (req: ApiRequest) => string | undefined;
  /** Told once per window when a source reaches the limit. */
  log?: (line: string) => void;
}

export interface AuthLimiter {
  /**
   * Runs a credential check under the limit: 429 RATE_LIMITED instead when the source is over it. `credentials`
   * (the header values checked) lets a pair this instance saw pass lately skip the count, not the lockout.
   */
  checked<T>(req: ApiRequest, credentials: string, check: () => Promise<T>): Promise<T>;
}

/** How long a check waits for its source's running checks to end when they fill the limit, and how often it looks. */
const BUSY_WAIT_MS = 2_000;
const BUSY_POLL_MS = 20;

/** A map kept to `MAX_TRACKED` entries, the oldest dropped first. */
function boundedSet(map: Map<string, number>, key: string, value: number): void {
  map.delete(key);
  if (map.size >= MAX_TRACKED) map.delete(map.keys().next().value!);
  map.set(key, value);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function authLimiter(options: AuthLimitOptions, { now, counter, addressOf, log }: AuthLimiterParts): AuthLimiter {
  const prefixBits = options.ipv6PrefixBits ?? AUTH_LIMIT.ipv6PrefixBits;
  /** Sources this instance saw reach the limit, and when their window ends. */
  const lockedUntil = new Map<string, number>();
  /** Digests of credentials this instance saw pass, and until when that spares them the count. */
  const passed = new Map<string, number>();

  const refuse = (resetAt: number): never => {
    const seconds = Math.max(1, Math.ceil((resetAt - now()) / 1000));
    throw new WmarkError('RATE_LIMITED', `too many failed credential checks from this address; try again in ${seconds} s`, {
      headers: { 'Retry-After': String(seconds) },
    });
  };
  const lock = (source: string, resetAt: number): never => {
    boundedSet(lockedUntil, source, resetAt);
    return refuse(resetAt);
  };

  /** A place among the source's checks: refused at once past the limit, after a short wait while running ones fill it. */
  async function take(source: string): Promise<AuthAttempt> {
    const giveUpAt = performance.now() + BUSY_WAIT_MS;
    for (;;) {
      const attempt = await counter.take(source, options.windowMs, options.failures);
      if (attempt.taken) return attempt;
      if (attempt.failures >= options.failures) return lock(source, attempt.resetAt);
      if (performance.now() >= giveUpAt) return refuse(now() + 1_000);
      await pause(BUSY_POLL_MS);
    }
  }

  /** Ends a counted check; a count left standing when the database fails here lapses with the window. */
  async function settle(source: string, attempt: AuthAttempt, failed: boolean): Promise<void> {
    const failures = await counter.settle(source, attempt.resetAt, failed).catch(() => 0);
    if (!failed || failures < options.failures) return;
    boundedSet(lockedUntil, source, attempt.resetAt);
    if (failures === options.failures) {
      const seconds = Math.ceil((attempt.resetAt - now()) / 1000);
      log?.(`${options.failures} failed credential checks from ${source}: its requests with credentials get 429 for ${seconds} s`);
    }
  }

  return {
    async checked(req, credentials, check) {
      const address = addressOf(req);
      if (!address) return check();
      const source = addressGroup(address, prefixBits);
      const locked = lockedUntil.get(source);
      if (locked !== undefined && locked > now()) refuse(locked);
      const digest = createHash('sha256').update(credentials).digest('base64url');
      if ((passed.get(digest) ?? 0) > now()) {
        return check().catch((error: unknown) => {
          passed.delete(digest);
          throw error;
        });
      }
      const attempt = await take(source);
      try {
        const result = await check();
        boundedSet(passed, digest, now() + options.windowMs);
        await settle(source, attempt, false);
        return result;
      } catch (error) {
        await settle(source, attempt, error instanceof WmarkError && FAILURES.has(error.code));
        throw error;
      }
    },
  };
}
