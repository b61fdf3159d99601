// sendFile over real HTTP on loopback: exact bytes and ranges while many downloads share the reused read buffers,
// and a cut transfer (never wrong bytes) when the file is shorter than promised, missing, or the client hangs up.
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, sendFile } from '../../src/server/send-file.js';

let dir: string;
let server: Server;
let base: string;
/** Per request: the file, the range and the Content-Length to promise (defaults to the range's length). */
const routes = new Map<string, { file: string; start: number; end: number; length?: number }>();
const settled: string[] = [];

/** Bytes whose value depends on their position and a seed, so a byte from another file or offset shows. */
function pattern(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 97 + (i >> 12)) & 0xff;
  return b;
}

function fetchBytes(p: string): Promise<{ status: number; body: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    get(base + p, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), complete: res.complete }));
      res.on('error', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), complete: false }));
      res.on('aborted', () => undefined);
    }).on('error', reject);
  });
}

const fdsOn = (file: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;

let a: Buffer;
let b: Buffer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-send-file-'));
  a = pattern(3 * CHUNK_BYTES + 12_345, 1);
  b = pattern(CHUNK_BYTES - 1, 2);
  writeFileSync(path.join(dir, 'a'), a);
  writeFileSync(path.join(dir, 'b'), b);
  server = createServer((req, res) => {
    const r = routes.get(req.url!)!;
    res.writeHead(200, { 'Content-Length': String(r.length ?? r.end - r.start + 1) });
    void sendFile(res, r.file, r.start, r.end).then(() => settled.push(req.url!));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('sendFile', () => {
  it('40 concurrent downloads of two files and odd ranges each get exactly their bytes', async () => {
    const cases: { p: string; want: Buffer }[] = [];
    for (let i = 0; i < 40; i++) {
      const which = i % 2 ? 'b' : 'a';
      const src = which === 'a' ? a : b;
      // Ranges that start mid-chunk and cross chunk edges, and whole files.
      const start = i % 4 < 2 ? 0 : (i * 7_919) % (src.length - 1);
      const end = i % 4 < 2 ? src.length - 1 : Math.min(src.length - 1, start + ((i * 104_729) % (2 * CHUNK_BYTES)));
      const p = `/${which}/${i}`;
      routes.set(p, { file: path.join(dir, which), start, end });
      cases.push({ p, want: src.subarray(start, end + 1) });
    }
    const got = await Promise.all(cases.map((c) => fetchBytes(c.p)));
    got.forEach((g, i) => {
      expect(g.status).toBe(200);
      expect(g.complete).toBe(true);
      expect(g.body.length).toBe(cases[i]!.want.length);
      expect(g.body.equals(cases[i]!.want), `bytes of ${cases[i]!.p}`).toBe(true);
    });
  });

  it('a file shorter than the promised range cuts the transfer (incomplete, never padded) and closes the file', async () => {
    routes.set('/short', { file: path.join(dir, 'b'), start: 0, end: b.length + 999 });
    const got = await fetchBytes('/short');
    expect(got.complete).toBe(false);
    expect(got.body.equals(b.subarray(0, got.body.length))).toBe(true);
    expect(fdsOn(path.join(dir, 'b'))).toBe(0);
  });

  it('a missing file ends the response without a body, and the promise settles', async () => {
    routes.set('/missing', { file: path.join(dir, 'nope'), start: 0, end: 9 });
    const got = await fetchBytes('/missing').catch(() => ({ status: 0, body: Buffer.alloc(0), complete: false }));
    expect(got.complete).toBe(false);
    expect(got.body.length).toBe(0);
    await expect.poll(() => settled.includes('/missing')).toBe(true);
  });

  it('a client that hangs up after the first bytes leaves no file open, and the server goes on serving', async () => {
    routes.set('/cut', { file: path.join(dir, 'a'), start: 0, end: a.length - 1 });
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const req = get(`${base}/cut`, (res) =>
          res.once('data', () => {
            req.destroy();
            resolve();
          }),
        );
        req.on('error', () => resolve());
      });
    }
    await expect.poll(() => fdsOn(path.join(dir, 'a')), { timeout: 5_000 }).toBe(0);
    const whole = await fetchBytes('/cut');
    expect(whole.body.equals(a)).toBe(true);
  });
});
