// The command table: what the root help prints when no command module is loaded, and which modules a run loads.
import { type Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandsNamedIn } from '../../../src/cli/command-table.js';
import type { CliIO } from '../../../src/cli/io.js';
import { buildProgram } from '../../../src/cli/program.js';

const io: CliIO = { stdout: { write: () => true }, stderr: { write: () => true }, stdin: process.stdin, env: {}, cwd: process.cwd() };
const entry = (name: string) => COMMANDS.find((e) => e.names.includes(name))!;
const names = (set: Set<(typeof COMMANDS)[number]>) => [...set].map((e) => e.names[0]);

describe('the command table', () => {
  it("says of each command what its module's definition says: term, description, hidden", async () => {
    const full = await buildProgram(io);
    const help = new Help();
    for (const e of COMMANDS) {
      for (const name of e.names)
        expect(
          full.commands.map((c) => c.name()),
          name,
        ).toContain(name);
      const cmd = full.commands.find((c) => c.name() === e.names[0])!;
      expect(help.subcommandTerm(cmd), e.names[0]).toBe(e.term);
      expect(cmd.description(), e.names[0]).toBe(e.description);
      expect((cmd as Command & { _hidden?: boolean })._hidden ?? false, e.names[0]).toBe(e.hidden ?? false);
    }
    // Every top-level command is in the table, in the order it lists them.
    expect(full.commands.map((c) => c.name())).toEqual(COMMANDS.flatMap((e) => e.names));
  });

  it('prints the same root help with no module loaded as with all of them', async () => {
    const full = await buildProgram(io);
    const bare = await buildProgram(io, new Set());
    expect(bare.helpInformation()).toBe(full.helpInformation());
    expect(bare.helpInformation()).toContain('  watermark [options]             watermark an ingested video');
  });

  it('loads the commands a run names, and every command with the one that reads the whole tree', () => {
    expect(names(commandsNamedIn([]))).toEqual([]);
    expect(names(commandsNamedIn(['--help']))).toEqual([]);
    expect(names(commandsNamedIn(['wtermark']))).toEqual([]);
    expect(names(commandsNamedIn(['--json', 'watermark', '--key', 'movie', '--text', 'x']))).toEqual(['watermark']);
    // A flag's value that is also a command's name loads that one too: more than needed, never less.
    expect(names(commandsNamedIn(['watermark', '--key', 'demo']))).toEqual(['watermark', 'demo']);
    expect(names(commandsNamedIn(['help', 'detect']))).toEqual(['detect']);
    // After `--` the words are arguments, not commands.
    expect(names(commandsNamedIn(['ingest', '--', 'serve']))).toEqual(['ingest']);
    expect(names(commandsNamedIn(['__complete', 'keys']))).toEqual(['completion']);
    expect(commandsNamedIn(['completion', 'bash'])).toEqual(new Set(COMMANDS));
    expect(entry('completion').readsTree).toBe(true);
  });

  it('runs a named command with only its module loaded', async () => {
    const program = await buildProgram(io, commandsNamedIn(['watermark', 'view', 'x']));
    const watermark = program.commands.find((c) => c.name() === 'watermark')!;
    expect(watermark.commands.map((c) => c.name())).toEqual(expect.arrayContaining(['list', 'view', 'rm']));
    // The others are their root help line alone.
    const ingest = program.commands.find((c) => c.name() === 'ingest')!;
    expect(ingest.options).toEqual([]);
    expect(ingest.registeredArguments).toEqual([]);
  });
});
