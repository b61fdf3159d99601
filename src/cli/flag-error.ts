// One wording for every flag the user got wrong, whoever notices: a flag's own parser, a command's checks, the config
// layer, or commander itself. "--x: expected a number, got "abc"", then a hint, exit 2.
import type { CommanderError } from 'commander';
import { type ErrorCode, WmarkError } from '../core/errors.js';

/**
 * A flag the user got wrong. Unless it has a hint of its own, the hint points at the help of the command it was given
 * to, which the action running it fills in (`inCommand`): the code that notices rarely knows the command.
 */
export class FlagError extends WmarkError {
  constructor(
    private readonly spec: ErrorCode,
    message: string,
    readonly flag: string,
    private readonly ownHint?: string,
    command?: string,
  ) {
    super(spec, message, { hint: ownHint ?? helpHint(flag, command) });
  }

  inCommand(command: string): FlagError {
    return this.ownHint !== undefined || !command ? this : new FlagError(this.spec, this.message, this.flag, undefined, command);
  }
}

/** A bad flag value: `--flag: expected <what>, got "<value>"`, with a hint (by default, where the flag is described). */
export function flagError(flag: string, expected: string, got: string, options: { code?: ErrorCode; hint?: string; command?: string } = {}): FlagError {
  return new FlagError(options.code ?? 'BAD_FLAG', `${flag}: expected ${expected}, got ${JSON.stringify(got)}`, flag, options.hint, options.command);
}

/** Where to read about a flag: the command's help when known, else --help. */
export function helpHint(flag: string | undefined, command?: string): string {
  const where = command ? `\`wmark ${command} --help\`` : '--help';
  return flag ? `See ${where} for what ${flag} takes.` : `See ${where}.`;
}

/** A commander argument parser for a number flag (--x 0.95) of the command at `command`. */
export function numberFlag(flag: string, command?: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw flagError(flag, 'a number', value, { command });
    return n;
  };
}

/**
 * Commander's own usage errors in the same words: a value outside an option's choices becomes a flag error; an unknown
 * option or command, or a missing value, keeps commander's message (and its "Did you mean") with a hint to the help of
 * the command it happened in.
 */
export function fromCommanderError(error: CommanderError, command: string | undefined): WmarkError {
  const message = error.message.replace(/^error: /, '');
  const choice = /^option '(-[^ ',]+)(?:[^']*)' argument '(.*)' is invalid\. Allowed choices are (.*)\.$/s.exec(message);
  if (choice) {
    const choices = choice[3]!.split(', ');
    const expected = choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` : choices[0]!;
    return flagError(choice[1]!, expected, choice[2]!, { command });
  }
  const flag = /option '(--?[\w-]+)/.exec(message)?.[1];
  return new WmarkError('USAGE', message, { hint: helpHint(error.code === 'commander.unknownOption' ? undefined : flag, command) });
}
