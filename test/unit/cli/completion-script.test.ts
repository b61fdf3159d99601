// The completion scripts, generated from the command tree: every flag offered once where it works, values after a flag
// that takes one (its choices, the settings' words, or names the local engine lists), never subcommands there.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashScript, fishScript } from '../../../src/cli/commands/completion.js';
import { buildProgram } from '../../../src/cli/program.js';

const program = await buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, stdin: process.stdin, env: {}, cwd: process.cwd() });
const bash = bashScript(program);

/** The words a case of one of the script's functions echoes. */
function caseWords(fn: string, label: string): string[] | undefined {
  const body = bash.slice(bash.indexOf(`${fn}() {`), bash.indexOf('\n}\n', bash.indexOf(`${fn}() {`)));
  const line = body.split('\n').find((l) => l.trimStart().startsWith(`'${label}')`));
  return line ? (/echo '([^']*)'/.exec(line)?.[1] ?? '').split(' ').filter(Boolean) : undefined;
}

describe('wmark completion', () => {
  it('lists each flag of a command once, its own and the global ones, --help included', () => {
    for (const path of ['', 'ingest', 'watermark', 'watermark list', 'serve', 'auth keys create']) {
      const flags = caseWords('_wmark_options', path)!;
      expect(flags, path).toBeDefined();
      expect(new Set(flags).size, `${path}: ${flags.join(' ')}`).toBe(flags.length);
      expect(flags, path).toEqual(expect.arrayContaining(['--help', '--json', '--data-dir']));
    }
    expect(caseWords('_wmark_options', 'ingest')).toEqual(expect.arrayContaining(['--key', '--forensic-layout', '--replace', '--remote']));
  });

  it('completes values after a flag that takes one: choices, words, or names from the local engine', () => {
    expect(caseWords('_wmark_values', 'ingest --forensic-layout')).toEqual(['whole', 'split', 'single']);
    expect(caseWords('_wmark_values', 'watermark --align')).toEqual(['LEFT', 'CENTER', 'RIGHT']);
    expect(caseWords('_wmark_values', 'watermark --api')).toEqual(['1.0', '2.0']);
    expect(caseWords('_wmark_values', 'serve --render')).toEqual(['on-demand', 'full']);
    expect(bash).toContain("'watermark --key') _wmark_names keys ;;");
    expect(bash).toContain("'watermark view') _wmark_names watermarks ;;");
    // A flag whose value is free text still takes the next word (so it is never read as a subcommand).
    expect(caseWords('_wmark_values', 'watermark --text')).toEqual([]);
    expect(caseWords('_wmark_values', ' --data-dir')).toEqual([]);
    // --remote's URL is optional: the next word may be the command's argument.
    expect(caseWords('_wmark_values', 'ingest --remote')).toBeUndefined();
  });

  it('in bash, --key <TAB> offers the names the lister prints, and nothing (never the subcommands) when it has none or fails', () => {
    const tab = (lister: string) =>
      execFileSync('bash', ['-c', `${bash}\nCOMP_WORDS=(${lister} watermark --key ""); COMP_CWORD=3; _wmark; echo "[\${COMPREPLY[*]}]"`], {
        encoding: 'utf8',
      }).trim();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-completion-'));
    const lister = (name: string, body: string) => {
      writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      return path.join(dir, name);
    };
    try {
      expect(tab(lister('two', 'printf "movie-42\\ntrailer\\n"'))).toBe('[movie-42 trailer]');
      expect(tab(lister('none', 'exit 0'))).toBe('[]');
      expect(tab(lister('failing', 'exit 3'))).toBe('[]');
      expect(tab(path.join(dir, 'not-on-path'))).toBe('[]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in bash, `npx wmark` completes as `wmark` does, asking `npx wmark` for names; other npx commands are left alone', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-completion-npx-'));
    writeFileSync(path.join(dir, 'npx'), '#!/bin/sh\n[ "$1 $2 $3" = "wmark __complete keys" ] && printf "movie-42\\n"\nexit 0\n', { mode: 0o755 });
    const tab = (words: string) =>
      execFileSync('bash', ['-c', `${bash}\nCOMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _wmark_npx; echo "[\${COMPREPLY[*]}]"`], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      }).trim();
    try {
      expect(bash).toContain('complete -o default -F _wmark_npx npx');
      expect(tab('npx wmark watermark --key ""')).toBe('[movie-42]');
      expect(tab('npx wmark wat')).toBe('[watermark]');
      expect(tab('npx wmark watermark --vertical-al')).toBe('[--vertical-align]');
      expect(tab('npx prettier ""')).toBe('[]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fish: flags that take a value say so and offer it', () => {
    const fish = fishScript(program);
    expect(fish).toMatch(/^complete -c wmark -n '__fish_seen_subcommand_from ingest' -l forensic-layout -x -a 'whole split single' -d /m);
    expect(fish).toMatch(/^complete -c wmark -n '__fish_seen_subcommand_from watermark' -l key -x -a '\(wmark __complete keys 2>\/dev\/null\)' -d /m);
    // Global flags once, at the root.
    expect(fish.match(/ -l data-dir /g)).toHaveLength(1);
  });
});
