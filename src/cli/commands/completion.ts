// `wmark completion bash|zsh|fish`: a shell completion script for the commands, their flags and the flags' values,
// generated from the command tree itself so it never falls behind. zsh loads the bash script through bashcompinit.
// Values that name what the local engine holds (video keys, watermark and template ids) come from the hidden
// `wmark __complete <kind>`, run at TAB time.
import { Argument, type Command, type Option } from 'commander';
import type { LocalService } from '../../engine/app/local-service.js';
import { action } from '../action.js';
import { pathOf, visibleCommands } from '../help.js';

/** What the local engine can list for a completion. */
type NameKind = 'keys' | 'videos' | 'watermarks' | 'templates' | 'clients';
const NAME_KINDS: readonly NameKind[] = ['keys', 'videos', 'watermarks', 'templates', 'clients'];

/** The words a flag takes that commander does not know as choices (the settings' enums are case-insensitive). */
const FLAG_WORDS: Record<string, readonly string[]> = {
  '--align': ['LEFT', 'CENTER', 'RIGHT'],
  '--vertical-align': ['TOP', 'MIDDLE', 'BOTTOM'],
  '--containers': ['m3u8', 'mp4', 'm3u8,mp4'],
  '--render': ['on-demand', 'full'],
};

/** Flags and the first argument (as "<arg>") that name something that exists, by command path. */
const WATERMARK_FLAGS = { '--key': 'keys', '--video-id': 'videos', '--template': 'templates' } as const;
const NAMES: Record<string, Record<string, NameKind>> = {
  watermark: WATERMARK_FLAGS,
  'watermark create': WATERMARK_FLAGS,
  'watermark list': { '--key': 'keys' },
  'watermark view': { '<arg>': 'watermarks' },
  'watermark rm': { '<arg>': 'watermarks' },
  'video list': { '--key': 'keys' },
  'video show': { '<arg>': 'keys' },
  'template show': { '<arg>': 'templates' },
  'template delete': { '<arg>': 'templates' },
  detect: { '--key': 'keys', '--video-id': 'videos' },
  'auth keys revoke': { '<arg>': 'clients' },
};

interface Node {
  path: string;
  command: Command;
  /** Subcommands and their aliases, or the choices of a first argument (completion bash|zsh|fish). */
  subcommands: string[];
  /** Every flag that works here, each once: the command's own, the global ones, --help. */
  flags: string[];
  /** The flags that take a value (the next word is theirs), with the words to offer: a list, or names to ask for. */
  values: Map<string, readonly string[] | NameKind>;
  /** The first argument's names, when it names something. */
  argument?: NameKind;
}

const visible = (cmd: Command) => cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
const flagsOf = (o: Option) => [o.long, o.short].filter((f): f is string => Boolean(f));

function nodes(root: Command): Node[] {
  const globals = root.options.filter((o) => !o.hidden);
  return [root, ...visibleCommands(root)].map((cmd) => {
    const path = pathOf(cmd);
    const own = cmd === root ? [] : cmd.options.filter((o) => !o.hidden);
    const options = [...own, ...globals];
    const values = new Map<string, readonly string[] | NameKind>();
    for (const o of options) {
      // An optional value (--remote [url]) may as well be the command's argument: the next word stays the user's.
      if (!o.required) continue;
      const offered = NAMES[path]?.[o.long ?? ''] ?? o.argChoices ?? FLAG_WORDS[o.long ?? ''] ?? [];
      for (const f of flagsOf(o)) values.set(f, offered);
    }
    return {
      path,
      command: cmd,
      subcommands: [
        ...visible(cmd).flatMap((c) => [c.name(), ...c.aliases()]),
        ...((cmd as Command & { registeredArguments: readonly Argument[] }).registeredArguments[0]?.argChoices ?? []),
      ],
      flags: [...new Set([...options.flatMap(flagsOf), '--help'])],
      values,
      ...(NAMES[path]?.['<arg>'] ? { argument: NAMES[path]['<arg>'] } : {}),
    };
  });
}

const quoteSh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashScript(root: Command): string {
  const all = nodes(root);
  const cases = (pick: (n: Node) => string | undefined) =>
    all
      .map((n) => [n.path, pick(n)] as const)
      .filter(([, body]) => body !== undefined)
      .map(([path, body]) => `    ${quoteSh(path)}) ${body} ;;`)
      .join('\n');
  const valueCases = all
    .flatMap((n) =>
      [...n.values].map(([flag, offered]) => {
        const body = typeof offered === 'string' ? `_wmark_names ${offered}` : `echo ${quoteSh(offered.join(' '))}`;
        return `    ${quoteSh(`${n.path} ${flag}`)}) ${body} ;;`;
      }),
    )
    .join('\n');
  return `# wmark completion for bash (and zsh through bashcompinit). Load it with:  source <(wmark completion bash)
_wmark_subcommands() {
  case "$1" in
${cases((n) => `echo ${quoteSh(n.subcommands.join(' '))}`)}
  esac
}
_wmark_options() {
  case "$1" in
${cases((n) => `echo ${quoteSh(n.flags.join(' '))}`)}
  esac
}
# The words a flag takes: one of a few, or names the local engine lists (video keys, ids). A flag that takes a value
# succeeds here even when nothing is offered, so its value is never read as a subcommand.
_wmark_values() {
  case "$1 $2" in
${valueCases}
    *) return 1 ;;
  esac
}
_wmark_argument() {
  case "$1" in
${cases((n) => (n.argument ? `_wmark_names ${n.argument}` : undefined))}
  esac
}
# Succeeds whatever the lister does (no data folder, wmark not on PATH as typed): the flag still takes the next word,
# so an empty list offers nothing rather than the subcommands.
_wmark_names() {
  "\${_wmark_cmd[@]}" "\${_wmark_globals[@]}" __complete "$1" 2>/dev/null
  return 0
}
_wmark() {
  _wmark_cmd=("\${COMP_WORDS[0]}")
  _wmark_complete
}
# \`npx wmark ...\` in a checkout completes as \`wmark ...\` does, asking \`npx wmark\` for names; other npx commands get
# file names, as without this script.
_wmark_npx() {
  [[ "\${COMP_WORDS[1]}" == wmark ]] && ((COMP_CWORD >= 2)) || return 0
  _wmark_cmd=(npx wmark)
  COMP_WORDS=(wmark "\${COMP_WORDS[@]:2}")
  ((COMP_CWORD--))
  _wmark_complete
}
_wmark_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" i w
  _wmark_globals=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      --data-dir | --config) _wmark_globals+=("$w" "\${COMP_WORDS[i + 1]}") ;;
    esac
    case "$w" in
      -*=*) continue ;;
      -*)
        # A flag that takes a value: the next word is that value, not a subcommand.
        if _wmark_values "$path" "$w" >/dev/null; then ((i++)); fi
        continue
        ;;
    esac
    case " $(_wmark_subcommands "$path") " in *" $w "*) path="\${path:+$path }$w" ;; esac
  done
  ((COMP_CWORD > 1)) && prev="\${COMP_WORDS[COMP_CWORD - 1]}"
  if [[ "$prev" == -* ]] && _wmark_values "$path" "$prev" >/dev/null; then
    COMPREPLY=($(compgen -W "$(_wmark_values "$path" "$prev")" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wmark_options "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_wmark_subcommands "$path") $(_wmark_argument "$path")" -- "$cur"))
  fi
}
complete -o default -F _wmark wmark
complete -o default -F _wmark_npx npx
`;
}

function zshScript(root: Command): string {
  return `# wmark completion for zsh. Load it with:  source <(wmark completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(root).split('\n').slice(1).join('\n')}`;
}

export function fishScript(root: Command): string {
  const lines = ['# wmark completion for fish. Install it with:  wmark completion fish > ~/.config/fish/completions/wmark.fish', 'complete -c wmark -f'];
  const quoteFish = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const offer = (offered: readonly string[] | NameKind) =>
    typeof offered === 'string' ? ` -a ${quoteFish(`(wmark __complete ${offered} 2>/dev/null)`)}` : offered.length ? ` -a ${quoteFish(offered.join(' '))}` : '';
  for (const n of nodes(root)) {
    const words = n.path === '' ? [] : n.path.split(' ');
    const last = words[words.length - 1];
    const here =
      n.path === ''
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${last}${n.subcommands.length ? `; and not __fish_seen_subcommand_from ${n.subcommands.join(' ')}` : ''}`;
    for (const c of visible(n.command)) lines.push(`complete -c wmark -n ${quoteFish(here)} -a ${c.name()} -d ${quoteFish(c.description())}`);
    if (n.argument) lines.push(`complete -c wmark -n ${quoteFish(here)}${offer(n.argument)}`);
    const cond = n.path === '' ? '' : ` -n ${quoteFish(`__fish_seen_subcommand_from ${last}`)}`;
    // The global flags once, at the root (fish offers them everywhere); each command's own below it.
    for (const o of (n.path === '' ? n.command.options : n.command.options.filter((o) => !root.options.includes(o))).filter((o) => !o.hidden)) {
      const long = o.long?.slice(2);
      const short = o.short?.slice(1);
      const offered = o.required ? n.values.get(o.long ?? '') : undefined;
      const takes = offered === undefined ? '' : typeof offered === 'string' || offered.length ? ' -x' : ' -r';
      lines.push(
        `complete -c wmark${cond}${long ? ` -l ${long}` : ''}${short ? ` -s ${short}` : ''}${takes}${offered ? offer(offered) : ''} -d ${quoteFish(o.description)}`,
      );
    }
    // Commands that take a file get file completion back.
    if ((n.command as Command & { registeredArguments: readonly Argument[] }).registeredArguments.some((a) => /file/.test(a.name()))) {
      lines.push(`complete -c wmark -n ${quoteFish(`__fish_seen_subcommand_from ${last}`)} -F`);
    }
  }
  return `${lines.join('\n')}\n`;
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
  // What a completion offers after --key, `watermark view`, ...: one name a line, nothing (and success) when the data
  // folder cannot be read, so a TAB never prints an error.
  program
    .command('__complete', { hidden: true })
    .description('internal: names for shell completion')
    .addArgument(new Argument('<kind>').choices(NAME_KINDS))
    .action(
      action(async (ctx, kind: NameKind) => {
        const names = await ctx
          .localService()
          .then((local) => completionNames(local, kind))
          .catch(() => []);
        ctx.io.stdout.write(names.map((n) => `${n}\n`).join(''));
      }),
    );
}

async function completionNames(local: LocalService, kind: NameKind): Promise<string[]> {
  switch (kind) {
    case 'keys':
      return (await local.videos.list()).flatMap((v) => (typeof v.key === 'string' && !/\s/.test(v.key) ? [v.key] : []));
    case 'videos':
      return (await local.videos.list()).flatMap((v) => (typeof v.id === 'string' ? [v.id] : []));
    case 'watermarks':
      return (await local.watermarks.list()).map((w) => w.id);
    case 'templates':
      return (await local.templates.list()).flatMap((t) => (typeof t.id === 'string' ? [t.id] : []));
    case 'clients':
      return (await local.credentials.list()).filter((k) => k.revokedOn === null).map((k) => k.clientId);
  }
}
