// The CLI in-process through run(argv, io): exit codes, stdout/stderr split, --json, colour, templates, usage and config errors, doctor.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../../harness/cli.js';
import { ANSI, cliIn, type Sandbox, sandbox } from '../../harness/cli-helpers.js';
import { REPO } from '../../harness/fixtures.js';

const PKG_VERSION = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const BUILTINS = ['diagonal-drift', 'session-stamp', 'viewer-corner'];

let box: Sandbox;
let cli: ReturnType<typeof cliIn>;

beforeEach(() => {
  box = sandbox('cli');
  cli = cliIn(box);
});

afterEach(() => box.dispose());

function write(name: string, content: string | object): string {
  const file = path.join(box.cwd, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

interface ErrorBody {
  code: string;
  message: string;
  hint: string | null;
  details?: string[];
}

/** The whole of stdout must be exactly one JSON value: an error body. */
function jsonError(r: CliResult): ErrorBody {
  const parsed = r.json<{ error: ErrorBody }>();
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(parsed.error).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
  expect(parsed.error).toHaveProperty('hint');
  return parsed.error;
}

describe('version and help', () => {
  it('--version and -V print the package version and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await cli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${PKG_VERSION}\n`);
      expect(r.stderr).toBe('');
    }
  });

  it('--help lists the commands and the root flags and exits 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: wmark [options] [command]');
    for (const word of ['ingest', 'watermark', 'template', 'doctor', '--json', '--quiet', '--no-color', '--config <file>', '--data-dir <dir>']) {
      expect(r.stdout).toContain(word);
    }
    expect(r.stderr).toBe('');
  });

  it('help for a command (flag and `help` command) exits 0', async () => {
    const a = await cli(['watermark', '--help']);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('Usage: wmark watermark [options]');
    expect(a.stdout).toContain('--expiration <when>');
    const b = await cli(['help', 'template']);
    expect(b.code).toBe(0);
    expect(b.stdout).toContain('Usage: wmark template');
  });

  it('no arguments prints the help and "Get started: wmark demo" and exits 0; only root flags is a usage error (2)', async () => {
    const r = await runCli([], { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: wmark [options] [command]');
    expect(r.stdout).toContain('Commands:');
    expect(r.stdout).toContain('Get started: wmark demo');
    const flagsOnly = await cli(['--quiet']);
    expect(flagsOnly.code).toBe(2);
    expect(flagsOnly.stdout + flagsOnly.stderr).toContain('Usage: wmark [options] [command]');
  });

  it('a command group without its subcommand prints its help and exits 2 (JSON error with --json)', async () => {
    const r = await cli(['template']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: wmark template');
    const j = await cli(['--json', 'template']);
    expect(j.code).toBe(2);
    expect(jsonError(j).code).toBe('USAGE');
  });
});

describe('unknown commands and options', () => {
  it("an unknown command exits 2 with commander's message, and a suggestion for a typo", async () => {
    const r = await cli(['frob']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: unknown command 'frob'");
    expect(r.stdout).toBe('');
    const typo = await cli(['watermrk']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("error: unknown command 'watermrk'");
    expect(typo.stderr).toContain('Did you mean watermark?');
  });

  it("an unknown option (root or command) exits 2 with commander's message", async () => {
    const root = await cli(['--frob']);
    expect(root.code).toBe(2);
    expect(root.stderr).toContain("error: unknown option '--frob'");
    const sub = await cli(['watermark', '--frobnicate']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("error: unknown option '--frobnicate'");
  });

  it('a missing option argument or a bad choice exits 2', async () => {
    const missing = await cli(['watermark', '--key']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("option '--key <key>' argument missing");
    const choice = await cli(['watermark', '--key', 'k', '--text', 'hi', '--api', '3.0']);
    expect(choice.code).toBe(2);
    expect(choice.stderr).toContain('error: --api: expected 1.0 or 2.0, got "3.0"\nhint: See `wmark watermark --help` for what --api takes.');
  });

  it('with --json the usage error is one {error:{code,message,hint}} value on stdout', async () => {
    const cmd = await cli(['--json', 'frob']);
    expect(cmd.code).toBe(2);
    expect(jsonError(cmd)).toEqual({ code: 'USAGE', message: "unknown command 'frob'", hint: 'See --help.' });
    const opt = await cli(['--json', '--frob']);
    expect(opt.code).toBe(2);
    expect(jsonError(opt)).toEqual({ code: 'USAGE', message: "unknown option '--frob'", hint: 'See --help.' });
    const arg = await cli(['--json', 'template', 'show']);
    expect(arg.code).toBe(2);
    expect(jsonError(arg)).toEqual({ code: 'USAGE', message: "missing required argument 'id'", hint: 'See --help.' });
    for (const [command, name] of [
      [['ingest', '--key', 'k'], 'file-or-url'],
      [['template', 'create'], 'file'],
    ] as const) {
      const missing = await cli(['--json', ...command]);
      expect(missing.code).toBe(2);
      expect(jsonError(missing)).toEqual({ code: 'USAGE', message: `missing required argument '${name}'`, hint: 'See --help.' });
    }
  });
});

describe('templates', () => {
  const both = { name: 'Both notations', description: 'plain and bracketed', settings: [{ content: '%first% and [%second%]', x: 0.1, align: 'LEFT' }] };

  it('creates a template from a file and normalises its settings', async () => {
    write('tpl.json', both);
    const r = await cli(['--json', 'template', 'create', 'tpl.json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const t = r.json();
    expect(t).toEqual(
      expect.objectContaining({ id: expect.any(String), name: 'Both notations', description: 'plain and bracketed', placeholders: ['first', 'second'] }),
    );
    expect(t.settings).toHaveLength(1);
    expect(t.settings[0]).toEqual(expect.objectContaining({ type: 'TEXT', content: '%first% and [%second%]', x: 0.1, y: 0.5, align: 'LEFT' }));

    const shown = await cli(['--json', 'template', 'show', t.id]);
    expect(shown.code).toBe(0);
    expect(shown.json()).toEqual(t);
  });

  it('creates a template from stdin (-) and prints it in plain text', async () => {
    const r = await cli(['template', 'create', '-'], { stdin: JSON.stringify(both) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^template {2}\S+/);
    expect(r.stdout).toContain('name          Both notations');
    expect(r.stdout).toContain('placeholders  first, second');
  });

  it('refuses "-" when stdin is a terminal (exit 2)', async () => {
    const r = await cli(['--json', 'template', 'create', '-'], { tty: true });
    expect(r.code).toBe(2);
    expect(jsonError(r).code).toBe('STDIN_IS_TTY');
  });

  it('lists the three built-ins and user templates with their placeholders in both notations', async () => {
    const created = (await cli(['--json', 'template', 'create', '-'], { stdin: JSON.stringify(both) })).json();

    const json = await cli(['--json', 'template', 'list']);
    expect(json.code).toBe(0);
    const all = json.json<{ id: string; builtin: boolean; placeholders: string[] }[]>();
    const byId = Object.fromEntries(all.map((t) => [t.id, t]));
    expect(
      all
        .filter((t) => t.builtin)
        .map((t) => t.id)
        .sort(),
    ).toEqual(BUILTINS);
    // viewer-corner uses [%name%] notation, the others plain %name%.
    expect(byId['viewer-corner']!.placeholders).toEqual(['name', 'email']);
    expect(byId['session-stamp']!.placeholders).toEqual(['viewer', 'time']);
    expect(byId['diagonal-drift']!.placeholders).toEqual(['name']);
    expect(byId[created.id]).toEqual(expect.objectContaining({ builtin: false, placeholders: ['first', 'second'] }));

    const plain = await cli(['template', 'list']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('viewer-corner (built-in)');
    expect(plain.stdout).toContain('session-stamp (built-in)');
    expect(plain.stdout).toContain('diagonal-drift (built-in)');
    expect(plain.stdout).toContain('placeholders: name, email');
    expect(plain.stdout).toContain('placeholders: viewer, time');
    expect(plain.stdout).toContain(`${created.id}  Both notations\n  placeholders: first, second`);
  });

  it('shows a built-in template', async () => {
    const r = await cli(['template', 'show', 'viewer-corner']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('template  viewer-corner');
    expect(r.stdout).toContain('placeholders  name, email');
    expect(r.stdout).toContain('[%name%] <[%email%]>');
    const missing = await cli(['--json', 'template', 'show', 'nope']);
    expect(missing.code).toBe(2);
    expect(jsonError(missing)).toEqual(expect.objectContaining({ code: 'TEMPLATE_NOT_FOUND', message: 'no template with id "nope"' }));
  });

  it('deletes a user template; deleting it again or a built-in is refused with exit 2', async () => {
    const { id } = (await cli(['--json', 'template', 'create', '-'], { stdin: JSON.stringify(both) })).json();
    const del = await cli(['--json', 'template', 'delete', id]);
    expect(del.code).toBe(0);
    expect(del.json()).toEqual({ id, deleted: true });
    expect((await cli(['--json', 'template', 'show', id])).code).toBe(2);
    const again = await cli(['--json', 'template', 'delete', id]);
    expect(again.code).toBe(2);
    expect(jsonError(again).code).toBe('TEMPLATE_NOT_FOUND');

    const builtin = await cli(['template', 'delete', 'viewer-corner']);
    expect(builtin.code).toBe(2);
    expect(builtin.stderr).toContain('error: "viewer-corner" is a built-in template and cannot be deleted');
    const builtinJson = await cli(['--json', 'template', 'delete', 'viewer-corner']);
    expect(jsonError(builtinJson).code).toBe('TEMPLATE_BUILTIN');
    const list = (await cli(['--json', 'template', 'list'])).json<{ id: string }[]>();
    expect(list.map((t) => t.id)).toContain('viewer-corner');
  });

  it('malformed JSON names the source, line and column (exit 2)', async () => {
    // The stray "b" is on line 4, column 21.
    write('bad.json', '{\n  "name": "x",\n  "settings": [\n    {"content": "a" "b"}\n  ]\n}\n');
    const r = await cli(['template', 'create', 'bad.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: bad.json is not valid JSON (line 4, column 21)');

    // V8 gives no position for an unexpected token or a cut-off document; the CLI still locates them.
    const token = await cli(['--json', 'template', 'create', '-'], { stdin: '{\n  "name": nope\n}' });
    expect(token.code).toBe(2);
    expect(jsonError(token)).toEqual(expect.objectContaining({ code: 'INVALID_JSON' }));
    expect(jsonError(token).message).toContain('stdin is not valid JSON (line 2, column 11)');
    const cut = await cli(['--json', 'template', 'create', '-'], { stdin: '{\n  "name": "x",\n  "settings": [' });
    expect(cut.code).toBe(2);
    expect(jsonError(cut).message).toContain('stdin is not valid JSON (line 3, column 16)');
  });

  it('wrong types list every issue (exit 2)', async () => {
    const body = { name: 5, description: 7, settings: [{ content: 3, x: 'left', fontOpacity: 4 }], extra: true };
    const r = await cli(['template', 'create', '-'], { stdin: JSON.stringify(body) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: 6 problems:');
    const issues = [
      'extra: unknown field',
      'name: expected a non-empty string',
      'description: expected a string',
      'settings[0].content: expected a string',
      'settings[0].x: expected a number',
      'settings[0].fontOpacity: expected a number in [0, 1]',
    ];
    for (const issue of issues) expect(r.stderr).toContain(`  - ${issue}`);

    const j = await cli(['--json', 'template', 'create', '-'], { stdin: JSON.stringify(body) });
    expect(j.code).toBe(2);
    const e = jsonError(j);
    expect(e.code).toBe('TEMPLATE_INVALID');
    expect(e.details).toHaveLength(6);
    for (const [i, issue] of issues.entries()) expect(e.details![i]).toContain(issue);
  });

  it('a body that is not an object, or a file that is missing, exits 2', async () => {
    const arr = await cli(['--json', 'template', 'create', '-'], { stdin: '[]' });
    expect(arr.code).toBe(2);
    expect(jsonError(arr).code).toBe('TEMPLATE_INVALID');
    const missing = await cli(['--json', 'template', 'create', 'nope.json']);
    expect(missing.code).toBe(2);
    expect(jsonError(missing)).toEqual(expect.objectContaining({ code: 'INPUT_NOT_READABLE', message: 'cannot read nope.json: no such file' }));
  });
});

describe('watermark usage errors', () => {
  // Each case: argv after `watermark`, the error code, and text that must name the flag(s) at fault.
  const cases: { name: string; argv: string[]; code: string; text: (string | RegExp)[] }[] = [
    { name: 'no video', argv: ['--text', 'hi'], code: 'VIDEO_REQUIRED', text: ['--key', '--video-id'] },
    {
      name: 'both --key and --video-id',
      argv: ['--key', 'k', '--video-id', 'v', '--text', 'hi'],
      code: 'VIDEO_CONFLICT',
      text: ['either --key or --video-id'],
    },
    { name: 'no settings source', argv: ['--key', 'k'], code: 'SETTINGS_REQUIRED', text: ['--text', '--settings', '--template'] },
    {
      name: '--text and --template',
      argv: ['--key', 'k', '--text', 'hi', '--template', 'viewer-corner'],
      code: 'SETTINGS_CONFLICT',
      text: ['--text', '--template'],
    },
    {
      name: '--settings and --template',
      argv: ['--key', 'k', '--settings', 's.json', '--template', 'viewer-corner'],
      code: 'SETTINGS_CONFLICT',
      text: ['--settings', '--template'],
    },
    { name: 'setting flags without --text', argv: ['--key', 'k', '--x', '0.3'], code: 'TEXT_REQUIRED', text: ['--text'] },
    { name: '--map without --template', argv: ['--key', 'k', '--text', 'hi', '--map', 'name=A'], code: 'MAP_NEEDS_TEMPLATE', text: ['--map', '--template'] },
    {
      name: '--batch without --template',
      argv: ['--key', 'k', '--text', 'hi', '--batch', 'rows.csv'],
      code: 'BATCH_NEEDS_TEMPLATE',
      text: ['--batch needs --template'],
    },
    {
      name: '--batch with --map',
      argv: ['--key', 'k', '--template', 'viewer-corner', '--batch', 'rows.csv', '--map', 'name=A'],
      code: 'BATCH_AND_MAP',
      text: ['--batch', '--map'],
    },
    { name: 'bad --containers', argv: ['--key', 'k', '--text', 'hi', '--containers', 'avi'], code: 'BAD_CONTAINERS', text: ['--containers', '"avi"'] },
    {
      name: '--expiration yesterday',
      argv: ['--key', 'k', '--text', 'hi', '--expiration', 'yesterday'],
      code: 'BAD_EXPIRATION',
      text: [/^--expiration: expected Unix time in seconds/, '"yesterday"'],
    },
    {
      name: '--expiration in ms',
      argv: ['--key', 'k', '--text', 'hi', '--expiration', '1700000000000'],
      code: 'BAD_EXPIRATION',
      text: [/^--expiration: /, 'looks like milliseconds'],
    },
    {
      name: '--expiration in the past',
      argv: ['--key', 'k', '--text', 'hi', '--expiration', '1000'],
      code: 'BAD_EXPIRATION',
      text: ['--expiration', 'not in the future'],
    },
    { name: '--out with --no-wait', argv: ['--key', 'k', '--text', 'hi', '--out', 'o', '--no-wait'], code: 'OUT_NEEDS_WAIT', text: ['--out', '--no-wait'] },
    { name: '--x abc', argv: ['--key', 'k', '--text', 'hi', '--x', 'abc'], code: 'BAD_FLAG', text: ['--x: expected a number, got "abc"'] },
    { name: '--font-size out of range', argv: ['--key', 'k', '--text', 'hi', '--font-size', '3'], code: 'SETTINGS_INVALID', text: ['--font-size', 'got 3'] },
    { name: 'bad --map', argv: ['--key', 'k', '--template', 'viewer-corner', '--map', 'name'], code: 'BAD_MAP', text: ['--map: expected name=value'] },
    {
      name: 'missing placeholder value',
      argv: ['--key', 'k', '--template', 'viewer-corner', '--map', 'name=A'],
      code: 'TEMPLATE_MAPPING_INVALID',
      text: ['--map', 'placeholder "email"'],
    },
    { name: 'unknown --template', argv: ['--key', 'k', '--template', 'nope'], code: 'TEMPLATE_NOT_FOUND', text: ['"nope"'] },
  ];

  it.each(cases)('$name: exit 2 with a message naming the flag', async ({ argv, code, text }) => {
    const plain = await cli(['watermark', ...argv]);
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/^error: /m);

    const json = await cli(['--json', 'watermark', ...argv]);
    expect(json.code).toBe(2);
    const e = jsonError(json);
    expect(e.code).toBe(code);
    for (const t of text) {
      if (typeof t === 'string') expect(e.message).toContain(t);
      else expect(e.message).toMatch(t);
    }
    // The same message reaches a person on stderr (up to the clock time some messages quote).
    expect(plain.stderr).toContain(`error: ${e.message.split('\n')[0]!.replace(/ \(now is .*$/, '')}`);
    // The flag name is not repeated ("--expiration: --expiration: ...").
    expect(e.message).not.toMatch(/(--[\w-]+): \1:/);
  });

  it('--expiration errors carry a hint with the accepted forms', async () => {
    const ms = jsonError(await cli(['--json', 'watermark', '--key', 'k', '--text', 'hi', '--expiration', '1700000000000']));
    expect(ms.hint).toBe('did you mean 1700000000?');
    const word = await cli(['watermark', '--key', 'k', '--text', 'hi', '--expiration', 'yesterday']);
    expect(word.stderr).toMatch(/^hint: .*duration/m);
  });

  it('an unknown --key or --video-id exits 2 with VIDEO_NOT_FOUND', async () => {
    const byKey = await cli(['--json', 'watermark', '--key', 'no-such-video', '--text', 'hi']);
    expect(byKey.code).toBe(2);
    expect(jsonError(byKey)).toEqual(expect.objectContaining({ code: 'VIDEO_NOT_FOUND', message: 'no video with key "no-such-video"' }));
    const byId = await cli(['--json', 'watermark', '--video-id', 'no-such-id', '--text', 'hi']);
    expect(byId.code).toBe(2);
    expect(jsonError(byId).code).toBe('VIDEO_NOT_FOUND');
    const plain = await cli(['watermark', '--key', 'no-such-video', '--text', 'hi']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('error: no video with key "no-such-video"');
    expect(plain.stderr).toContain('hint: ');
  });
});

describe('output modes', () => {
  it('--json prints exactly one JSON value on stdout and nothing on stderr', async () => {
    const runs: [string[], number][] = [
      [['--json', 'template', 'list'], 0],
      [['template', 'show', 'session-stamp', '--json'], 0],
      [['--json', 'video', 'list'], 0],
      [['--json', 'watermark', '--key', 'nope', '--text', 'hi'], 2],
      [['--json', 'watermark', '--key', 'k', '--text', 'hi', '--x', 'abc'], 2],
    ];
    for (const [argv, code] of runs) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(code);
      // JSON.parse of the whole of stdout fails on a second value or any stray line.
      expect(() => JSON.parse(r.stdout), argv.join(' ')).not.toThrow();
      expect(r.stdout.endsWith('\n')).toBe(true);
      expect(r.stderr, argv.join(' ')).toBe('');
      expect(r.stdout).not.toMatch(ANSI);
    }
  });

  it('plain output (not a TTY) has no ANSI escapes even without NO_COLOR', async () => {
    const env = { NO_COLOR: undefined };
    for (const argv of [['template', 'list'], ['template', 'show', 'viewer-corner'], ['watermark', '--key', 'nope', '--text', 'hi'], ['frob'], ['--help']]) {
      const r = await cli(argv, { env });
      expect(r.stdout + r.stderr, argv.join(' ')).not.toBe('');
      expect(r.stdout, argv.join(' ')).not.toMatch(ANSI);
      expect(r.stderr, argv.join(' ')).not.toMatch(ANSI);
    }
  });

  it('on a TTY with FORCE_COLOR=1 and no NO_COLOR, data and errors are coloured', async () => {
    const env = { NO_COLOR: undefined, FORCE_COLOR: '1' };
    const list = await cli(['template', 'list'], { tty: true, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(ANSI);
    expect(list.stdout).toContain('\u001b[1mviewer-corner\u001b[22m');
    const err = await cli(['watermark', '--key', 'nope', '--text', 'hi'], { tty: true, env });
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('\u001b[31merror:\u001b[39m');
  });

  it('on a TTY without NO_COLOR, colour is on by default', async () => {
    const r = await cli(['template', 'list'], { tty: true, env: { NO_COLOR: undefined } });
    expect(r.stdout).toMatch(ANSI);
  });

  it('NO_COLOR=1 or --no-color removes colour even on a TTY with FORCE_COLOR', async () => {
    const noColor = await cli(['template', 'list'], { tty: true, env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(noColor.code).toBe(0);
    expect(noColor.stdout).toContain('viewer-corner');
    expect(noColor.stdout).not.toMatch(ANSI);
    const flag = await cli(['--no-color', 'watermark', '--key', 'nope', '--text', 'hi'], { tty: true, env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('error: no video with key');
    expect(flag.stderr).not.toMatch(ANSI);
  });

  it('--json output stays uncoloured on a colour TTY', async () => {
    const r = await cli(['--json', 'template', 'list'], { tty: true, env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(r.stdout).not.toMatch(ANSI);
    expect(r.json()).toHaveLength(3);
  });

  it('--quiet suppresses progress messages on stderr but keeps errors', async () => {
    const loud = await cli(['watermark', '--key', 'nope', '--text', 'hi']);
    expect(loud.stderr).toContain('requesting a watermark from the local engine');
    for (const flag of ['--quiet', '-q']) {
      const quiet = await cli([flag, 'watermark', '--key', 'nope', '--text', 'hi']);
      expect(quiet.code).toBe(2);
      expect(quiet.stderr).not.toContain('requesting a watermark');
      expect(quiet.stderr).toContain('error: no video with key "nope"');
      expect(quiet.stdout).toBe('');
    }
  });
});

describe('configuration errors', () => {
  it('a .wmarkrc.json with an invalid field exits 3 naming the file and the field', async () => {
    const file = write('.wmarkrc.json', { workers: 'lots' });
    const r = await cli(['template', 'list']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: ${file}: workers: expected an integer from 1 to 64, got the string "lots"`);
    expect(r.stderr).toContain(`hint: Fix the listed field in ${file}.`);

    const j = await cli(['--json', 'template', 'list']);
    expect(j.code).toBe(3);
    const e = jsonError(j);
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toContain(file);
    expect(e.message).toContain('workers');
  });

  it('a config file found further up, with an unknown key or broken JSON, exits 3 naming it', async () => {
    const nested = path.join(box.cwd, 'a', 'b');
    mkdirSync(nested, { recursive: true });
    const file = write('.wmarkrc.json', { wrokers: 2 });
    const unknown = await cli(['--json', 'template', 'list'], { cwd: nested });
    expect(unknown.code).toBe(3);
    expect(jsonError(unknown).message).toBe(`${file}: wrokers: unknown key`);
    expect(jsonError(unknown).hint).toContain('workers');

    write('.wmarkrc.json', '{"workers": 2,');
    const broken = await cli(['--json', 'template', 'list'], { cwd: nested });
    expect(broken.code).toBe(3);
    expect(jsonError(broken).message).toContain(`${file}: invalid JSON`);
  });

  it('--config with a missing file exits 3; with a valid file it is used', async () => {
    const r = await cli(['template', 'list', '--config', 'missing.json']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`error: ${path.join(box.cwd, 'missing.json')}: config file not found`);
    expect(r.stderr).toContain('--config');

    write('custom.json', { workers: 2 });
    expect((await cli(['--config', 'custom.json', 'template', 'list'])).code).toBe(0);
    write('bad-custom.json', { encode: { crf: 99 } });
    const bad = await cli(['--json', '--config', 'bad-custom.json', 'template', 'list']);
    expect(bad.code).toBe(3);
    expect(jsonError(bad).message).toContain('encode.crf');
  });

  it('WMARK_WORKERS=abc exits 3 naming the variable', async () => {
    const r = await cli(['template', 'list'], { env: { WMARK_WORKERS: 'abc' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: env WMARK_WORKERS: expected an integer from 1 to 64, got the string "abc"');
    expect(r.stderr).toContain('hint: Fix or unset WMARK_WORKERS.');
    const j = await cli(['--json', 'template', 'list'], { env: { WMARK_WORKERS: 'abc' } });
    expect(j.code).toBe(3);
    expect(jsonError(j)).toEqual(expect.objectContaining({ code: 'CONFIG_INVALID', hint: 'Fix or unset WMARK_WORKERS.' }));
  });
});

describe('doctor', () => {
  interface Check {
    name: string;
    ok: boolean;
    detail: string;
    required: boolean;
  }

  it('--json reports ok with ffmpeg, drawtext, libx264, font and database checks (exit 0)', async () => {
    const r = await cli(['doctor', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const report = r.json<{ ok: boolean; checks: Check[] }>();
    expect(report.ok).toBe(true);
    const byName = new Map(report.checks.map((c) => [c.name, c]));
    for (const name of ['ffmpeg', 'drawtext filter', 'libx264 encoder', 'font', 'data dir', 'database']) {
      expect(byName.get(name), name).toEqual(expect.objectContaining({ ok: true, required: true }));
    }
    expect(byName.get('database')!.detail).toContain(box.dataDir);
  });

  it('a missing ffmpeg (WMARK_FFMPEG=/nonexistent) reports ok false and exits 6', async () => {
    const env = { WMARK_FFMPEG: '/nonexistent' };
    const r = await cli(['--json', 'doctor'], { env });
    expect(r.code).toBe(6);
    const report = r.json<{ ok: boolean; checks: Check[] }>();
    expect(report.ok).toBe(false);
    const ffmpeg = report.checks.find((c) => c.name === 'ffmpeg');
    expect(ffmpeg).toEqual(expect.objectContaining({ ok: false, required: true }));
    expect(ffmpeg!.detail).toContain('/nonexistent');

    const plain = await cli(['doctor'], { env });
    expect(plain.code).toBe(6);
    expect(plain.stdout).toMatch(/✗ ffmpeg/);
    expect(plain.stderr).toContain('warning: missing: ffmpeg');
  });
});
