// Help as gh writes it: a command's subcommands come first, then its flags in groups (local, remote), the global
// options in one line under subcommands, and every command ends with Examples and where to read more (the installed
// docs, by absolute path). Bare `wmark` points at the demo.
import type { Command, Help, Option } from 'commander';
import { docPath } from './docs.js';
import { EXAMPLES } from './help-examples.js';

const LOCAL_GROUP = 'Local options:';
export const REMOTE_GROUP = 'Remote options (with --remote):';

/** Where to read more, by the first word of the command path: a doc of the package and what it says. */
const LEARN_MORE: Record<string, [doc: string, about: string][]> = {
  '': [
    ['api.md', 'the HTTP API'],
    ['settings.md', 'where text lands'],
    ['forensic.md', 'invisible marks'],
  ],
  watermark: [['settings.md', 'units, ranges, where text lands']],
  template: [['settings.md', 'settings and placeholders']],
  serve: [['api.md', 'routes, bodies, errors, auth']],
  auth: [['api.md', 'authentication']],
  poll: [['api.md', 'the 1.0 long-poll href']],
  detect: [['forensic.md', 'what a mark survives, how to read the output']],
  ingest: [['forensic.md', '--forensic and its layouts']],
};

const GET_STARTED = 'Get started: wmark demo';

export function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every visible command below `root`, depth first. */
export function visibleCommands(root: Command): Command[] {
  return root.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).flatMap((c) => [c, ...visibleCommands(c)]);
}

/** The examples of a command path, each "wmark ..." optionally followed by "  # comment". */
function examplesOf(path: string): readonly string[] {
  return EXAMPLES[path] ?? [];
}

/** The docs a command's help points at, as absolute paths with what each says. */
function learnMoreOf(path: string): { path: string; about: string }[] {
  return (LEARN_MORE[path.split(' ')[0] ?? ''] ?? []).map(([doc, about]) => ({ path: docPath(doc), about }));
}

function examplesText(path: string): string {
  const examples = examplesOf(path);
  const more = learnMoreOf(path);
  const lines: string[] = [];
  if (examples.length) lines.push('', 'Examples:', ...examples.map((e) => `  $ ${e}`));
  if (path === '') lines.push('', GET_STARTED);
  if (more.length) lines.push('', 'Learn more:', ...more.map((m) => `  ${m.path}  (${m.about})`));
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/**
 * The help of one command: usage and description, then its subcommands, arguments and flag groups. Under a subcommand
 * the global options are one line (the root's help describes them), so the flags of the command itself stand out.
 */
function formatHelp(cmd: Command, helper: Help): string {
  const termWidth = helper.padWidth(cmd, helper);
  const helpWidth = helper.helpWidth ?? 80;
  const item = (term: string, description: string) => helper.formatItem(term, termWidth, description, helper);
  const out = [`${helper.styleTitle('Usage:')} ${helper.styleUsage(helper.commandUsage(cmd))}`, ''];
  const description = helper.commandDescription(cmd);
  if (description) out.push(helper.boxWrap(helper.styleCommandDescription(description), helpWidth), '');
  const commands = helper
    .visibleCommands(cmd)
    .map((sub) => item(helper.styleSubcommandTerm(helper.subcommandTerm(sub)), helper.styleSubcommandDescription(helper.subcommandDescription(sub))));
  out.push(...helper.formatItemList('Commands:', commands, helper));
  const args = helper
    .visibleArguments(cmd)
    .map((a) => item(helper.styleArgumentTerm(helper.argumentTerm(a)), helper.styleArgumentDescription(helper.argumentDescription(a))));
  out.push(...helper.formatItemList('Arguments:', args, helper));
  const root = !cmd.parent;
  // A subcommand's own "Options:" group holds only --help, which the global line names.
  const options = helper.visibleOptions(cmd).filter((o) => root || o.long !== '--help');
  const groups = new Map<string, Option[]>();
  for (const o of options) {
    const heading = (o as Option & { helpGroupHeading?: string }).helpGroupHeading ?? 'Options:';
    groups.set(heading, [...(groups.get(heading) ?? []), o]);
  }
  for (const [heading, list] of groups) {
    const rows = list.map((o) => item(helper.styleOptionTerm(helper.optionTerm(o)), helper.styleOptionDescription(helper.optionDescription(o))));
    out.push(...helper.formatItemList(heading, rows, helper));
  }
  if (!root) {
    let top: Command = cmd;
    while (top.parent) top = top.parent;
    const globals = [...top.options.filter((o) => !o.hidden && o.long !== '--version').map((o) => o.flags.replace(/^-\w, /, '')), '--help'];
    out.push(helper.boxWrap(`Global options: ${globals.join(', ')} (wmark --help says what each does)`, helpWidth), '');
  }
  return out.join('\n');
}

/**
 * Applies the help layout to the whole tree: options whose description says "local:"/"remote:" grouped as such, and
 * Examples + Learn more after each command's help.
 */
export function applyHelp(program: Command): void {
  for (const cmd of [program, ...visibleCommands(program)]) {
    cmd.configureHelp({ sortSubcommands: false, formatHelp });
    for (const option of cmd.options) {
      const o = option as typeof option & { helpGroupHeading?: string };
      if (o.helpGroupHeading !== undefined) continue;
      if (/^local:/.test(o.description)) o.helpGroup(LOCAL_GROUP);
      else if (/^remote:/.test(o.description)) o.helpGroup(REMOTE_GROUP);
    }
    const text = examplesText(pathOf(cmd));
    if (text) cmd.addHelpText('after', text);
  }
}
