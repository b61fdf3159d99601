// The streams, environment and cancellation a CLI run works with: the real process in bin/, captured ones in tests.
import type { Readable } from 'node:stream';

interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export interface CliIO {
  stdout: OutStream;
  stderr: OutStream;
  stdin: Readable & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM; long operations stop and the run exits 130. */
  signal?: AbortSignal;
}

/** A person at a terminal: stdin and stdout are TTYs and CI is unset. */
export function canPrompt(io: Pick<CliIO, 'stdin' | 'stdout' | 'env'>): boolean {
  return Boolean(io.stdin.isTTY) && Boolean(io.stdout.isTTY) && !io.env.CI;
}
