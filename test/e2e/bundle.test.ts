// The bundled CLI (dist/bundle/, built by globalSetup and by `npm run build`): bin/wmark.js runs it, it finds every
// file the package ships from its own depth (the package-root module, bundled beside the CLI), and its heavy parts
// stay in chunks of their own that --version never loads.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runWmark, sandbox } from '../../harness/cli-helpers.js';
import { flat, REPO } from '../../harness/fixtures.js';
import { PACKAGE_FILES as FROM_SOURCES } from '../../src/package-root.js';

const BUNDLE = path.join(REPO, 'dist', 'bundle');
type Files = typeof FROM_SOURCES;
const fromBundle = async (): Promise<Files> =>
  ((await import(pathToFileURL(path.join(BUNDLE, 'package-root.js')).href)) as { PACKAGE_FILES: Files }).PACKAGE_FILES;

describe('the CLI bundle', () => {
  const box = sandbox('bundle');
  afterAll(() => box.dispose());

  it('finds each shipped file from the bundle, where the sources find it', async () => {
    const files = await fromBundle();
    expect(files).toEqual(FROM_SOURCES);
    expect((JSON.parse(readFileSync(files.manifest, 'utf8')) as { name: string }).name).toBe('wmark');
    expect(readdirSync(files.docs)).toEqual(expect.arrayContaining(['settings.md', 'api.md']));
    const templates = readdirSync(files.templates).filter((f) => f.endsWith('.json'));
    expect(templates.length).toBeGreaterThan(0);
    for (const t of templates) expect(JSON.parse(readFileSync(path.join(files.templates, t), 'utf8'))).toHaveProperty('settings');
    expect(readFileSync(path.join(files.player, 'index.html'), 'utf8')).toMatch(/<html/i);
    expect(readFileSync(files.bin, 'utf8')).toContain('dist/bundle/wmark.js');
  });

  it('is what bin/wmark.js runs: --help loads the bundle alone, no command module, never the engine, SQLite or the server; a bare --version loads nothing', () => {
    // A loader hook in the same process lists every module Node loads.
    const hook = `data:text/javascript,${encodeURIComponent(
      'import { register } from \'node:module\'; register(\'data:text/javascript,\' + encodeURIComponent(\'export async function load(u, c, n) { if (u.startsWith("file:")) process.stderr.write("loaded " + u + "\\\\n"); return n(u, c); }\'));',
    )}`;
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, ['--import', hook, path.join(REPO, 'bin', 'wmark.js'), ...args], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const loaded = r.stderr
        .split('\n')
        .filter((l) => l.startsWith('loaded '))
        .map((l) => l.slice('loaded '.length));
      return { stdout: r.stdout, loaded };
    };
    const help = run(['--help']);
    expect(help.stdout).toMatch(/^Usage: wmark/);
    expect(help.loaded.some((u) => u.endsWith('/dist/bundle/wmark.js'))).toBe(true);
    expect(help.loaded.filter((u) => !u.includes('/dist/bundle/') && !u.endsWith('/bin/wmark.js'))).toEqual([]);
    expect(help.loaded.join('\n')).not.toMatch(/better-sqlite3|sqlite-state-store|node-server/);
    // Each command's module is a chunk named after it: the root help is the command table's lines, not the commands.
    const commandChunk =
      /\/chunks\/(ingest|video|template|watermark|watermark-manage|serve|status|worker|detect|auth|auth-remote|poll|doctor|db|demo|job|completion)-[A-Z0-9]+\.js$/;
    expect(help.loaded.filter((u) => commandChunk.test(u))).toEqual([]);
    // A command's own help loads its module and not the others.
    const commandHelp = run(['watermark', '--help']);
    expect(commandHelp.stdout).toMatch(/^Usage: wmark watermark/);
    expect(
      commandHelp.loaded
        .filter((u) => commandChunk.test(u))
        .map((u) => commandChunk.exec(u)![1])
        .sort(),
    ).toEqual(['watermark', 'watermark-manage']);
    const version = run(['--version']);
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version);
    expect(version.loaded.filter((u) => !u.endsWith('/bin/wmark.js'))).toEqual([]);
  });

  it('renders a watermark from the bundle: ingest, then a job that runs to READY with every segment in its playlist', async () => {
    const env = { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir };
    const clip = await flat('336699', 4);
    const ingest = await runWmark(['--json', 'ingest', clip, '--key', 'bundled'], { env, cwd: box.cwd });
    expect(ingest.code, ingest.stderr).toBe(0);
    const video = JSON.parse(ingest.stdout) as { id: string; segments: number };
    const r = await runWmark(['--json', 'watermark', '--key', 'bundled', '--text', 'from the bundle', '--containers', 'm3u8'], { env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    const wm = JSON.parse(r.stdout) as { id: string; status: string };
    expect(wm.status).toBe('READY');
    const playlist = readFileSync(path.join(box.dataDir, 'media', 'watermarks', video.id, wm.id, 'video.m3u8'), 'utf8');
    expect(playlist.match(/#EXTINF/g)?.length).toBe(video.segments);
    expect(r.stderr).not.toMatch(/^\s+at .+/m);
  });

  it('runs a command that reads shipped files: the built-in templates', async () => {
    const r = await runWmark(['--json', 'template', 'list'], { env: { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir }, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    const ids = (JSON.parse(r.stdout) as { id: string }[]).map((t) => t.id);
    const shipped = readdirSync(FROM_SOURCES.templates).filter((f) => f.endsWith('.json'));
    expect(shipped.length).toBeGreaterThan(0);
    for (const file of shipped) expect(ids).toContain(path.basename(file, '.json'));
  });
});
