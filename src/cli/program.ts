// The wmark command line: root flags, command registration, and run(argv, io) which returns the exit code.
import { Command, CommanderError } from 'commander';
import { WmarkError } from '../core/errors.js';
import { CliContext, type GlobalFlags } from './context.js';
import type { CliIO } from './io.js';
import { registerDoctor } from './commands/doctor.js';
import { registerIngest } from './commands/ingest.js';
import { registerVideo } from './commands/video.js';
import { registerTemplate } from './commands/template.js';
import { registerWatermark } from './commands/watermark.js';
import { registerDemo } from './commands/demo.js';
import { registerServe } from './commands/serve.js';
import { registerDetect } from './commands/detect.js';
import { registerAuth } from './commands/auth.js';
import { registerRemoteAuth } from './commands/auth-remote.js';
import { registerPoll } from './commands/poll.js';
import { VERSION } from './version.js';

export type CommandAction = (ctx: CliContext, ...args: any[]) => Promise<number | void>;

/** Wraps a command's action: builds the context from the root flags, and turns the outcome into an exit code. */
export function action(run: (ctx: CliContext, ...args: any[]) => Promise<number | void>) {
  return async function (this: Command, ...args: unknown[]) {
    const root = rootOf(this);
    const state = (root as Command & { wmarkState: RunState }).wmarkState;
    const ctx = new CliContext(state.io, root.opts() as GlobalFlags);
    state.ctx = ctx;
    const code = await run(ctx, ...args);
    state.exitCode = typeof code === 'number' ? code : 0;
  };
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

interface RunState {
  io: CliIO;
  ctx?: CliContext;
  exitCode: number;
}

export function buildProgram(io: CliIO): Command {
  const program = new Command('wmark');
  program
    .description('Per-viewer video watermarking: visible text and invisible forensic marks, signed HLS and mp4, a local service.')
    .version(VERSION, '-V, --version')
    .option('--json', 'print one JSON value on stdout (NDJSON for batches)')
    .option('-q, --quiet', 'no progress or messages on stderr')
    .option('-v, --verbose', 'more detail on stderr, including ffmpeg diagnostics')
    .option('--no-color', 'no colour (also NO_COLOR=1)')
    .option('--config <file>', 'use this config file instead of searching for wmark.config.* / .wmarkrc*')
    .option('--data-dir <dir>', 'state and media folder (default: the platform data dir; env WMARK_HOME)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(s),
    });
  (program as Command & { wmarkState: RunState }).wmarkState = { io, exitCode: 0 };
  registerIngest(program);
  registerVideo(program);
  registerTemplate(program);
  registerWatermark(program);
  registerServe(program);
  registerDetect(program);
  registerRemoteAuth(registerAuth(program));
  registerPoll(program);
  registerDoctor(program);
  registerDemo(program);
  const inherit = (c: Command) => {
    c.exitOverride().configureOutput(program.configureOutput());
    c.commands.forEach(inherit);
  };
  program.commands.forEach(inherit);
  return program;
}

/** Runs the CLI in-process. Only bin/wmark.js turns the returned code into process.exit. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram(io);
  const state = (program as Command & { wmarkState: RunState }).wmarkState;
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 2;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // `help` asked for exits 0; a command group run without a (known) subcommand prints help to stderr with a non-zero code: usage.
      const missingCommand = error.code === 'commander.help';
      if (missingCommand && error.exitCode === 0) return 0;
      // Commander already printed its message; usage errors are exit 2 (commander's own default is 1).
      if (state.ctx?.output.mode === 'json' || argv.includes('--json')) {
        const message = missingCommand ? 'missing or unknown command' : error.message.replace(/^error: /, '');
        io.stdout.write(`${JSON.stringify({ error: { code: 'USAGE', message, hint: 'See --help.' } })}\n`);
      }
      return 2;
    }
    const ctx = state.ctx ?? new CliContext(io, { json: argv.includes('--json') });
    if (io.signal?.aborted) return ctx.output.error(new WmarkError('INTERRUPTED', 'interrupted'));
    return ctx.output.error(error);
  } finally {
    state.ctx?.close();
  }
}
