// Wraps a command's action: builds the run's context from the root flags and turns the outcome into an exit code.
// Commands import this, not program.ts, so the program can import every command without a cycle.
import type { Command } from 'commander';
import { CliContext, type GlobalFlags } from './context.js';
import { FlagError } from './flag-error.js';
import { pathOf } from './help.js';
import { toWmarkError } from './output.js';
import { runStateOf } from './run-state.js';

export function action<A extends unknown[]>(run: (ctx: CliContext, ...args: A) => Promise<number | undefined>) {
  return async function (this: Command, ...args: unknown[]) {
    const state = runStateOf(this);
    let root: Command = this;
    while (root.parent) root = root.parent;
    const ctx = new CliContext(state.io, root.opts() as GlobalFlags, pathOf(this));
    state.ctx = ctx;
    let code: number | undefined;
    try {
      code = await run(ctx, ...(args as A));
    } catch (error) {
      // A flag error's hint names the help of this command.
      const e = toWmarkError(error);
      throw e instanceof FlagError ? e.inCommand(pathOf(this)) : error;
    }
    state.exitCode = typeof code === 'number' ? code : 0;
  };
}

/**
 * A subcommand's options with those its parent read filled in. Commander hands every flag it knows to the parent
 * first, so in `watermark list --key K` the parent `watermark` (which also has --key) reads it.
 */
export function mergedOptions<T extends object>(cmd: Command): T {
  const merged: Record<string, unknown> = {};
  const parent = cmd.parent;
  if (parent) for (const [k, v] of Object.entries(parent.opts())) if (parent.getOptionValueSource(k) === 'cli') merged[k] = v;
  for (const [k, v] of Object.entries(cmd.opts())) if (v !== undefined && (cmd.getOptionValueSource(k) === 'cli' || !(k in merged))) merged[k] = v;
  return merged as T;
}
