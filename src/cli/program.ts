// The wmark command line: root flags, command registration, and run(argv, io) which returns the exit code.
import { Command, CommanderError, Help } from 'commander';
import { WmarkError } from '../core/errors.js';
import { VERSION } from '../version.js';
import { COMMANDS, type CommandEntry, commandsNamedIn } from './command-table.js';
import type { CliContext } from './context.js';
import { fromCommanderError, helpHint } from './flag-error.js';
import { applyHelp, pathOf } from './help.js';
import type { CliIO } from './io.js';
import { attachRunState, type RunState, runStateOf } from './run-state.js';

/** The command each usage error happened in (commander's errors do not say). */
const failedIn = new WeakMap<CommanderError, Command>();

/**
 * The program with every command in full, or with only `load`'s in full and the others as their root help line (a
 * run loads the commands its arguments name: see command-table.ts).
 */
export async function buildProgram(io: CliIO, load: ReadonlySet<CommandEntry> = new Set(COMMANDS)): Promise<Command> {
  const registers = await Promise.all(COMMANDS.map(async (e) => [e, load.has(e) ? await e.load() : undefined] as const));
  const program = new Command('wmark');
  const state: RunState = { io, exitCode: 0 };
  program
    .description('Per-viewer video watermarking: visible text and invisible forensic marks, signed HLS and mp4, a local service.')
    .version(VERSION, '-V, --version')
    .option('--json', 'print one JSON value on stdout (NDJSON for batches)')
    .option('-q, --quiet', 'no progress or messages on stderr')
    .option('-v, --verbose', 'more detail on stderr, including ffmpeg diagnostics')
    .option('--no-color', 'no colour (also NO_COLOR=1)')
    .option('--config <file>', 'use this config file instead of searching for wmark.config.* / .wmarkrc*')
    .option('--data-dir <dir>', 'state and media folder (default: the platform data dir; env WMARK_HOME)')
    .option(
      '--db [url]',
      'keep all state in PostgreSQL: postgres://USER:PASSWORD@HOST:PORT/DATABASE (env WMARK_DB_URL; default: SQLite in the data dir); `doctor --db` alone checks the configured one',
    )
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      // With --json, commander's text on stderr (an error, or help after a missing subcommand) is left out: run() prints
      // the one JSON error body.
      writeErr: (s) => {
        if (!state.json) io.stderr.write(s);
      },
      // Usage errors are printed by run(), in the words and with the hint of every other error.
      outputError: () => undefined,
    });
  attachRunState(program, state);
  // Each command in the table's order: in full when this run loads it, else as the line the root help prints.
  const stubTerms = new WeakMap<Command, string>();
  for (const [entry, register] of registers) {
    if (register) register(program);
    else stubTerms.set(program.command(entry.names[0]!, { hidden: entry.hidden }).description(entry.description), entry.term);
  }
  applyHelp(program);
  program.configureHelp({
    ...program.configureHelp(),
    subcommandTerm(this: Help, cmd: Command) {
      return stubTerms.get(cmd) ?? Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
  // Each usage error remembers the command it happened in, so its hint names that command's help.
  const inherit = (c: Command) => {
    c.exitOverride((error) => {
      failedIn.set(error, c);
      throw error;
    }).configureOutput(program.configureOutput());
    c.commands.forEach(inherit);
  };
  program.exitOverride((error) => {
    failedIn.set(error, program);
    throw error;
  });
  program.commands.forEach(inherit);
  return program;
}

/** The run's context to report an error through: the action's, else one from the streams (loaded only then). */
async function contextFor(state: RunState): Promise<CliContext> {
  if (state.ctx) return state.ctx;
  const { CliContext } = await import('./context.js');
  return new CliContext(state.io, { json: state.json });
}

/** Runs the CLI in-process. Only bin/wmark.js turns the returned code into process.exit. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const program = await buildProgram(io, commandsNamedIn(argv));
  const state: RunState = runStateOf(program);
  // Known before commander parses, so its own errors (unknown option, bad choice) can be reported once.
  const flags = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  state.json = flags.includes('--json');
  try {
    // Bare `wmark` is a newcomer's first try: the help (which ends with "Get started: wmark demo"), and success.
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // `help` asked for exits 0; a command group run without a (known) subcommand prints help to stderr with a non-zero code: usage.
      const missingCommand = error.code === 'commander.help';
      if (missingCommand && error.exitCode === 0) return 0;
      // Usage errors are exit 2 (commander's own default is 1). A missing subcommand has had its help printed.
      const path = pathOf(failedIn.get(error) ?? program);
      const usage = missingCommand
        ? new WmarkError('USAGE', 'missing or unknown command', { hint: helpHint(undefined, path || undefined) })
        : fromCommanderError(error, path || undefined);
      if (missingCommand && !state.json) return usage.exitCode;
      return (await contextFor(state)).output.error(usage);
    }
    const ctx = await contextFor(state);
    if (io.signal?.aborted) return ctx.output.error(new WmarkError('INTERRUPTED', 'interrupted'));
    return ctx.output.error(error);
  } finally {
    await state.ctx?.close();
  }
}
