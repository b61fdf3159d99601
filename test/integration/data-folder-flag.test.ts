// A --data-dir or WMARK_HOME that names no folder is refused, naming it, by commands that read what a data folder
// holds; those that start one by design create it and say so, once.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { tempDir } from '../../harness/fixtures.js';

describe('a data folder that does not exist', () => {
  it('is refused with exit 3, named with where it came from, and nothing is created', async () => {
    const root = tempDir('data-flag');
    const typo = path.join(root, 'typo', 'x');
    const env = { WMARK_CONFIG_DIR: path.join(root, 'config') };
    const flag = await runCli(['--data-dir', typo, 'video', 'list'], { env });
    expect(flag.code).toBe(3);
    expect(flag.stderr).toContain(`error: the data folder ${typo} (flag --data-dir) does not exist`);
    expect(flag.stderr).toContain('`wmark ingest`, `wmark serve` and `wmark demo` start a new data folder');
    const fromEnv = await runCli(['--json', 'watermark', 'list'], { env: { ...env, WMARK_HOME: typo } });
    expect(fromEnv.code).toBe(3);
    expect(JSON.parse(fromEnv.stdout).error).toMatchObject({ code: 'DATA_DIR_MISSING', message: `the data folder ${typo} (env WMARK_HOME) does not exist` });
    expect(existsSync(typo)).toBe(false);
  });

  it('a command that starts one by design creates it and says so the first time only', async () => {
    const root = tempDir('data-flag');
    const fresh = path.join(root, 'new-data');
    const env = { WMARK_CONFIG_DIR: path.join(root, 'config') };
    const first = await runCli(['--data-dir', fresh, 'auth', 'keys', 'create'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr.match(/created a new data folder at .*/g)).toEqual([`created a new data folder at ${fresh}`]);
    const again = await runCli(['--data-dir', fresh, 'video', 'list'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('created a new data folder');
  });
});
