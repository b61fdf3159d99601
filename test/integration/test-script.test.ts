// scripts/test.sh on a fresh machine says what it will install, and why, before it installs anything: run on a copy
// of the repository's layout with stand-in npm, npx, apt-get and id that only log their calls.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, tempDir } from '../../harness/fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A checkout without node_modules (and, unless `chromium`, without a browser on PATH); returns the script's stdout. */
function runScript(options: { root: boolean; chromium?: boolean; redis?: boolean; postgres?: boolean; haproxy?: boolean; nodeModules?: boolean }): string[] {
  const root = tempDir('test-script');
  dirs.push(root);
  const bin = path.join(root, 'stub-bin');
  for (const d of [path.join(root, 'scripts'), path.join(root, 'test/browser'), bin]) mkdirSync(d, { recursive: true });
  copyFileSync(path.join(REPO, 'scripts', 'test.sh'), path.join(root, 'scripts', 'test.sh'));
  writeFileSync(path.join(root, 'package-lock.json'), '{}');
  writeFileSync(path.join(root, 'test/browser/player.test.ts'), '');
  if (options.nodeModules) {
    mkdirSync(path.join(root, 'node_modules'));
    writeFileSync(path.join(root, 'node_modules/.package-lock.json'), '{}');
  }
  const stub = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  // The stand-ins log to the file the script's own output goes to (their stdout may be sent to /dev/null).
  stub('npm', 'echo "RAN npm $*" >> "$STUB_LOG"');
  stub('npx', 'echo "RAN npx $*" >> "$STUB_LOG"');
  stub('apt-get', 'echo "RAN apt-get $*" >> "$STUB_LOG"');
  stub('id', options.root ? 'echo 0' : 'echo 1000');
  if (options.chromium) stub('chromium', 'exit 0');
  if (options.redis) stub('redis-server', 'exit 0');
  // PostgreSQL is looked for where Debian puts it (WMARK_PG_BIN here), not on PATH.
  const pgBin = path.join(root, 'pg-bin');
  if (options.postgres) {
    mkdirSync(pgBin);
    writeFileSync(path.join(pgBin, 'initdb'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(pgBin, 'initdb'), 0o755);
  }
  // Only the stand-ins and the few real tools the script uses, so a chromium elsewhere on this machine is not found.
  for (const tool of ['dirname', 'mkdir', 'ls'])
    symlinkSync(execFileSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
  // HAProxy too, where Debian puts it (WMARK_HAPROXY here).
  const haproxy = path.join(root, 'haproxy-bin');
  if (options.haproxy) {
    writeFileSync(haproxy, '#!/bin/sh\nexit 0\n');
    chmodSync(haproxy, 0o755);
  }
  const log = path.join(root, 'out.log');
  const fd = openSync(log, 'a');
  try {
    spawnSync('/bin/bash', [path.join(root, 'scripts', 'test.sh')], {
      // The patched x264 is the band gate's and has its own build script; WMARK_X264 says it is there.
      env: { PATH: bin, STUB_LOG: log, WMARK_PG_BIN: pgBin, WMARK_HAPROXY: haproxy, WMARK_X264: path.join(root, 'x264') },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe('scripts/test.sh', () => {
  it('lists npm ci, chromium, redis-server, postgresql and haproxy, with the reasons, before running any', () => {
    const lines = runScript({ root: true });
    const first = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const plan = first(/^scripts\/test\.sh will install/);
    expect(plan, lines.join('\n')).toBe(0);
    expect(lines[1]).toMatch(/^ {2}- npm packages \(npm ci.*\): wmark's dependencies and the test tools/);
    expect(lines[2]).toMatch(/^ {2}- the system package chromium \(apt-get install chromium\): a real browser for the player tests/);
    expect(lines[3]).toMatch(/^ {2}- the system package redis-server \(apt-get install redis-server\): a real Redis for the render-farm queue tests/);
    expect(lines[4]).toMatch(/^ {2}- the system package postgresql \(apt-get install postgresql\): a real PostgreSQL 15 for the state-store tests/);
    expect(lines[5]).toMatch(/^ {2}- the system package haproxy \(apt-get install haproxy\): a real HAProxy in front of several wmark serve instances/);
    const npmRun = first(/^RAN npm ci/);
    const aptRun = first(/^RAN apt-get install -y -qq chromium/);
    expect(npmRun).toBeGreaterThan(5);
    expect(lines[npmRun - 1]).toBe('installing npm packages (npm ci)');
    expect(aptRun).toBeGreaterThan(npmRun);
    expect(first(/^RAN apt-get update/)).toBe(aptRun - 1);
    expect(lines[aptRun - 2]).toMatch(/^installing Chromium for the browser tests/);
    // One apt-get update serves every package.
    const redisRun = first(/^RAN apt-get install -y -qq redis-server/);
    expect(redisRun).toBeGreaterThan(aptRun);
    expect(lines[redisRun - 1]).toMatch(/^installing redis-server for the render-farm tests/);
    const postgresRun = first(/^RAN apt-get install -y -qq postgresql/);
    expect(postgresRun).toBeGreaterThan(redisRun);
    expect(lines[postgresRun - 1]).toMatch(/^installing postgresql for the state-store tests/);
    const haproxyRun = first(/^RAN apt-get install -y -qq haproxy/);
    expect(haproxyRun).toBeGreaterThan(postgresRun);
    expect(lines[haproxyRun - 1]).toMatch(/^installing haproxy for the load-balancer tests/);
    expect(lines.filter((l) => /^RAN apt-get update/.test(l))).toHaveLength(1);
    expect(first(/^RAN npx vitest run/)).toBeGreaterThan(haproxyRun);
  });

  it('installs and announces nothing when everything is there', () => {
    const lines = runScript({ root: true, chromium: true, redis: true, postgres: true, haproxy: true, nodeModules: true });
    expect(lines.filter((l) => /install|RAN npm|RAN apt-get/.test(l))).toEqual([]);
    expect(lines[0]).toMatch(/^RAN npx vitest run/);
  });

  it('without root it only announces npm ci, and names what to do about Chromium, Redis, PostgreSQL and HAProxy instead of installing them', () => {
    const lines = runScript({ root: false });
    expect(lines.slice(0, 2).join('\n')).toMatch(/will install[\s\S]*npm packages/);
    expect(lines.some((l) => /chromium \(apt-get/.test(l))).toBe(false);
    expect(lines.some((l) => /^RAN apt-get/.test(l))).toBe(false);
    expect(lines.some((l) => /redis-server \(apt-get/.test(l))).toBe(false);
    expect(lines.some((l) => /the render-farm tests need Redis: install it/.test(l))).toBe(true);
    expect(lines.some((l) => /postgresql \(apt-get/.test(l))).toBe(false);
    expect(lines.some((l) => /the PostgreSQL state-store tests need PostgreSQL 15: install it/.test(l))).toBe(true);
    expect(lines.some((l) => /haproxy \(apt-get/.test(l))).toBe(false);
    expect(lines.some((l) => /the load-balancer tests need HAProxy: install it .* or set WMARK_HAPROXY/.test(l))).toBe(true);
    expect(readFileSync(path.join(REPO, 'scripts', 'test.sh'), 'utf8')).toContain('or set WMARK_CHROMIUM');
  });
});
