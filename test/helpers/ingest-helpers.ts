// Helpers for ingest and store tests: sources the sample generator cannot express (NTSC rate, odd size, audio only),
// a closed loopback port, the state a failed ingest must not leave behind, checks on working segments, and the error
// an ingest is refused with.
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { REPO, TEST_ROOT } from '../../harness/fixtures.js';
import { FFMPEG } from '../../harness/tools.js';
import { WmarkError } from '../../src/core/errors.js';

const run = promisify(execFile);
const FIXTURES = path.join(TEST_ROOT, 'fixtures');

/** An input made by ffmpeg with these arguments (cached by name; written aside and renamed, so parallel runs agree). */
export async function ffmpegFixture(name: string, args: string[]): Promise<string> {
  const output = path.join(FIXTURES, name);
  if (existsSync(output)) return output;
  mkdirSync(FIXTURES, { recursive: true });
  const part = `${output}.${process.pid}.part${path.extname(name)}`;
  try {
    await run(FFMPEG, ['-v', 'error', '-y', ...args, part]);
    renameSync(part, output);
  } finally {
    rmSync(part, { force: true });
  }
  return output;
}

/** 7 s at 30000/1001 fps, 321x181 (odd: yuv444p, which allows it), with an AAC tone. */
export const ntscOddSize = () =>
  ffmpegFixture('ntsc-321x181-7s-29.97fps-audio.mp4', [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=320x180:rate=30000/1001',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:sample_rate=48000',
    '-t',
    '7',
    '-vf',
    'scale=321:181,format=yuv444p',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-c:a',
    'aac',
    '-b:a',
    '64k',
    '-shortest',
  ]);

/** 2 s of AAC audio in an mp4 container: no video stream at all. */
export const audioOnly = () =>
  ffmpegFixture('audio-only-2s.m4a', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '2', '-c:a', 'aac', '-b:a', '64k']);

/** A loopback port nothing listens on: bound by the OS, then released. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
  return port;
}

export function entries(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Rows of a data dir's database, read through a separate read-only connection. */
export function dbRows<T = Record<string, unknown>>(dbFile: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Where a data dir keeps what ingest writes. */
export function dataLayout(dataDir: string) {
  return { db: path.join(dataDir, 'wmark.db'), videos: path.join(dataDir, 'media', 'videos'), tmp: path.join(dataDir, 'tmp') };
}

/** What a failed ingest may leave in a data dir: nothing (no video rows, no media folders, no scratch files). */
export function leftovers(dataDir: string): { rows: number; videos: string[]; tmp: string[] } {
  const layout = dataLayout(dataDir);
  const rows = existsSync(layout.db) ? dbRows<{ n: number }>(layout.db, 'SELECT COUNT(*) AS n FROM videos')[0]!.n : 0;
  return { rows, videos: entries(layout.videos), tmp: entries(layout.tmp) };
}

/**
 * A private build of the current sources, laid out like the installed package (bin/, dist/, templates/, package.json,
 * node_modules/), so spawned CLIs are not disturbed by another vitest run rebuilding the shared dist/ meanwhile.
 * Returns the path of its bin/wmark.js; its modules are under `<dir>/dist`.
 */
export function privateInstall(dir: string): { bin: string; dist: string } {
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  copyFileSync(path.join(REPO, 'bin', 'wmark.js'), path.join(dir, 'bin', 'wmark.js'));
  copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));
  for (const link of ['node_modules', 'templates']) symlinkSync(path.join(REPO, link), path.join(dir, link), 'dir');
  const dist = path.join(dir, 'dist');
  // Type errors elsewhere in the tree must not stop the build: tsc still emits, and what matters is that it did.
  const tsc = spawnSync(
    process.execPath,
    [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', dist],
    {
      cwd: REPO,
      encoding: 'utf8',
    },
  );
  if (!existsSync(path.join(dist, 'cli', 'main.js')) || !existsSync(path.join(dist, 'engine', 'state', 'sqlite-state-store.js'))) {
    throw new Error(`private build failed: ${tsc.stdout}${tsc.stderr}`);
  }
  return { bin: path.join(dir, 'bin', 'wmark.js'), dist };
}

/** The WmarkError `promise` rejects with (failing the test when it resolves or rejects with anything else). */
export async function rejection(promise: Promise<unknown>): Promise<WmarkError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WmarkError);
    return error as WmarkError;
  }
  throw new Error('expected a refusal');
}
