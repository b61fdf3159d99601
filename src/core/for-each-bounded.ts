// Runs a task per item with a bounded number in flight (p-limit), stopping on the first failure.
import pLimit from 'p-limit';

/**
 * Calls `task` for every item, at most `size` at a time, in order. After the first failure nothing new starts; the
 * failure is thrown once the tasks already running have finished (so none of them writes after the caller moved on).
 */
export async function forEachBounded<T>(items: readonly T[], size: number, task: (item: T) => Promise<void>): Promise<void> {
  const limit = pLimit(Math.max(1, size));
  let failure: { error: unknown } | undefined;
  await Promise.all(
    items.map((item) =>
      limit(async () => {
        if (failure) return;
        await task(item).catch((error: unknown) => {
          failure ??= { error };
        });
      }),
    ),
  );
  if (failure) throw failure.error;
}
