// Process entry: wires the real streams, SIGINT/SIGTERM cancellation and the exit code to run().
import { run } from './program.js';

export async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    // First Ctrl-C cancels cleanly (jobs resume later); a second one leaves at once.
    if (++interrupts > 1) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await run(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  });
  return controller.signal.aborted && code !== 0 ? 130 : code;
}
