// Help as gh writes it: every command ends with Examples and where to read more, flags are grouped (local, remote,
// global options listed under every subcommand), and bare `wmark` points at the demo.
import type { Command } from 'commander';
import { REMOTE_GROUP } from './remote-flags.js';

const LOCAL_GROUP = 'Local options:';

/** Examples by command path ("" is the root); each a command line, optionally followed by "  # comment". */
const EXAMPLES: Record<string, string[]> = {
  '': ['wmark demo', 'wmark ingest movie.mp4 --key movie', 'wmark watermark --key movie --text "for alice@example.com"', 'wmark serve --port 0'],
  ingest: [
    'wmark ingest movie.mp4 --key movie',
    'wmark ingest https://example.com/clip.mp4 --name "Launch clip"',
    'wmark ingest long-film.mp4 --key film --forensic',
    'wmark ingest recut.mp4 --key movie --replace   # forget the old movie and its watermarks',
    'wmark ingest movie.mp4 --remote https://watermark.example.com',
  ],
  video: ['wmark video list', 'wmark video show movie'],
  'video list': ['wmark video list', 'wmark video list --json', 'wmark video list --remote https://watermark.example.com'],
  'video show': ['wmark video show movie', 'wmark video show 5f0c... --json'],
  template: ['wmark template list', 'wmark template show viewer-corner', 'wmark template create my-template.json'],
  'template create': ['wmark template create my-template.json', 'cat my-template.json | wmark template create -'],
  'template list': ['wmark template list', 'wmark template list --json'],
  'template show': ['wmark template show viewer-corner'],
  'template delete': ['wmark template delete 7b1e...'],
  watermark: [
    'wmark watermark --key movie --text "for alice@example.com"',
    'wmark watermark --key movie --text "alice" --x 0.95 --y 0.95 --align RIGHT --vertical-align BOTTOM --open',
    'wmark watermark --key movie --template viewer-corner --map viewer=alice',
    'wmark watermark --key movie --template viewer-corner --batch viewers.csv --json',
    'wmark watermark list',
    'wmark watermark view 3f2a... --open',
    'wmark watermark   # at a terminal: pick a video, type the text',
  ],
  'watermark create': [
    'wmark watermark create --key movie --text "for alice@example.com"',
    'wmark watermark create --key movie --settings settings.json --no-wait',
  ],
  'watermark list': ['wmark watermark list', 'wmark watermark list --key movie --json'],
  'watermark view': ['wmark watermark view 3f2a...', 'wmark watermark view 3f2a... --open'],
  'watermark rm': ['wmark watermark rm 3f2a...', 'wmark watermark list --json | jq -r ".[].id" | xargs wmark watermark rm'],
  serve: [
    'wmark serve',
    'wmark serve --port 0   # any free port; local commands link to it',
    'wmark serve --host 0.0.0.0 --public-url https://videos.example.com',
    'wmark serve --queue redis://10.0.0.5:6379 --media s3://wmark-media/prod   # a render farm: `wmark worker`s on the same bucket do the encodes',
    "wmark serve --queue redis://10.0.0.5:6379   # workers that mount this data folder's media folder",
  ],
  status: ['wmark status', 'wmark status --url http://videos.internal:8080 --json'],
  worker: [
    'wmark worker --queue redis://10.0.0.5:6379 --media s3://wmark-media/prod --concurrency 2',
    'AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... wmark worker --queue redis://farm:6379 --media s3://media/farm --s3-endpoint http://minio:9000',
    'wmark worker --queue redis://farm:6379 --media /mnt/wmark   # a folder every machine mounts (NFS)',
  ],
  detect: ['wmark detect leaked.mp4 --key film', 'wmark detect leaked.mp4 --key film --json'],
  auth: ['wmark auth keys create --label "my app"', 'wmark auth login --remote https://watermark.example.com'],
  'auth keys': ['wmark auth keys create --label "my app"', 'wmark auth keys list', 'wmark auth keys revoke wmc_...'],
  'auth keys create': ['wmark auth keys create --label "my app"'],
  'auth keys list': ['wmark auth keys list'],
  'auth keys revoke': ['wmark auth keys revoke wmc_...'],
  'auth login': [
    'wmark auth login --remote https://watermark.example.com',
    'WMARK_CLIENT_ID=... WMARK_API_KEY=... wmark auth login --remote https://watermark.example.com',
  ],
  'auth status': ['wmark auth status', 'wmark auth status --json'],
  'auth logout': ['wmark auth logout', 'wmark auth logout --all'],
  poll: ["wmark poll 'http://127.0.0.1:8080/1.0/watermark/...'"],
  doctor: ['wmark doctor', 'wmark doctor --json', 'wmark doctor --queue redis://10.0.0.5:6379 --media /mnt/wmark'],
  demo: ['wmark demo', 'wmark demo --viewer "Grace Hopper" --email grace@example.com', 'wmark demo --port 0 --no-keep-serving'],
  completion: [
    'wmark completion bash >> ~/.bashrc',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${fpath[1]} is zsh's, for the shell to expand
    'wmark completion zsh > "${fpath[1]}/_wmark"',
    'wmark completion fish > ~/.config/fish/completions/wmark.fish',
  ],
};

/** Where to read more, by the first word of the command path. */
const LEARN_MORE: Record<string, string> = {
  '': 'docs/api.md (the HTTP API), docs/settings.md (where text lands), docs/forensic.md (invisible marks)',
  watermark: 'docs/settings.md (units, ranges, where text lands)',
  template: 'docs/settings.md (settings and placeholders)',
  serve: 'docs/api.md (routes, bodies, errors, auth)',
  auth: 'docs/api.md (authentication)',
  poll: 'docs/api.md (the 1.0 long-poll href)',
  detect: 'docs/forensic.md',
  ingest: 'docs/forensic.md (--forensic)',
};

export const GET_STARTED = 'Get started: wmark demo';

export function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every visible command below `root`, depth first. */
export function visibleCommands(root: Command): Command[] {
  return root.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).flatMap((c) => [c, ...visibleCommands(c)]);
}

function examplesText(path: string): string {
  const examples = EXAMPLES[path] ?? [];
  const more = LEARN_MORE[path.split(' ')[0] ?? ''];
  const lines: string[] = [];
  if (examples.length) lines.push('', 'Examples:', ...examples.map((e) => `  $ ${e}`));
  if (path === '') lines.push('', GET_STARTED);
  if (more) lines.push('', `Learn more: ${more}`);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/**
 * Applies the help layout to the whole tree: global options shown under subcommands, options whose description says
 * "local:"/"remote:" grouped as such, and Examples + Learn more after each command's help.
 */
export function applyHelp(program: Command): void {
  for (const cmd of [program, ...visibleCommands(program)]) {
    cmd.configureHelp({ showGlobalOptions: true, sortSubcommands: false });
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
