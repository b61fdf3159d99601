// Lint and format as a test: `biome check` (biome.jsonc's rules, the same check as `npm run lint`) passes on src, harness,
// test, bench and scripts with no error and no warning, and knip (knip.jsonc) finds no unused file, export or
// dependency, so the test command catches what the linter would.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../harness/fixtures.js';

const BIOME = path.join(REPO, 'node_modules', '.bin', 'biome');
const KNIP = path.join(REPO, 'node_modules', '.bin', 'knip');

describe('lint', () => {
  it('biome check passes on src, harness, test, bench and scripts', { timeout: 60_000 }, () => {
    const r = spawnSync(BIOME, ['check', '--colors=off', 'src', 'harness', 'test', 'bench', 'scripts'], { cwd: REPO, encoding: 'utf8' });
    const output = `${r.stdout}${r.stderr}${r.error ? `\n${r.error.message}` : ''}`;
    expect(r.status, `biome check failed (fix it, or run npm run format for layout):\n${output}`).toBe(0);
    // Warnings (an unused import, say) do not change biome's exit code, but they are not clean either.
    expect(output, `biome check warned:\n${output}`).not.toMatch(/Found \d+ warnings?/);
  });

  it('knip finds no unused file, export or dependency', { timeout: 180_000 }, () => {
    const r = spawnSync(KNIP, ['--no-progress', '--no-config-hints'], { cwd: REPO, encoding: 'utf8' });
    const output = `${r.stdout}${r.stderr}${r.error ? `\n${r.error.message}` : ''}`;
    expect(r.status, `knip found dead surface (delete it, or stop exporting what only its own file uses):\n${output}`).toBe(0);
  });
});
