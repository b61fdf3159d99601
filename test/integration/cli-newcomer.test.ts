// A newcomer's path through the CLI in-process: clear refusals (off-frame text, a key in use, a busy port), --replace.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { cliIn, type Sandbox, sandbox, until } from '../../harness/cli-helpers.js';
import { flat } from '../../harness/fixtures.js';
import { pathOf, visibleCommands } from '../../src/cli/help.js';
import { buildProgram } from '../../src/cli/program.js';
import { humanDate } from '../../src/cli/render.js';

let box: Sandbox;
let cli: ReturnType<typeof cliIn>;
let clipA: string;
let clipB: string;

beforeAll(async () => {
  box = sandbox('newcomer');
  cli = cliIn(box);
  [clipA, clipB] = await Promise.all([flat('336699', 4), flat('993366', 4)]);
  const r = await cli(['ingest', clipA, '--key', 'clip-1']);
  expect(r.code, r.stderr).toBe(0);
});

afterAll(() => box?.dispose());

describe('clear refusals', () => {
  it('text wholly outside the frame is refused with exit 2 naming the field, before anything is rendered', async () => {
    const r = await cli(['watermark', '--key', 'clip-1', '--text', 'lost', '--x', '2']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: settings\[0\]\.x: the text at x 2, y 0.5 lies wholly outside the frame/m);
    expect(r.stderr).toContain('320x180');
    const json = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'lost', '--y', '-1', '--vertical-align', 'BOTTOM']);
    expect(json.code).toBe(2);
    expect(json.json().error).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.stringMatching(/^settings\[0\]\.y: /)] });
  });

  it('--batch without --template says that is what it lacks, and what the file holds', async () => {
    const r = await cli(['watermark', '--key', 'clip-1', '--batch', 'viewers.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --batch needs --template: each row fills the placeholders of that template');
    expect(r.stderr).toContain('whose header row names the placeholders');
    expect(r.stderr).not.toContain('say what to draw');
  });

  it('another source under a key in use is KEY_EXISTS (exit 2) with a hint naming --replace', async () => {
    const r = await cli(['--json', 'ingest', clipB, '--key', 'clip-1']);
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'KEY_EXISTS', message: `the key "clip-1" already names another source (${clipA})` });
    expect(r.json().error.hint).toContain('--replace');
  });

  it('--replace forgets the old video, its watermarks and their files, and ingests the new source under the key', async () => {
    const made = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8']);
    expect(made.code, made.stderr).toBe(0);
    const old = made.json() as { id: string; videoId: string };
    const oldFiles = path.join(box.dataDir, 'media', 'watermarks', old.videoId);
    expect(readdirSync(oldFiles)).toContain(old.id);

    // A source that cannot be read leaves everything as it was.
    const missing = await cli(['ingest', path.join(box.cwd, 'nope.mp4'), '--key', 'clip-1', '--replace']);
    expect(missing.code).toBe(2);
    expect(readdirSync(oldFiles)).toContain(old.id);

    const r = await cli(['ingest', clipB, '--key', 'clip-1', '--replace']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`warning: replaced video ${old.videoId} (${clipA}) and its 1 watermark(s), whose links no longer play`);
    const videos = (await cli(['--json', 'video', 'list'])).json() as { id: string; key: string; sourceUrl: string; status: string }[];
    expect(videos).toHaveLength(1);
    expect(videos[0]).toMatchObject({ key: 'clip-1', sourceUrl: clipB, status: 'INGESTED' });
    expect(videos[0]!.id).not.toBe(old.videoId);
    expect(existsSync(oldFiles)).toBe(false);
    expect(existsSync(path.join(box.dataDir, 'media', 'videos', old.videoId))).toBe(false);
    // The same text on the new video is a new watermark, rendered again.
    const again = await cli(['--json', 'watermark', '--key', 'clip-1', '--text', 'for alice', '--containers', 'm3u8']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ created: true, videoId: videos[0]!.id });
  });

  it('without --key a file is keyed by its name; another file of that name elsewhere is refused with a hint to give --key', async () => {
    const here = path.join(box.cwd, 'opening.mp4');
    const there = path.join(box.root, 'elsewhere', 'opening.mp4');
    mkdirSync(path.dirname(there), { recursive: true });
    copyFileSync(clipA, here);
    copyFileSync(clipB, there);
    const r = await cli(['--json', 'ingest', 'opening.mp4']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ key: 'opening', status: 'INGESTED' });
    // The same file again is the same video: nothing to do.
    expect((await cli(['--json', 'ingest', here])).json()).toMatchObject({ key: 'opening', id: r.json().id });
    const taken = await cli(['ingest', there]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain(`error: the key "opening" already names another source (${here}) (the key was taken from the file name)`);
    expect(taken.stderr).toContain(`hint: Give this one its own key: wmark ingest ${there} --key opening-2`);
  });

  it('a --map that does not fit its template, and a forensic source under 5 minutes, say what would', async () => {
    const map = await cli(['watermark', '--key', 'clip-1', '--template', 'viewer-corner', '--map', 'viewer=alice']);
    expect(map.code).toBe(2);
    expect(map.stderr).toMatch(/^hint: `wmark template show viewer-corner` lists the placeholders it needs \(name, email\)\.$/m);
    const short = await cli(['ingest', await flat('663399', 150), '--key', 'short', '--forensic']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('error: forensic watermarking needs a video of at least 5 minutes;');
    expect(short.stderr).toContain('lasts 2:30');
    expect(short.stderr).toMatch(/^hint: Ingest it without --forensic/m);
  });

  it('--replace with --remote is refused: the service API has no replace', async () => {
    const r = await cli(['ingest', clipB, '--key', 'clip-1', '--replace', '--remote', 'http://127.0.0.1:9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--replace applies to the local engine');
  });

  it('serve on a busy port says so and suggests --port 0 (exit 2); --port abc is a usage error too', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const r = await cli(['serve', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain('--port 0');
      expect(r.stderr).not.toContain('unexpected');
      const json = await cli(['--json', 'serve', '--port', String(port)]);
      expect(json.code).toBe(2);
      expect(json.json().error.code).toBe('PORT_IN_USE');
    } finally {
      holder.close();
    }
    for (const bad of ['abc', '70000', '-1']) {
      const r = await cli(['--json', 'serve', '--port', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.json().error).toMatchObject({ code: 'BAD_FLAG', message: expect.stringContaining('--port') });
    }
  });
});

describe('watermark list|view|rm and --open', () => {
  it('list shows what exists: a header row at a terminal only, JSON with --json', async () => {
    const json = await cli(['--json', 'watermark', 'list']);
    expect(json.code, json.stderr).toBe(0);
    const list = json.json() as { id: string; status: string; videoKey: string; text: string }[];
    expect(list).toEqual([expect.objectContaining({ status: 'READY', videoKey: 'clip-1', text: 'for alice' })]);
    const plain = await cli(['watermark', 'list']);
    // A table shows a date to the minute; --json gives Unix ms, as every answer does.
    expect(plain.stdout.split('\n')[0]).toMatch(new RegExp(`^${list[0]!.id}\\s+READY\\s+clip-1\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+for alice$`));
    const createdOn = (list[0] as unknown as { createdOn: unknown }).createdOn;
    expect(typeof createdOn).toBe('number');
    expect(Math.abs((createdOn as number) - Date.now())).toBeLessThan(600_000);
    const tty = await cli(['watermark', 'list'], { tty: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+VIDEO\s+CREATED\s+TEXT$/);
    expect(tty.stdout.split('\n')[1]).toContain(list[0]!.id);
    // `watermark list --key` reaches list (the parent's own --key is read only before the subcommand name).
    expect((await cli(['--json', 'watermark', 'list', '--key', 'clip-1'])).json()).toHaveLength(1);
    expect((await cli(['--json', 'watermark', 'list', '--key', 'nope'])).code).toBe(2);
  });

  it('video list has a header row at a terminal and none when piped', async () => {
    const tty = await cli(['video', 'list'], { tty: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+DURATION\s+KEY$/);
    const plain = await cli(['video', 'list']);
    expect(plain.stdout.split('\n')[0]).toMatch(/^[0-9a-f-]{36}\s+INGESTED\s+4\.0 s\s+clip-1$/);
  });

  it('view prints fresh links and files; --open hands the player link to the opener', async () => {
    const [w] = (await cli(['--json', 'watermark', 'list'])).json() as { id: string }[];
    const view = await cli(['--json', 'watermark', 'view', w!.id]);
    expect(view.code, view.stderr).toBe(0);
    const body = view.json() as { id: string; status: string; containers: { href: string }; files: { dir: string } };
    expect(body).toMatchObject({ id: w!.id, status: 'READY', videoKey: 'clip-1', createdOn: expect.any(Number) });
    expect(existsSync(body.files.dir)).toBe(true);

    const log = path.join(box.root, 'opened.txt');
    const opener = path.join(box.root, 'opener.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" > '${log}'\n`, { mode: 0o755 });
    const opened = await cli(['watermark', 'view', w!.id, '--open'], { env: { WMARK_OPENER: opener } });
    expect(opened.code, opened.stderr).toBe(0);
    const href = /^ {2}player +(\S+)$/m.exec(opened.stdout)?.[1];
    expect(href).toBeDefined();
    // The links' own expiry (a day), not the watermark's (never), is what the reader needs beside them.
    const signed = Number(new URL(href!).searchParams.get('expiration'));
    expect(signed - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(opened.stdout).toContain(`  links     expire ${humanDate(signed)}\n  expires   never (the watermark itself)`);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').trim() === href, 'the opener to record the link', 5000);
    // A missing opener is a warning, not a failure.
    const missing = await cli(['watermark', 'view', w!.id, '--open'], { env: { WMARK_OPENER: path.join(box.root, 'no-such-opener') } });
    expect(missing.code).toBe(0);
    expect(missing.stderr).toContain('warning: could not open the link');
  });

  it('rm removes the watermark, its files and links; an unknown id removes nothing (exit 2)', async () => {
    const [w] = (await cli(['--json', 'watermark', 'list'])).json() as { id: string }[];
    const dir = ((await cli(['--json', 'watermark', 'view', w!.id])).json() as { files: { dir: string } }).files.dir;
    const typo = await cli(['watermark', 'rm', w!.id, 'no-such-id']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('error: no watermark no-such-id\nhint: See `wmark watermark list` for the ids.');
    expect(existsSync(dir)).toBe(true);
    const r = await cli(['--json', 'watermark', 'rm', w!.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual({ deleted: [w!.id] });
    expect(existsSync(dir)).toBe(false);
    expect((await cli(['--json', 'watermark', 'list'])).json()).toEqual([]);
    const gone = await cli(['--json', 'watermark', 'view', w!.id]);
    expect(gone.code).toBe(2);
    expect(gone.json().error.code).toBe('WATERMARK_NOT_FOUND');
  });

  it('watermark create is the bare form under a name', async () => {
    const r = await cli(['--json', 'watermark', 'create', '--key', 'clip-1', '--text', 'for carol', '--containers', 'm3u8']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'READY', created: true });
  });
});

describe('help and errors', () => {
  it('bare wmark prints the help and "Get started: wmark demo", exit 0', async () => {
    const r = await runCli([], { cwd: box.cwd, env: { WMARK_CONFIG_DIR: box.configDir, WMARK_HOME: box.dataDir } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: wmark [options] [command]');
    expect(r.stdout).toContain('Get started: wmark demo');
  });

  it('every command has Examples and the global options in a line; its docs are named by paths that exist; no design notes', async () => {
    const program = await buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, stdin: process.stdin, env: {}, cwd: box.cwd });
    const paths = visibleCommands(program).map(pathOf);
    expect(paths).toEqual(
      expect.arrayContaining(['ingest', 'watermark', 'watermark list', 'watermark view', 'watermark rm', 'completion', 'auth keys create']),
    );
    for (const p of ['', ...paths]) {
      const r = await cli([...p.split(' ').filter(Boolean), '--help']);
      expect(r.code, p).toBe(0);
      expect(r.stdout, p).toContain('\nExamples:\n  $ wmark');
      if (p)
        expect(r.stdout.replace(/\s+/g, ' '), p).toContain(
          'Global options: --json, --quiet, --verbose, --no-color, --config <file>, --data-dir <dir>, --db [url], --help',
        );
      expect(r.stdout, p).not.toMatch(/SPEC|DESIGN/);
      // A doc is named by its installed path, which opens from any folder; never as a path relative to a checkout.
      expect(r.stdout, p).not.toMatch(/(?<![\w/.-])docs\/\w+\.md/);
      const docs = r.stdout.slice(r.stdout.indexOf('Learn more:')).match(/^ {2}(\/\S+\.md)/gm) ?? [];
      for (const doc of docs) expect(existsSync(doc.trim()), doc).toBe(true);
    }
  });

  it('watermark --help: subcommands first, in fewer than 80 lines; local and remote flags grouped (--no-wait local, --wait remote)', async () => {
    const help = (await cli(['watermark', '--help'])).stdout;
    expect(help.indexOf('Commands:\n  create')).toBeGreaterThan(0);
    expect(help.indexOf('Commands:')).toBeLessThan(help.indexOf('--key <key>'));
    expect(help.split('\n').length).toBeLessThan(80);
    const section = (heading: string) => help.slice(help.indexOf(heading), help.indexOf('\n\n', help.indexOf(heading)));
    const local = section('Local options');
    const remote = section('Remote options (with --remote):');
    expect(local).toContain('--no-wait');
    expect(local).toContain('--public-url');
    expect(local).not.toMatch(/--wait\b/);
    expect(remote).toMatch(/--wait\b/);
    expect(remote).toContain('--remote [url]');
    expect(remote).toContain('--timeout');
    const ingest = (await cli(['ingest', '--help'])).stdout;
    expect(ingest.slice(ingest.indexOf('Remote options'))).toContain('--interval');
  });

  it("with --json every error prints once (commander's own too), and user mistakes exit 2", async () => {
    const runs = [
      ['--json', 'frob'],
      ['--json', 'watermark', '--bogus'],
      ['--json', 'video'],
      ['--json', 'completion', 'tcsh'],
      ['--json', 'serve', '--port', 'abc'],
      ['--json', 'watermark', '--key', 'clip-1', '--api', '3.0'],
      ['--json', 'ingest', path.join(box.cwd, 'missing.mp4')],
    ];
    for (const argv of runs) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toBe('');
      expect(Object.keys(JSON.parse(r.stdout)), argv.join(' ')).toEqual(['error']);
    }
    const text = await cli(['watermark', '--bogus']);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain("error: unknown option '--bogus'");
    expect(text.stdout).toBe('');
  });
});
