// Where an ingest's bytes come from: a local file (checked), or an http(s) URL streamed into the data dir's tmp folder.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { WmarkError } from '../core/errors.js';

export async function checkLocalSource(file: string): Promise<string> {
  const absolute = path.resolve(file);
  let info;
  try {
    info = await stat(absolute);
  } catch {
    throw new WmarkError('SOURCE_NOT_FOUND', `source file not found: ${file}`, { hint: 'Check the path, or pass an http(s) URL.' });
  }
  if (!info.isFile()) throw new WmarkError('SOURCE_NOT_A_FILE', `source is not a regular file: ${file}`);
  if (info.size === 0) throw new WmarkError('SOURCE_EMPTY', `source file is empty (0 bytes): ${file}`);
  return absolute;
}

/** Streams an http(s) source into `tmpDir` (on the media filesystem, so it can be renamed) and returns the file. */
export async function downloadSource(tmpDir: string, url: string): Promise<string> {
  let ext = '';
  try {
    ext = path.extname(new URL(url).pathname);
  } catch {
    // fetch below reports the malformed URL.
  }
  const file = path.join(tmpDir, `download-${randomUUID()}${/^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext : ''}`);
  const unreachable = (why: string) => new WmarkError('SOURCE_UNREACHABLE', `could not read ${url}: ${why}`, { hint: 'Check the URL, and that the server is up and reachable from here.' });
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw unreachable(cause?.message ?? cause?.code ?? (error as Error).message);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw unreachable(`the server answered ${response.status} ${response.statusText}`.trim());
  }
  try {
    await mkdir(tmpDir, { recursive: true });
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), createWriteStream(file));
  } catch (error) {
    await rm(file, { force: true });
    throw unreachable(`the download failed (${(error as Error).message})`);
  }
  if ((await stat(file)).size === 0) {
    await rm(file, { force: true });
    throw new WmarkError('SOURCE_EMPTY', `source is empty (0 bytes): ${url}`);
  }
  return file;
}
