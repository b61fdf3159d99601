// What one run of the CLI shares between the program and the action that runs: the streams, the context the action
// built, the exit code. Kept apart from action.ts so that building the program (all `wmark --help` needs) loads none
// of what running a command does.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { CliIO } from './io.js';

export interface RunState {
  io: CliIO;
  ctx?: CliContext;
  exitCode: number;
  /** --json was given: commander's own error text is left out, its JSON body is the one report. */
  json?: boolean;
}

const STATE = Symbol('wmark run state');

export function attachRunState(program: Command, state: RunState): void {
  (program as Command & { [STATE]: RunState })[STATE] = state;
}

export function runStateOf(command: Command): RunState {
  let root = command;
  while (root.parent) root = root.parent;
  return (root as Command & { [STATE]: RunState })[STATE];
}
