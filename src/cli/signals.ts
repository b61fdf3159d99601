// Waiting for the end of a long-running command (`serve`, `worker`, a demo that keeps serving).

/** Resolves when the run is interrupted (Ctrl-C, SIGTERM). */
export function whenAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
