// The record of a running serve (serve.json): it names the process and command that wrote it, a demo beside a running
// serve leaves that serve's record alone and removes nothing on its way out, and `wmark status` finds a serve that
// answers at the configured address when the record is missing or stale.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { tempDir } from '../../harness/fixtures.js';
import { readServeRecord, recordServe, serveRecordPath, writeServeRecord } from '../../src/cli/serve-record.js';

/** A pid that named a process once and names none now. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('serve.json', () => {
  it('names its writer; a demo beside a live serve records nothing and removes nothing', async () => {
    const dir = tempDir('serve-record');
    const serve = { url: 'http://127.0.0.1:8080', baseUrl: 'http://127.0.0.1:8080', pid: process.ppid, writer: 'wmark serve', startedOn: 1 };
    await writeServeRecord(dir, serve);
    const forget = await recordServe(dir, { url: 'http://127.0.0.1:9999', linkBase: 'http://127.0.0.1:9999' }, 'wmark demo');
    expect(readServeRecord(dir)).toEqual(serve);
    forget();
    expect(readServeRecord(dir)).toEqual(serve);
  });

  it('a demo on its own records its port under its own name, and removes only that record', async () => {
    const dir = tempDir('serve-record');
    const forget = await recordServe(dir, { url: 'http://127.0.0.1:9999', linkBase: 'http://127.0.0.1:9999' }, 'wmark demo');
    expect(JSON.parse(readFileSync(serveRecordPath(dir), 'utf8'))).toMatchObject({ url: 'http://127.0.0.1:9999', pid: process.pid, writer: 'wmark demo' });
    forget();
    expect(existsSync(serveRecordPath(dir))).toBe(false);
  });

  it('a stale record (its process gone) is no record, and a serve writes its own over it', async () => {
    const dir = tempDir('serve-record');
    await writeServeRecord(dir, { url: 'http://127.0.0.1:1', baseUrl: 'http://127.0.0.1:1', pid: deadPid(), writer: 'wmark serve', startedOn: 1 });
    expect(readServeRecord(dir)).toBeUndefined();
    await recordServe(dir, { url: 'http://127.0.0.1:2', linkBase: 'http://127.0.0.1:2' }, 'wmark serve');
    expect(readServeRecord(dir)).toMatchObject({ url: 'http://127.0.0.1:2', writer: 'wmark serve', pid: process.pid });
  });
});

describe('wmark status with a stale record', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(req.url === '/healthz' ? JSON.stringify({ ok: true }) : JSON.stringify({ ready: true, dependencies: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('finds the serve that answers at the configured address', async () => {
    const dir = tempDir('serve-status');
    await writeServeRecord(dir, { url: 'http://127.0.0.1:1', baseUrl: 'http://127.0.0.1:1', pid: deadPid(), writer: 'wmark serve', startedOn: 1 });
    const config = path.join(dir, 'wmark.json');
    writeFileSync(config, JSON.stringify({ server: { port } }));
    const r = await runCli(['--data-dir', dir, '--config', config, 'status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wmark serve http://127.0.0.1:${port}: ok`);
  });

  it('says where it looked when nothing answers', async () => {
    const dir = tempDir('serve-status');
    const config = path.join(dir, 'wmark.json');
    writeFileSync(config, JSON.stringify({ server: { port: 1 } }));
    const r = await runCli(['--data-dir', dir, '--config', config, 'status']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`no wmark serve runs on ${dir} (nothing answers at http://127.0.0.1:1)`);
  });
});
