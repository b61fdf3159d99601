// The state database's URL: db.url in the config file, then WMARK_DB_URL, then --db; and how any URL with a password
// is shown (never the password).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ConfigFlags, type LoadConfigOptions, loadConfig } from '../../../src/config/load-config.js';
import { redactUrl, scrubUrl } from '../../../src/core/redact-url.js';
import { redactQueueUrl } from '../../../src/farm/queue-url.js';

let root: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmark-db-config-')));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function load(overrides: Partial<LoadConfigOptions> & { flags?: ConfigFlags } = {}) {
  return loadConfig({
    cwd: root,
    flags: {},
    availableParallelism: 2,
    platformDirs: { data: path.join(root, 'data'), config: path.join(root, 'config') },
    stopDir: root,
    ...overrides,
    env: { WMARK_CONFIG_DIR: path.join(root, 'user-config'), ...overrides.env },
  });
}

describe('db.url (the PostgreSQL state database)', () => {
  it('is unset by default: state lives in SQLite in the data folder', async () => {
    expect((await load()).db).toBeUndefined();
  });

  it('comes from the file, then WMARK_DB_URL, then --db', async () => {
    fs.writeFileSync(path.join(root, '.wmarkrc.json'), JSON.stringify({ db: { url: 'postgres://file@db/wmark' } }));
    expect((await load()).db).toEqual({ url: 'postgres://file@db/wmark' });
    const fromEnv = await load({ env: { WMARK_DB_URL: 'postgres://env:pw@db/wmark' } });
    expect(fromEnv.db).toEqual({ url: 'postgres://env:pw@db/wmark' });
    expect(fromEnv.sources['db.url']).toBe('env WMARK_DB_URL');
    const fromFlag = await load({ env: { WMARK_DB_URL: 'postgres://env:pw@db/wmark' }, flags: { db: 'postgresql://flag:pw@db:6432/w' } });
    expect(fromFlag.db).toEqual({ url: 'postgresql://flag:pw@db:6432/w' });
    expect(fromFlag.sources['db.url']).toBe('flag --db');
  });

  it('names an unknown key in the db section', async () => {
    fs.writeFileSync(path.join(root, '.wmarkrc.json'), JSON.stringify({ db: { host: 'x' } }));
    await expect(load()).rejects.toMatchObject({
      message: expect.stringContaining('db.host: unknown key'),
      hint: expect.stringContaining('Known keys in "db": url.'),
    });
  });
});

describe('redactUrl', () => {
  it('shows a URL without its password, in the authority or as a parameter', () => {
    expect(redactUrl('postgres://wmark:s3cr%40t@db.internal:5432/wmark')).toBe('postgres://wmark:***@db.internal:5432/wmark');
    expect(redactUrl('postgres://db/wmark?user=w&password=s3cret&sslmode=require')).toBe('postgres://db/wmark?user=w&password=***&sslmode=require');
    expect(redactUrl('postgres://wmark@db/wmark')).toBe('postgres://wmark@db/wmark');
    expect(redactUrl('postgres://wmark:p@ss@db:5432/wmark')).toBe('postgres://wmark:***@db:5432/wmark');
    expect(redactUrl('postgres://db:5432/wmark?application_name=a@b')).toBe('postgres://db:5432/wmark?application_name=a@b');
    expect(redactQueueUrl('redis://:pw@redis:6379/1')).toBe('redis://:***@redis:6379/1');
  });

  it('scrubs the password, decoded, and the whole URL out of a driver message', () => {
    const url = 'postgres://wmark:s3cr%40t@db/wmark';
    expect(scrubUrl(`could not connect to ${url} with s3cr@t`, url)).toBe('could not connect to postgres://wmark:***@db/wmark with ***');
  });
});
