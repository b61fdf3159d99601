// Shared pieces of background work: the lease staleness rule and a bounded, in-order task pool.
import { WmarkError } from '../core/errors.js';

/** A lease whose heartbeat is older than this belongs to a dead process and may be taken over. */
export const LEASE_STALE_MS = 20_000;

/** Runs tasks in order with at most `size` in flight; the first failure stops new tasks and is rethrown after the others settle. */
export async function runPool<T>(items: T[], size: number, task: (item: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length && failure === undefined && !signal?.aborted) {
      const item = items[next++]!;
      try {
        await task(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  if (failure !== undefined) throw failure;
  if (signal?.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
}
