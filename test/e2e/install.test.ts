// Install anywhere: the packed tarball (`npm pack`) installed globally into a throwaway prefix runs from another
// folder: `wmark --version` and a whole `wmark demo`, with only the runtime dependencies (no tsx, no sources).
// Dependencies come from npm's cache when it has them (--prefer-offline), else the registry; better-sqlite3 may build
// from source, so this takes minutes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../../harness/fixtures.js';

const PKG = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The install scripts the runtime needs: better-sqlite3's native build and the bundled ffmpeg/ffprobe's chmod. */
const ALLOW_SCRIPTS = 'better-sqlite3,@ffmpeg-installer/linux-x64,@ffprobe-installer/linux-x64';

let root: string;
let prefix: string;
let elsewhere: string;
let tarball: string;
let installed: string;
/** What `npm install -g` printed. */
let npmSaid: string;
const npmEnv = () => ({ ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' });

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wmark-install-')));
  prefix = path.join(root, 'prefix');
  elsewhere = path.join(root, 'somewhere-else');
  for (const d of [prefix, elsewhere]) mkdirSync(d, { recursive: true });
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', root], {
    cwd: REPO,
    env: npmEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  tarball = path.join(root, (JSON.parse(packed.slice(packed.indexOf('['))) as { filename: string }[])[0]!.filename);
  const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', `--allow-scripts=${ALLOW_SCRIPTS}`, tarball], {
    cwd: elsewhere,
    env: npmEnv(),
    encoding: 'utf8',
  });
  expect(install.status, `npm install -g failed:\n${install.stdout}\n${install.stderr}`).toBe(0);
  npmSaid = `${install.stdout}\n${install.stderr}`;
  installed = path.join(prefix, 'lib', 'node_modules', 'wmark');
}, 900_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The installed command, found on PATH from a folder that has nothing to do with the checkout. */
function wmark(args: string[], env: Record<string, string> = {}) {
  return spawnSync('wmark', args, {
    cwd: elsewhere,
    env: { PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH}`, HOME: root, CI: '1', NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
}

describe('package.json', () => {
  it('ships the compiled CLI, docs and templates through bin and files, with tsx a devDependency only', () => {
    expect(PKG.bin).toEqual({ wmark: 'bin/wmark.js' });
    expect(PKG.files).toEqual(expect.arrayContaining(['bin', 'dist', 'docs', 'templates', 'README.md']));
    expect(PKG.dependencies.tsx).toBeUndefined();
    expect(PKG.devDependencies.tsx).toBeDefined();
  });
});

describe('npm pack + npm install -g into a temporary prefix', () => {
  it('the tarball holds the build, docs and templates, and no sources or tests', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const f of [
      'package/bin/wmark.js',
      'package/dist/cli/main.js',
      // The bundled CLI bin/wmark.js runs, and its split chunks.
      'package/dist/bundle/wmark.js',
      // The library entry of package.json's exports map, with its declarations.
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/docs/api.md',
      'package/docs/img/corners.png',
      'package/templates/player/index.html',
      'package/README.md',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /^package\/(src|test|scripts)\//.test(f))).toEqual([]);
  });

  it('installs only runtime dependencies: no tsx, vitest or typescript', () => {
    const deps = existsSync(path.join(installed, 'node_modules'))
      ? execFileSync('ls', [path.join(installed, 'node_modules')], { encoding: 'utf8' }).split('\n')
      : [];
    for (const dev of ['tsx', 'vitest', 'typescript', 'playwright-core']) {
      expect(deps).not.toContain(dev);
      expect(existsSync(path.join(prefix, 'lib', 'node_modules', dev))).toBe(false);
    }
    expect(existsSync(path.join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(path.join(installed, 'dist', 'bundle', 'wmark.js'))).toBe(true);
  });

  it("asks for no install script beyond README's list: wmark's own build is in the tarball, not in a prepare script", () => {
    expect(npmSaid).not.toMatch(/wmark@[\d.]+ \((prepare|preinstall|install|postinstall)\b/);
    expect(npmSaid).not.toMatch(/--allow-scripts=\S*\bwmark\b/);
  });

  it('`wmark --version` runs from another folder', () => {
    const r = wmark(['--version']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(PKG.version);
  });

  it('`wmark demo` runs the whole product from another folder and exits (no TTY)', () => {
    const data = path.join(root, 'data');
    const r = wmark(['--json', 'demo', '--port', '0'], { WMARK_HOME: data, WMARK_CONFIG_DIR: path.join(root, 'config') });
    expect(r.status, r.stderr).toBe(0);
    const demo = JSON.parse(r.stdout) as { sample: string; files: string; ready: { status: string; containers: { href: string } }; keepServing: boolean };
    expect(demo.ready.status).toBe('READY');
    expect(demo.keepServing).toBe(false);
    expect(demo.sample.startsWith(data + path.sep)).toBe(true);
    expect(existsSync(demo.sample)).toBe(true);
    expect(existsSync(path.join(demo.files, 'video.mp4'))).toBe(true);
    // The templates and player came from the installed package, not the checkout.
    expect(demo.ready.containers.href).toMatch(/\/player\/1\.0\/\?/);
    expect(r.stderr).not.toMatch(/^\s+at .+/m);
  });
});
