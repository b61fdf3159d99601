// Helpers for CLI tests: isolated data/config/cwd folders, an in-process runner bound to them, and the spawned binary.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CliOptions, type CliResult, runCli } from './cli.js';
import { REPO } from './fixtures.js';
import { type Started, startProcess } from './start-process.js';
import type { Exit, StopOptions } from './stop-process.js';

/** Any ANSI escape sequence (SGR colours, cursor movement, spinner frames). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: every ANSI sequence starts with ESC, the character this looks for
export const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/;

export interface Sandbox {
  root: string;
  /** Passed as --data-dir (in-process) or WMARK_HOME (spawned). */
  dataDir: string;
  /** WMARK_CONFIG_DIR: an empty user config folder so the developer's own config never leaks in. */
  configDir: string;
  /** A working folder outside the repository, so the upward config search finds only what a test puts there. */
  cwd: string;
  dispose(): void;
}

/** A throwaway folder tree in the OS temp dir (not under the repo, whose package.json would be searched). */
export function sandbox(label = 'cli'): Sandbox {
  // realpath: config errors name resolved paths, and os.tmpdir() can be a symlink.
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), `wmark-${label}-`)));
  const dataDir = path.join(root, 'data');
  const configDir = path.join(root, 'config');
  const cwd = path.join(root, 'cwd');
  for (const d of [dataDir, configDir, cwd]) mkdirSync(d, { recursive: true });
  return { root, dataDir, configDir, cwd, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** runCli with `--data-dir`, WMARK_CONFIG_DIR and cwd taken from the sandbox (flags and env still overridable). */
export function cliIn(box: Sandbox) {
  return (argv: string[], options: CliOptions = {}): Promise<CliResult> =>
    runCli(['--data-dir', box.dataDir, ...argv], {
      cwd: box.cwd,
      ...options,
      env: { WMARK_CONFIG_DIR: box.configDir, ...options.env },
    });
}

export const BIN = path.join(REPO, 'bin', 'wmark.js');

export interface SpawnResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Spawned {
  child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  done: Promise<SpawnResult>;
  /** stopProcess on it (SIGTERM, then SIGKILL after 10 s, unless told otherwise). */
  stop(options?: Partial<StopOptions>): Promise<Exit>;
}

/** A started process seen as a command whose output is collected: `done` once it has ended and its output is all read. */
export function collected(started: Started): Spawned {
  return {
    child: started.proc,
    stdout: started.stdout,
    stderr: started.stderr,
    done: started.closed.then((exit) => ({ ...exit, stdout: started.stdout(), stderr: started.stderr() })),
    stop: started.stop,
  };
}

/** Starts `command` with exactly `env`, stdio piped and collected whole, stdin fed `stdin` (or closed). */
export function startCommand(command: string, args: string[], options: { env: Record<string, string>; cwd?: string; stdin?: string }): Spawned {
  return collected(
    startProcess({
      name: path.basename(command),
      command,
      args,
      cwd: options.cwd ?? REPO,
      env: options.env,
      stdin: options.stdin ?? '',
      keep: Number.POSITIVE_INFINITY,
    }),
  );
}

/** The environment of a spawned wmark: PATH and HOME from the test process, CI=1 NO_COLOR=1, and `extra` (undefined removes a variable). */
export function wmarkEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ PATH: process.env.PATH, HOME: process.env.HOME, CI: '1', NO_COLOR: '1', ...extra })) {
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** Starts `node bin/wmark.js` with stdio piped and a minimal environment (wmarkEnv). */
export function startWmark(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string } = {}): Spawned {
  return startCommand(process.execPath, [BIN, ...args], { env: wmarkEnv(options.env), cwd: options.cwd, stdin: options.stdin });
}

export function runWmark(args: string[], options: Parameters<typeof startWmark>[1] = {}): Promise<SpawnResult> {
  return startWmark(args, options).done;
}

/** Resolves when `check` returns a truthy value; rejects after `timeoutMs` with `what` in the message. */
export async function until<T>(check: () => T | undefined | false | null, what: string, timeoutMs = 30_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Runs a shell command line on a 100x40 pty (script(1)), typing each answer when its prompt shows up. Each prompt is
 * matched in the output after the previous answer, so a repeated word does not answer twice. Output holds both streams.
 */
export function onPty(
  commandLine: string,
  answers: [RegExp, string][],
  options: { env: Record<string, string | undefined>; cwd: string; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  let seen = 0;
  const pending = [...answers];
  const pty: Started = startProcess({
    name: 'script',
    command: 'script',
    args: ['-qfec', `stty cols 100 rows 40; ${commandLine}`, '/dev/null'],
    env: options.env,
    cwd: options.cwd,
    interactive: true,
    keep: Number.POSITIVE_INFINITY,
    onOutput: (_, stream) => {
      if (stream !== 'stdout') return;
      const output = pty.output();
      while (pending.length && pending[0]![0].test(output.slice(seen))) {
        seen = output.length;
        pty.proc.stdin!.write(pending.shift()![1]);
      }
    },
  });
  const timer = setTimeout(() => void pty.stop({ signal: 'SIGKILL' }), options.timeoutMs ?? 60_000);
  return pty.closed.then(({ code }) => {
    clearTimeout(timer);
    return { code, output: pty.output() };
  });
}
