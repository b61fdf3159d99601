// The one way tests and benches start a process they keep running (serve, workers, Redis, PostgreSQL, HAProxy, a bare
// server) or collect from: spawned with its env and folder, the tail of its output kept, ready once a line shows up or a
// probe answers, and when it is not, an error that names the command, how it ended or the deadline, and the output's
// tail. Its handle's stop() is stopProcess (harness/stop-process.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { type Exit, type StopOptions, stopProcess } from './stop-process.js';

/** What tells that a process is ready: a line it prints, or a probe from outside (a socket or URL that answers). */
export type Ready = { line: RegExp; stream?: 'stdout' | 'stderr' | 'either'; what?: string } | { probe: () => Promise<boolean>; everyMs: number; what: string };

export interface StartOptions {
  /** What the process is, in messages: 'wmark serve', 'redis-server'. */
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  /** Exactly its environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** In a process group of its own, which stop() then signals whole (the process and whatever it started). */
  detached?: boolean;
  /** Written to its stdin, which is then closed (default: no stdin at all). */
  stdin?: string;
  /** Its stdin left open for the caller to write to (`proc.stdin`), as a person at a terminal would. */
  interactive?: boolean;
  ready?: Ready;
  /** How long it has to get ready; past it, it is SIGKILLed and `ready` rejects (default: no deadline). */
  timeoutMs?: number;
  /** Characters of each stream kept (default 64 KiB; Infinity for a caller that reads the whole log). */
  keep?: number;
  /** Follows "cannot run <name>" when the command cannot be started at all: where to get it. */
  hint?: string;
  /** Each chunk it writes, as it comes. */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /** How stop() stops it: default SIGTERM, 10 s before SIGKILL, the whole group when detached. */
  stop?: Partial<StopOptions>;
}

export interface Started {
  readonly name: string;
  readonly proc: ChildProcess;
  /** The ready line's match (empty for a probe or no condition); rejects saying why it never got ready. */
  readonly ready: Promise<string[]>;
  /** How it ended, as soon as it has. */
  readonly exited: Promise<Exit>;
  /** How it ended, once its output is all read too; rejects when it could not be started at all. */
  readonly closed: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  /** Both streams as they came. */
  output(): string;
  /** stopProcess with the start's stop options, overridable. */
  stop(options?: Partial<StopOptions>): Promise<Exit>;
}

const DEFAULT_KEEP = 64 * 1024;
/** How much of the output a failure message quotes. */
const TAIL_LINES = 40;
const TAIL_CHARS = 4000;

/** The last `keep` characters of `text`. */
export function keepTail(text: string, keep: number): string {
  return text.length > keep ? text.slice(text.length - keep) : text;
}

/** Splits a stream into complete lines as chunks arrive; `push` returns the lines a chunk completed. */
export class LineSplitter {
  private rest = '';
  push(chunk: string): string[] {
    const parts = (this.rest + chunk).split('\n');
    this.rest = parts.pop()!;
    return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }
}

/** A command line as a reader would type it (arguments with spaces or quotes single-quoted). */
export function commandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** "exited with code 3", "was killed by SIGKILL". */
export function describeExit(exit: Exit): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/** What a ready condition waits for, in words. */
export function readyWhat(ready: Ready): string {
  if ('probe' in ready) return ready.what;
  return ready.what ?? `a line matching ${ready.line} on ${ready.stream === 'either' ? 'stdout or stderr' : (ready.stream ?? 'stdout')}`;
}

/** Why a process is not ready, with its command and the tail of what it printed. */
export function notReadyMessage(parts: { name: string; command: string; why: string; waitingFor?: string; output: string }): string {
  const lines = parts.output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
  const tail = keepTail(lines, TAIL_CHARS);
  return [
    `${parts.name} ${parts.why}${parts.waitingFor ? ` (waiting for ${parts.waitingFor})` : ''}`,
    `  $ ${parts.command}`,
    tail ? `--- its last output:\n${tail}` : '--- it printed nothing',
  ].join('\n');
}

/** Starts the process; see StartOptions and Started. */
export function startProcess(options: StartOptions): Started {
  const keep = options.keep ?? DEFAULT_KEEP;
  const command = commandLine(options.command, options.args);
  const stopDefaults: StopOptions = { signal: 'SIGTERM', graceMs: 10_000, group: options.detached ?? false, ...options.stop };
  const proc = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: options.detached,
    stdio: [options.stdin === undefined && !options.interactive ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) proc.stdin!.end(options.stdin);
  const text = { stdout: '', stderr: '', output: '' };
  const splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  const lineListeners: ((line: string, stream: 'stdout' | 'stderr') => void)[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    proc[stream]!.setEncoding('utf8').on('data', (chunk: string) => {
      text[stream] = keepTail(text[stream] + chunk, keep);
      text.output = keepTail(text.output + chunk, keep);
      options.onOutput?.(chunk, stream);
      if (lineListeners.length) for (const line of splitters[stream].push(chunk)) for (const l of lineListeners) l(line, stream);
    });
  }
  const ended = () => ({ code: proc.exitCode, signal: proc.signalCode });
  const exited = new Promise<Exit>((resolve) => {
    proc.once('exit', (code, signal) => resolve({ code, signal }));
    proc.once('close', () => resolve(ended()));
  });
  const cannotRun = (error: Error) => new Error(`cannot run ${options.name}${options.hint ? ` (${options.hint})` : ''}: ${error.message}\n  $ ${command}`);
  const closed = new Promise<Exit>((resolve, reject) => {
    proc.once('error', (error) => proc.pid === undefined && reject(cannotRun(error)));
    proc.once('close', () => resolve(ended()));
  });
  closed.catch(() => {});
  const stop = (more: Partial<StopOptions> = {}) => stopProcess(proc, { ...stopDefaults, ...more });

  const ready = new Promise<string[]>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, match: string[] = []) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      lineListeners.length = 0;
      if (error) reject(error);
      else resolve(match);
    };
    const waitingFor = options.ready ? readyWhat(options.ready) : undefined;
    const fail = (why: string) => finish(new Error(notReadyMessage({ name: options.name, command, why, waitingFor, output: text.output })));
    proc.once('error', (error) => finish(cannotRun(error)));
    // The last words of a process are often what says why it died: wait (briefly) for its pipes to drain.
    void exited.then(async (exit) => {
      if (settled || proc.pid === undefined) return;
      await Promise.race([closed, new Promise((r) => setTimeout(r, 200))]);
      fail(`${describeExit(exit)} before it was ready`);
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            if (settled) return;
            fail(`was not ready within ${options.timeoutMs! / 1000} s`);
            void stopProcess(proc, { signal: 'SIGKILL', graceMs: 1_000, group: stopDefaults.group });
          }, options.timeoutMs);
    const condition = options.ready;
    if (!condition) finish(undefined);
    else if ('line' in condition) {
      const from = condition.stream ?? 'stdout';
      lineListeners.push((line, stream) => {
        if (from !== 'either' && stream !== from) return;
        const m = condition.line.exec(line);
        if (m) finish(undefined, [...m]);
      });
    } else {
      void (async () => {
        while (!settled) {
          if (await condition.probe().catch(() => false)) return finish(undefined);
          await new Promise((r) => setTimeout(r, condition.everyMs));
        }
      })();
    }
  });
  // A caller that never asks whether it got ready must not see an unhandled rejection when it ends.
  ready.catch(() => {});

  return {
    name: options.name,
    proc,
    ready,
    exited,
    closed,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    output: () => text.output,
    stop,
  };
}
