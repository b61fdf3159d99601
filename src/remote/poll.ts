// Polls a signed watermark link (the 1.0 long-poll href, SPEC 4.3) until READY or FAILED, within a deadline.
import { ERRORS, WmarkError } from '../core/errors.js';
import { errorFromResponse, expectJson, formatSeconds, sleep, type HttpClient } from './client.js';
import { DEFAULT_RETRY } from './retry.js';
import { FINAL_STATUSES, watermarkResponseSchema, type RemoteWatermark } from './schemas.js';

/** SPEC 8: the reference poll interval. */
export const DEFAULT_POLL_INTERVAL_MS = 3_000;

export interface PollOptions {
  intervalMs: number;
  deadline: number;
  timeoutLabel: string;
  signal?: AbortSignal;
  now?: () => number;
  /** After every answer that is not final yet. */
  onStatus?: (status: string, elapsedMs: number) => void;
}

export interface PollResult {
  response: RemoteWatermark;
  elapsedMs: number;
  polls: number;
}

export async function pollHref(client: HttpClient, href: string, options: PollOptions): Promise<PollResult> {
  const now = options.now ?? Date.now;
  const started = now();
  for (let polls = 1; ; polls++) {
    // Transient failures are retried for as long as the deadline allows, not a fixed number of times.
    const res = await client.send({ method: 'GET', url: href, deadline: options.deadline, timeoutLabel: options.timeoutLabel, retry: { ...DEFAULT_RETRY, maxAttempts: Infinity } });
    if (res.status === 403 || res.status === 410) {
      const e = errorFromResponse(res, { kind: 'auth', hint: ERRORS.LINK_REFUSED.hint });
      throw Object.assign(e, { message: `the link was refused, it has expired or is not valid: ${e.message}` });
    }
    const response = expectJson(res, watermarkResponseSchema, 'watermark status');
    const elapsedMs = now() - started;
    if (FINAL_STATUSES.has(response.status)) return { response, elapsedMs, polls };
    options.onStatus?.(response.status, elapsedMs);
    const left = options.deadline - now();
    if (left <= 0) throw stillPending(response.status, elapsedMs, options.timeoutLabel);
    await sleep(Math.min(options.intervalMs, left), options.signal);
    if (options.deadline - now() <= 0) throw stillPending(response.status, now() - started, options.timeoutLabel);
  }
}

function stillPending(status: string, elapsedMs: number, label: string): WmarkError {
  return new WmarkError('TIMEOUT', `timed out after ${formatSeconds(elapsedMs)}: the watermark is still ${status}`, {
    hint: `Raise ${label}, or poll again later with \`wmark poll <href>\`.`,
  });
}
