// Process entry: wires the real streams, SIGINT/SIGTERM cancellation and the exit code to run().
import { stopWithLauncher } from './launcher.js';
import { run } from './program.js';

/**
 * Runs the CLI on this process's streams. The first SIGINT or SIGTERM cancels cleanly (jobs resume later, `serve` and
 * `worker` stop within their shutdown timeout); a second one calls `exitNow` (bin/wmark.js: exit 130 at once).
 */
export async function main(argv: string[], exitNow: (code: number) => void): Promise<number> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    if (++interrupts > 1) return exitNow(130);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Started by npm (npx wmark serve): stopping npm stops this process too, as a SIGTERM would.
  const unwatch = stopWithLauncher(process.env, onSignal);
  const code = await run(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  });
  unwatch();
  return controller.signal.aborted && code !== 0 ? 130 : code;
}
