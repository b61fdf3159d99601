// `wmark completion bash|zsh|fish`: a shell completion script for the commands and flags, generated from the command
// tree itself so it never falls behind. zsh loads the bash script through bashcompinit.
import { Argument, type Command } from 'commander';
import { action } from '../action.js';
import { pathOf, visibleCommands } from '../help.js';

interface Node {
  path: string;
  subcommands: string[];
  options: { flags: string[]; description: string }[];
}

function nodes(root: Command): Node[] {
  return [root, ...visibleCommands(root)].map((cmd) => ({
    path: pathOf(cmd),
    // Subcommands, or the choices of a first argument (completion bash|zsh|fish).
    subcommands: [
      ...cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).flatMap((c) => [c.name(), ...c.aliases()]),
      ...((cmd as Command & { registeredArguments: readonly Argument[] }).registeredArguments[0]?.argChoices ?? []),
    ],
    options: cmd.options.filter((o) => !o.hidden).map((o) => ({ flags: [o.long, o.short].filter((f): f is string => Boolean(f)), description: o.description })),
  }));
}

const quoteSh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashScript(root: Command): string {
  const all = nodes(root);
  const globals = all[0]!.options.flatMap((o) => o.flags).concat('--help');
  const cases = (pick: (n: Node) => string[]) => all.map((n) => `    ${quoteSh(n.path)}) echo ${quoteSh(pick(n).join(' '))} ;;`).join('\n');
  return `# wmark completion for bash (and zsh through bashcompinit). Load it with:  source <(wmark completion bash)
_wmark_subcommands() {
  case "$1" in
${cases((n) => n.subcommands)}
  esac
}
_wmark_options() {
  case "$1" in
${cases((n) => n.options.flatMap((o) => o.flags).concat('--help'))}
  esac
  echo ${quoteSh(globals.join(' '))}
}
_wmark() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    case " $(_wmark_subcommands "$path") " in *" $w "*) path="\${path:+$path }$w" ;; esac
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wmark_options "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_wmark_subcommands "$path")" -- "$cur"))
  fi
}
complete -o default -F _wmark wmark
`;
}

export function zshScript(root: Command): string {
  return `# wmark completion for zsh. Load it with:  source <(wmark completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(root).split('\n').slice(1).join('\n')}`;
}

export function fishScript(root: Command): string {
  const all = nodes(root);
  const lines = ['# wmark completion for fish. Install it with:  wmark completion fish > ~/.config/fish/completions/wmark.fish', 'complete -c wmark -f'];
  const quoteFish = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for (const n of all) {
    const words = n.path === '' ? [] : n.path.split(' ');
    const last = words[words.length - 1];
    const below = n.subcommands;
    const here =
      n.path === ''
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${last}${below.length ? `; and not __fish_seen_subcommand_from ${below.join(' ')}` : ''}`;
    const cmd = findCommand(root, words);
    const children = cmd?.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden) ?? [];
    for (const c of children) lines.push(`complete -c wmark -n ${quoteFish(here)} -a ${c.name()} -d ${quoteFish(c.description())}`);
    for (const o of n.options) {
      const long = o.flags.find((f) => f.startsWith('--'))?.slice(2);
      const short = o.flags.find((f) => !f.startsWith('--'))?.slice(1);
      const cond = n.path === '' ? '' : ` -n ${quoteFish(`__fish_seen_subcommand_from ${last}`)}`;
      lines.push(`complete -c wmark${cond}${long ? ` -l ${long}` : ''}${short ? ` -s ${short}` : ''} -d ${quoteFish(o.description)}`);
    }
    // Commands that take a file get file completion back.
    if (cmd && (cmd as Command & { registeredArguments: readonly Argument[] }).registeredArguments.some((a) => /file/.test(a.name()))) {
      lines.push(`complete -c wmark -n ${quoteFish(`__fish_seen_subcommand_from ${last}`)} -F`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function findCommand(root: Command, words: string[]): Command | undefined {
  let cmd: Command | undefined = root;
  for (const w of words) cmd = cmd?.commands.find((c) => c.name() === w);
  return cmd;
}

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      action(async (ctx, shell: 'bash' | 'zsh' | 'fish') => {
        const script = shell === 'bash' ? bashScript(program) : shell === 'zsh' ? zshScript(program) : fishScript(program);
        ctx.io.stdout.write(script);
      }),
    );
}
