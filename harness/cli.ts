// Runs the CLI in-process through run(argv, io) with captured streams and settable TTY flags.
import { Readable } from 'node:stream';
import { run } from '../src/cli/program.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json<T = any>(): T;
  lines<T = any>(): T[];
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  tty?: boolean;
  cwd?: string;
  signal?: AbortSignal;
}

export async function runCli(argv: string[], options: CliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const stdin = Readable.from(options.stdin !== undefined ? [Buffer.from(options.stdin)] : []) as Readable & { isTTY?: boolean };
  stdin.isTTY = options.stdin === undefined && options.tty ? true : undefined;
  const code = await run(argv, {
    stdout: {
      write: (s: string) => {
        stdout += s;
        return true;
      },
      isTTY: options.tty ?? false,
      columns: 100,
    },
    stderr: {
      write: (s: string) => {
        stderr += s;
        return true;
      },
      isTTY: options.tty ?? false,
      columns: 100,
    },
    stdin,
    env: { CI: '1', NO_COLOR: '1', ...options.env },
    cwd: options.cwd ?? process.cwd(),
    signal: options.signal,
  });
  return {
    code,
    stdout,
    stderr,
    json: () => JSON.parse(stdout),
    lines: () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}
