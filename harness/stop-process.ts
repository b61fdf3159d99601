// The one way tests and benches stop a process they started (serve, workers, Redis, PostgreSQL, HAProxy): a signal, a
// deadline, then SIGKILL; it resolves with how the process ended.
import type { ChildProcess } from 'node:child_process';

export interface StopOptions {
  /** The polite signal (default SIGTERM; PostgreSQL wants SIGINT for a fast shutdown). */
  signal?: NodeJS.Signals;
  /** How long the process has to exit before SIGKILL. */
  graceMs: number;
  /** Signal its whole process group (a child spawned `detached`, with whatever it started), not only the process. */
  group?: boolean;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Signals the process and waits for it to exit; SIGKILL when it has not after `graceMs`. At once when it has gone. */
export async function stopProcess(proc: ChildProcess | undefined, options: StopOptions): Promise<Exit> {
  // No pid: it never started (spawn failed), so there is nothing to signal.
  if (!proc || proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null)
    return { code: proc?.exitCode ?? null, signal: proc?.signalCode ?? null };
  const exited = new Promise<Exit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const send = (signal: NodeJS.Signals) => {
    if (!options.group) proc.kill(signal);
    else {
      try {
        process.kill(-proc.pid!, signal);
      } catch {
        // The group has gone already: its leader's exit is on its way.
      }
    }
  };
  send(options.signal ?? 'SIGTERM');
  const timer = setTimeout(() => send('SIGKILL'), options.graceMs);
  const exit = await exited;
  clearTimeout(timer);
  return exit;
}
