// Servers that suites start as child processes (wmark serve, a bare node:http handler): start one and wait for the URL
// it prints (harness/start-process.ts starts it, harness/stop-process.ts stops it), and tell when it has gone idle (no
// ffmpeg or x264 running under it).
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { startProcess } from '../../harness/start-process.js';

export interface Child {
  name: string;
  proc: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Spawns a server and waits for the first stdout line that carries its URL (plain text or wmark's --json line). */
export async function startChild(name: string, cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Child> {
  const server = startProcess({
    name,
    command: cmd,
    args,
    cwd: options.cwd,
    env: options.env,
    ready: { line: /(http:\/\/[^\s"]+)/, what: 'its URL on stdout' },
    timeoutMs: 30_000,
    keep: 20_000,
  });
  const [, url] = await server.ready;
  return { name, proc: server.proc, url: url!.replace(/\/+$/, ''), stderr: server.stderr };
}

/** Process ids of every living descendant of `pid` (Linux /proc; empty elsewhere). */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces and parentheses): state, then the parent's pid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(e), ppid);
    } catch {
      /* exited while we looked */
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length) {
    const next = [...parentOf].filter(([, ppid]) => frontier.includes(ppid)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** The command line of a process, shortened (empty when it has exited). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 160);
  } catch {
    return '';
  }
}

/** Descendants of `pid` that run ffmpeg, ffprobe or x264 (a band render), not, say, the watchdog shell that lives as long as its parent. */
function mediaTools(pid: number): number[] {
  return descendants(pid).filter((p) => {
    try {
      return /^(ff(mpeg|probe)|x264)/.test(readFileSync(`/proc/${p}/comm`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * Waits until a server has had no ffmpeg or x264 under it for `quietMs`, up to `maxMs`: its background rendering has stopped.
 * Returns how long it waited, whether it went idle, and what still ran if it did not.
 */
export async function waitForIdle(
  pid: number,
  options: { quietMs: number; maxMs: number; intervalMs?: number },
): Promise<{ waitedMs: number; idle: boolean; running: string[] }> {
  const t0 = Date.now();
  let quietSince = Date.now();
  for (;;) {
    const running = mediaTools(pid);
    if (running.length) quietSince = Date.now();
    else if (Date.now() - quietSince >= options.quietMs) return { waitedMs: Date.now() - t0, idle: true, running: [] };
    if (Date.now() - t0 > options.maxMs) return { waitedMs: Date.now() - t0, idle: false, running: running.map(commandOf) };
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}
