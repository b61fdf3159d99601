// Runs a command as a child process and measures it: wall time, CPU time of the whole process tree (user + sys of all
// waited-for descendants), exit code, output, and optionally when a condition first became true (polled while it runs).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Polled every `intervalMs` while the command runs; the first time it returns true is reported as `readyMs`. */
  poll?: { intervalMs: number; check: () => boolean };
}

export interface Measured {
  /** From spawn to exit, measured here. */
  wallMs: number;
  /** CPU seconds of the command and every descendant it waited for. */
  userS: number;
  sysS: number;
  cpuS: number;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn until `poll.check` first returned true (undefined if it never did). */
  readyMs?: number;
  /** How CPU time was obtained. */
  cpuSource: 'gnu-time' | 'bash-times';
  /** CPU seconds the rest of the machine used while this ran (all busy CPU time minus the command's own): noise. */
  foreignCpuS: number;
}

/** Busy CPU seconds of the whole machine so far (Linux /proc/stat; NaN elsewhere). */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
  } catch {
    return NaN;
  }
}

/** Waits (up to `maxMs`) until the rest of the machine uses less than `maxCores` cores, sampled over 1 s; returns the last sample. */
export async function waitForQuiet(maxCores: number, maxMs: number, log: (m: string) => void): Promise<number> {
  const deadline = Date.now() + maxMs;
  let warned = false;
  for (;;) {
    const a = machineBusySeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const busy = machineBusySeconds() - a;
    if (!(busy >= maxCores) || Date.now() > deadline) {
      if (busy >= maxCores) log(`  machine still busy (${busy.toFixed(2)} cores in use by other processes); measuring anyway`);
      return busy;
    }
    if (!warned) log(`  other processes use ${busy.toFixed(2)} cores; waiting up to ${Math.round(maxMs / 1000)} s for a quiet machine ...`);
    warned = true;
  }
}

const GNU_TIME = '/usr/bin/time';
let gnuTimeWorks: boolean | undefined;

/** GNU time's command line for `cmd args`: wall, user and sys seconds, and the largest process' peak RSS (KB), to `file`. */
export const gnuTimed = (file: string, cmd: string, args: readonly string[]): [string, string[]] => [GNU_TIME, ['-f', '%e %U %S %M', '-o', file, cmd, ...args]];

/** What gnuTimed wrote: user and sys seconds, peak RSS in bytes; undefined when it wrote nothing readable. */
export async function readGnuTime(file: string): Promise<{ userS: number; sysS: number; maxRss: number } | undefined> {
  const m = /([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec((await readFile(file, 'utf8').catch(() => '')).trim());
  return m ? { userS: Number(m[2]), sysS: Number(m[3]), maxRss: Number(m[4]) * 1024 } : undefined;
}

/** The child's exit code once it has closed its streams (128 when a signal ended it). */
export const exitOf = (child: ChildProcess): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });

export async function hasGnuTime(): Promise<boolean> {
  if (gnuTimeWorks !== undefined) return gnuTimeWorks;
  if (!existsSync(GNU_TIME)) {
    gnuTimeWorks = false;
    return false;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-time-'));
  try {
    const out = path.join(dir, 't');
    const code = await new Promise<number>((resolve) => {
      const [bin, argv] = gnuTimed(out, 'true', []);
      const c = spawn(bin, argv, { stdio: 'ignore' });
      c.on('error', () => resolve(-1));
      c.on('exit', (c2) => resolve(c2 ?? -1));
    });
    gnuTimeWorks = code === 0 && (await readGnuTime(out)) !== undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return gnuTimeWorks;
}

/** Parses bash `times` output: the second line holds the children's user and system time, e.g. "0m1.234s 0m0.100s". */
function parseBashTimes(text: string): { user: number; sys: number } | undefined {
  const lines = text.trim().split('\n');
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[1] ?? '');
  if (!m) return undefined;
  return { user: Number(m[1]) * 60 + Number(m[2]), sys: Number(m[3]) * 60 + Number(m[4]) };
}

export async function runMeasured(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<Measured> {
  const useGnu = await hasGnuTime();
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'bench-run-'));
  const timeFile = path.join(tmp, 'time');
  const [bin, argv] = useGnu ? gnuTimed(timeFile, cmd, args) : ['bash', ['-c', '"$@"; rc=$?; times >&3; exit $rc', 'bench', cmd, ...args]];
  try {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const fd3: Buffer[] = [];
    let readyMs: number | undefined;
    const busy0 = machineBusySeconds();
    const t0 = performance.now();
    const child = spawn(bin, argv, { cwd: options.cwd, env: options.env, stdio: useGnu ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => stdout.push(d));
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));
    if (!useGnu) (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => fd3.push(d));
    let timer: NodeJS.Timeout | undefined;
    const poll = options.poll;
    if (poll) {
      const tick = () => {
        if (readyMs !== undefined) return;
        let ok = false;
        try {
          ok = poll.check();
        } catch {
          ok = false;
        }
        if (ok) readyMs = performance.now() - t0;
      };
      timer = setInterval(tick, poll.intervalMs);
    }
    const exitCode = await exitOf(child);
    const wallMs = performance.now() - t0;
    const busy = machineBusySeconds() - busy0;
    if (timer) clearInterval(timer);
    // A condition that became true in the last interval before exit still counts (at the exit time, an upper bound).
    if (poll && readyMs === undefined) {
      try {
        if (poll.check()) readyMs = wallMs;
      } catch {
        /* never ready */
      }
    }
    let userS = NaN;
    let sysS = NaN;
    if (useGnu) {
      const t = await readGnuTime(timeFile);
      if (t) ({ userS, sysS } = t);
    } else {
      const t = parseBashTimes(Buffer.concat(fd3).toString('utf8'));
      if (t) {
        userS = t.user;
        sysS = t.sys;
      }
    }
    return {
      wallMs,
      userS,
      sysS,
      cpuS: userS + sysS,
      exitCode,
      stdout: Buffer.concat(stdout).toString('utf8'),
      stderr: Buffer.concat(stderr).toString('utf8'),
      readyMs,
      cpuSource: useGnu ? 'gnu-time' : 'bash-times',
      foreignCpuS: Math.max(0, busy - (userS + sysS)),
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Throws with the tails of a failed command's output, so the report says why. */
export function fail(what: string, m: Measured): never {
  throw new Error(`${what} exited with code ${m.exitCode}\n--- stderr (tail) ---\n${m.stderr.slice(-3000)}\n--- stdout (tail) ---\n${m.stdout.slice(-1000)}`);
}

/** Flush dirty pages between runs, so one job's writeback is not billed to the next. */
export function settle(): void {
  try {
    execFileSync('sync');
  } catch {
    /* not fatal */
  }
}
