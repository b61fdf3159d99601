// The install scripts npm asks about, as README.md and package.json name them: npm 11 warns about every package whose
// install script is "not yet covered by allowScripts", so package.json must allow each one a checkout's `npm ci` runs
// (or `npm ci` warns), and README's `--allow-scripts=` list must be what a global install of the tarball names (see
// test/e2e/install.test.ts for npm's own words).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../../harness/fixtures.js';

interface LockEntry {
  hasInstallScript?: boolean;
  dev?: boolean;
  os?: string[];
  cpu?: string[];
}
const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  name: string;
  scripts: Record<string, string>;
  allowScripts: Record<string, boolean>;
};
const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');

/** Packages with an install script that npm installs on this os and cpu (an optional package for another platform is skipped). */
function withInstallScripts(os: string, cpu: string, options: { dev: boolean }): string[] {
  const names: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (!where || !entry.hasInstallScript || (entry.dev && !options.dev)) continue;
    if (entry.os && !entry.os.includes(os)) continue;
    if (entry.cpu && !entry.cpu.includes(cpu)) continue;
    names.push(where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }
  return names.sort();
}

describe('install scripts', () => {
  it("package.json allows every install script a checkout's npm ci runs here", () => {
    const allowed = Object.keys(pkg.allowScripts).filter((k) => pkg.allowScripts[k]);
    expect(withInstallScripts(process.platform, process.arch, { dev: true }).filter((p) => !allowed.includes(p))).toEqual([]);
  });

  it("README's --allow-scripts list is what a global install on Linux x64 names: the runtime packages and wmark itself", () => {
    const listed = /--allow-scripts=([\w@/,.-]+)/.exec(readme)?.[1]?.split(',');
    expect(listed).toBeDefined();
    // wmark's own `prepare` (the build) counts as an install script to npm.
    const own = ['prepare', 'preinstall', 'install', 'postinstall'].some((s) => pkg.scripts[s]) ? [pkg.name] : [];
    expect([...listed!].sort()).toEqual([...own, ...withInstallScripts('linux', 'x64', { dev: false })].sort());
  });
});
