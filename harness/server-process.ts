// What the throwaway servers of the tests (redis-server, postgres, haproxy) share: running one as `nobody` when the
// tests run as root, and starting one again on another free port when the first was taken between freePort() and its
// bind. Starting and stopping one is harness/start-process.ts.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import { freePort } from './free-port.js';

const SETPRIV = '/usr/bin/setpriv';

/**
 * The command wrapped so that the kernel kills it when the test process ends, however that ends (setpriv's
 * parent-death signal): a test that crashes leaves no server behind. setpriv execs the program, so the pid stays the
 * program's own. As is where there is no setpriv.
 */
export function diesWithParent(command: string, args: string[]): [string, string[]] {
  return existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
}

/**
 * As root: the command run as `nobody` through setpriv (PostgreSQL refuses root; no server needs it), the pid the
 * program's own; as anyone else, as is. With `diesWithParent`, also that (set after the change of user, which clears it).
 */
export function asUnprivileged(command: string, args: string[], options: { diesWithParent?: boolean } = {}): [string, string[]] {
  const [cmd, rest] = options.diesWithParent ? diesWithParent(command, args) : [command, args];
  if (process.getuid?.() !== 0) return [cmd, rest];
  return ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', cmd, ...rest]];
}

/** As root: gives these files and folders to `nobody`, for a server started with asUnprivileged to use. */
export function giveToUnprivileged(...paths: string[]): void {
  if (process.getuid?.() !== 0) return;
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const nogroup = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  for (const p of paths) chownSync(p, nobody, nogroup);
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
