// Stopping `npx wmark serve` stops wmark too. npm runs a package's command below a shell (npm -> sh -c -> node), and
// passes a SIGTERM on to the shell, which does not pass it on: a stopped npx would leave its serve (or demo, or worker)
// running, holding its port. So a process started by npm watches the process that launched it, and stops as if
// signalled when that goes. Ctrl-C at a terminal reaches the whole process group and needs none of this.
import { readFileSync } from 'node:fs';
import { isAlive } from './process-alive.js';

const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ash', 'busybox']);
const EVERY_MS = 500;

/** The parent of `pid` and its command name, from /proc (Linux); undefined elsewhere or when it has gone. */
function procInfo(pid: number): { ppid: number; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read around the last ')'.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? { ppid, comm } : undefined;
  } catch {
    return undefined;
  }
}

/** The process that launched this one: npm itself when a shell stands between (npm's `sh -c`), else the parent. */
function launcherPid(parent = process.ppid): number {
  const info = procInfo(parent);
  return info && SHELLS.has(info.comm) && info.ppid > 1 ? info.ppid : parent;
}

/**
 * Under npm (npx, npm exec, npm run: npm sets npm_lifecycle_event), calls `stop` once the launcher has gone. Returns a
 * function that stops watching. Elsewhere it does nothing: a serve started with nohup or & outlives its shell on purpose.
 */
export function stopWithLauncher(env: Readonly<Record<string, string | undefined>>, stop: () => void): () => void {
  if (!env.npm_lifecycle_event) return () => undefined;
  const parent = process.ppid;
  const launcher = launcherPid(parent);
  const timer = setInterval(() => {
    // Re-parented (the parent went) or the launcher gone: nobody is left to stop this process.
    if (process.ppid !== parent || !isAlive(launcher)) {
      clearInterval(timer);
      stop();
    }
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
