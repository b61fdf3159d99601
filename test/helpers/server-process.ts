// What the throwaway servers of the tests (redis-server, postgres) share: stopping one, and starting one again on
// another free port when the first was taken between freePort() and its bind.
import type { ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';

/** Signals the process and waits for it to exit; SIGKILL when it has not after `graceMs`. */
export async function stopProcess(proc: ChildProcess | undefined, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Runs `launch` on `port`, and on up to two more free ports when it failed because the port was taken (`portTaken`);
 * `failed` cleans up after each failure (and `gaveUp` after the last). Resolves with the port it started on.
 */
export async function launchOnFreePort(
  port: number,
  steps: { launch: (port: number) => Promise<void>; failed: () => Promise<void>; portTaken: () => boolean; gaveUp: () => void },
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      await steps.launch(port);
      return port;
    } catch (error) {
      await steps.failed();
      if (attempt >= 2 || !steps.portTaken()) {
        steps.gaveUp();
        throw error;
      }
      port = await freePort();
    }
  }
}

/**
 * Resolves when the server has logged `ready` (stdout or stderr); rejects when it fails to run, exits, or takes longer
 * than `timeoutMs`. Everything it logs goes to `log`.
 */
export function untilReady(
  proc: ChildProcess,
  options: { name: string; ready: string; timeoutMs: number; log: (chunk: string) => string; cannotRun: (message: string) => string },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start within ${options.timeoutMs / 1000} s:\n${output}`)), options.timeoutMs);
    const onData = (chunk: Buffer) => {
      output = options.log(chunk.toString('utf8'));
      if (output.includes(options.ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(options.cannotRun(error.message)));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited with code ${code}:\n${output}`));
    });
  });
}
