// How a CLI run talks to the user: data on stdout (human, plain or JSON), progress and messages on stderr.
import { Chalk, type ChalkInstance } from 'chalk';
import type { Ora } from 'ora';
import { isWmarkError, WmarkError } from '../core/errors.js';
import { resolveDocRefs } from './docs.js';
import { FlagError } from './flag-error.js';
import type { CliIO } from './io.js';

export type OutputMode = 'human' | 'plain' | 'json';

export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** From --color/--no-color or config; undefined = decide from the environment. */
  color?: boolean;
}

/** NO_COLOR (any non-empty value) and FORCE_COLOR are resolved once here; chalk 5 itself ignores NO_COLOR. */
function resolveColor(io: Pick<CliIO, 'env' | 'stdout'>, explicit: boolean | undefined): boolean {
  if (explicit !== undefined) return explicit;
  if (io.env.NO_COLOR) return false;
  const force = io.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return Boolean(io.stdout.isTTY) && io.env.TERM !== 'dumb';
}

export class Output {
  readonly mode: OutputMode;
  readonly color: ChalkInstance;
  readonly interactive: boolean;
  private spinner?: Ora;
  /** ora, once loaded: it costs a cold start tens of milliseconds, so only a terminal that shows spinners loads it. */
  private ora?: typeof import('ora').default;
  /** The text of a spinner asked for before ora was loaded. */
  private pendingText?: string;

  constructor(
    private readonly io: CliIO,
    readonly options: OutputOptions,
  ) {
    this.mode = options.json ? 'json' : io.stdout.isTTY ? 'human' : 'plain';
    const useColor = resolveColor(io, options.color);
    this.color = new Chalk({ level: useColor ? 1 : 0 });
    // Animated progress only for a person at a terminal: never under CI, never when stderr is piped.
    // A terminal that reports 0 columns (a pty nobody sized) would make ora's clear loop forever: no spinner there.
    this.interactive = Boolean(io.stderr.isTTY) && io.stderr.columns !== 0 && !io.env.CI && !options.quiet && !options.json;
    if (this.interactive) {
      import('ora').then(
        (m) => {
          this.ora = m.default;
          if (this.pendingText !== undefined) this.progress(this.pendingText);
        },
        () => undefined, // no spinner, then: progress stays silent at a terminal, as with --quiet
      );
    }
  }

  /** Prints a result: JSON as one value, otherwise the human/plain renderer's lines. */
  result(value: unknown, render: (c: ChalkInstance) => string): void {
    this.stopSpinner();
    if (this.mode === 'json') this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else this.io.stdout.write(ensureNewline(render(this.color)));
  }

  /** One NDJSON line (batches stream results as they finish); in human/plain mode the rendered line. */
  line(value: unknown, render: (c: ChalkInstance) => string): void {
    if (this.mode === 'json') {
      this.io.stdout.write(`${JSON.stringify(value)}\n`);
    } else {
      this.pauseSpinner(() => this.io.stdout.write(ensureNewline(render(this.color))));
    }
  }

  info(message: string): void {
    if (this.options.quiet) return;
    this.pauseSpinner(() => this.io.stderr.write(ensureNewline(message)));
  }

  warn(message: string): void {
    this.pauseSpinner(() => this.io.stderr.write(ensureNewline(`${this.color.yellow('warning:')} ${resolveDocRefs(message)}`)));
  }

  debug(message: string): void {
    if (this.options.verbose) this.pauseSpinner(() => this.io.stderr.write(ensureNewline(this.color.dim(message))));
  }

  /** A spinner on a TTY; elsewhere one plain line per stage (no animation), suppressed by --quiet. */
  progress(text: string): void {
    if (this.interactive) {
      if (!this.ora) this.pendingText = text;
      else if (!this.spinner) {
        this.pendingText = undefined;
        this.spinner = this.ora({
          text,
          stream: this.io.stderr as NodeJS.WritableStream,
          isEnabled: true,
          color: this.color.level > 0 ? 'cyan' : false,
          discardStdin: false,
        }).start();
      } else this.spinner.text = text;
    }
  }

  /** A step of a long operation: on the spinner at a terminal, one stderr line in plain mode, nothing with --json. */
  stage(text: string): void {
    if (this.interactive) this.progress(text);
    else if (this.mode !== 'json') this.info(text);
  }

  stopSpinner(): void {
    this.pendingText = undefined;
    this.spinner?.stop();
    this.spinner = undefined;
  }

  private pauseSpinner(write: () => void): void {
    if (!this.spinner) {
      write();
      return;
    }
    this.spinner.clear();
    write();
    this.spinner.render();
  }

  error(error: unknown): number {
    this.stopSpinner();
    const e = toWmarkError(error);
    // A doc a message points at is named where it is installed, so it opens from any working folder.
    const hint = e.hint === undefined ? undefined : resolveDocRefs(e.hint);
    if (this.mode === 'json') {
      const body: Record<string, unknown> = { code: e.code, message: e.message, hint: hint ?? null };
      if (e.details.length) body.details = e.details;
      this.io.stdout.write(`${JSON.stringify({ error: body })}\n`);
    } else {
      const c = this.color;
      this.io.stderr.write(`${c.red('error:')} ${resolveDocRefs(e.message)}\n`);
      if (hint) this.io.stderr.write(`${c.dim('hint:')} ${hint}\n`);
      if (this.options.verbose && e.details.length) this.io.stderr.write(`${c.dim(e.details.join('\n'))}\n`);
      if (this.options.verbose && e.kind === 'unexpected' && e.cause instanceof Error && e.cause.stack) this.io.stderr.write(`${c.dim(e.cause.stack)}\n`);
    }
    return e.exitCode;
  }
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Anything thrown becomes a WmarkError; unknown errors are "unexpected" (exit 1) with no stack unless --verbose. */
export function toWmarkError(error: unknown): WmarkError {
  if (isWmarkError(error)) return error;
  const named = error as { code?: string; message?: string; hint?: string; name?: string; fromFlag?: boolean; flag?: string } | undefined;
  // A flag the config layer refused reads like any other flag error, and its hint says where the flag is described.
  if (named?.name === 'ConfigError' && named.fromFlag) return new FlagError('BAD_FLAG', named.message ?? 'invalid flag', named.flag ?? '');
  if (named?.name === 'ConfigError' || named?.code === 'CONFIG_INVALID') {
    return new WmarkError('CONFIG_INVALID', named.message ?? 'invalid configuration', { hint: named.hint });
  }
  if (named?.name === 'ExitPromptError' || named?.name === 'AbortPromptError') {
    return new WmarkError('INTERRUPTED', 'cancelled');
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WmarkError('UNEXPECTED', `unexpected error: ${message}`, {
    cause: error,
    hint: 'Run again with --verbose for details; please report it if it persists.',
  });
}
