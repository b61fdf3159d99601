// Waiting on the farm for as long as the caller wants: the task itself stays queued when the wait is given up.
import { WmarkError } from '../core/errors.js';

/** Stops waiting when `signal` aborts (CANCELLED); the task stays queued, and asking again joins it. */
export function abortable<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new WmarkError('CANCELLED', 'render cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new WmarkError('CANCELLED', 'render cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
