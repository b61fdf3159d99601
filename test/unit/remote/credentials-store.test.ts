// The token file: 0600, written atomically, one entry per service, removed when empty.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  credentialsPath,
  looseMode,
  normalizeBaseUrl,
  readCredentials,
  removeServices,
  saveService,
  writeCredentials,
} from '../../../src/remote/credentials-store.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-creds-'));
  file = path.join(dir, 'nested', 'config', 'credentials.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry = (baseUrl: string, extra: object = {}) => ({ baseUrl, clientId: 'c1', token: 'tok', expiresAt: 1, obtainedAt: 0, ...extra });

describe('credentials store', () => {
  it('lives in WMARK_CONFIG_DIR', () => {
    expect(credentialsPath({ WMARK_CONFIG_DIR: '/x/y' })).toBe('/x/y/credentials.json');
  });

  it('a missing file reads as empty', async () => {
    expect(await readCredentials(file)).toEqual({ version: 1, services: {} });
  });

  it('writes 0600 in a 0700 folder, even under a permissive umask, and leaves no temp file', async () => {
    const old = process.umask(0o000);
    try {
      await saveService(file, entry('http://a'));
    } finally {
      process.umask(old);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readdirSync(path.dirname(file))).toEqual(['credentials.json']);
  });

  it('replaces a file that had loose permissions with a 0600 one', async () => {
    await saveService(file, entry('http://a'));
    chmodSync(file, 0o644);
    expect(await looseMode(file)).toBe(0o644);
    await saveService(file, entry('http://b'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await looseMode(file)).toBeUndefined();
  });

  it('keeps one entry per service and remembers the current one', async () => {
    await saveService(file, entry('http://a'));
    await saveService(file, entry('http://b'));
    await saveService(file, entry('http://a', { token: 'tok-2' }), { makeCurrent: false });
    const data = await readCredentials(file);
    expect(Object.keys(data.services).sort()).toEqual(['http://a', 'http://b']);
    expect(data.current).toBe('http://b');
    expect(data.services['http://a']!.token).toBe('tok-2');
  });

  it('removes one service, then the file when nothing is left', async () => {
    await saveService(file, entry('http://a'));
    await saveService(file, entry('http://b'));
    expect(await removeServices(file, 'http://b')).toEqual(['http://b']);
    const data = await readCredentials(file);
    expect(data.current).toBeUndefined();
    expect(Object.keys(data.services)).toEqual(['http://a']);
    expect(await removeServices(file, 'http://nope')).toEqual([]);
    expect(await removeServices(file, 'all')).toEqual(['http://a']);
    expect(() => statSync(file)).toThrow();
  });

  it('a corrupt file is a config error (exit 3) with a way out', async () => {
    await writeCredentials(file, { version: 1, services: {} });
    writeFileSync(file, '{not json');
    await expect(readCredentials(file)).rejects.toMatchObject({ exitCode: 3, code: 'CREDENTIALS_INVALID', hint: expect.stringContaining('logout --all') });
  });

  it('never stores what it was not given (no API key unless asked)', async () => {
    await saveService(file, entry('http://a'));
    expect(readFileSync(file, 'utf8')).not.toMatch(/apiKey/);
  });
});

describe('normalizeBaseUrl', () => {
  it('drops the trailing slash, query and fragment; keeps a path prefix', () => {
    expect(normalizeBaseUrl('http://Host:8080/')).toBe('http://host:8080');
    expect(normalizeBaseUrl('https://api.example.com/watermark//?x=1#y')).toBe('https://api.example.com/watermark');
  });
});
