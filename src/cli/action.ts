// Wraps a command's action: builds the run's context from the root flags and turns the outcome into an exit code.
// Commands import this, not program.ts, so the program can import every command without a cycle.
import type { Command } from 'commander';
import { CliContext, type GlobalFlags } from './context.js';
import type { CliIO } from './io.js';

export interface RunState {
  io: CliIO;
  ctx?: CliContext;
  exitCode: number;
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

export function action<A extends unknown[]>(run: (ctx: CliContext, ...args: A) => Promise<number | void>) {
  return async function (this: Command, ...args: unknown[]) {
    const state = runStateOf(this);
    let root: Command = this;
    while (root.parent) root = root.parent;
    const ctx = new CliContext(state.io, root.opts() as GlobalFlags);
    state.ctx = ctx;
    const code = await run(ctx, ...(args as A));
    state.exitCode = typeof code === 'number' ? code : 0;
  };
}
