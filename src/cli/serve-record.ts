// Where `wmark serve` listens, recorded in the data folder (serve.json) while it runs, so that local commands on the
// same data sign their links for the running service rather than a default port nobody listens on. And the check
// that tells the user when nothing answers at the address a printed link names.
import { readFileSync, rmSync } from 'node:fs';
import writeFileAtomic from 'write-file-atomic';
import { serveRecordFile } from '../engine/app/data-folder-files.js';
import { isAlive } from './process-alive.js';

export interface ServeRecord {
  /** Where the server listens, e.g. http://127.0.0.1:54321. */
  url: string;
  /** The base of the links it hands out: its public URL when it has one, else `url`. */
  baseUrl: string;
  pid: number;
  /** The command that wrote it (`wmark serve`, `wmark demo`): with the pid, who may remove it. */
  writer: string;
  /** Unix ms, as every time wmark writes for programs. */
  startedOn: number;
}

export function serveRecordPath(dataDir: string): string {
  return serveRecordFile(dataDir);
}

export async function writeServeRecord(dataDir: string, record: ServeRecord): Promise<void> {
  await writeFileAtomic(serveRecordPath(dataDir), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Records that this process serves the data folder (`wmark serve`, and `wmark demo` while it serves) at `server.url`
 * with links on `server.linkBase`, so local commands sign their links as it does; the returned function removes the
 * record on the way out. A demo leaves the record of another live serve alone: that serve is the one to link to, and
 * outlives the demo. A serve takes the record over: it is what the user started last to serve this folder.
 */
export async function recordServe(dataDir: string, server: { url: string; linkBase: string }, writer: 'wmark serve' | 'wmark demo'): Promise<() => void> {
  const current = readServeRecord(dataDir);
  if (writer === 'wmark demo' && current && current.pid !== process.pid) return () => undefined;
  await writeServeRecord(dataDir, { url: server.url, baseUrl: server.linkBase, pid: process.pid, writer, startedOn: Date.now() });
  return () => removeServeRecord(dataDir);
}

/** Removes the record if it is this process's (another serve on the same data may have written it since). */
function removeServeRecord(dataDir: string, pid = process.pid): void {
  if (readServeRecord(dataDir, { checkAlive: false })?.pid === pid) rmSync(serveRecordPath(dataDir), { force: true });
}

/** The running serve's record; none when absent, unreadable, or left by a process that has gone (kill -9). */
export function readServeRecord(dataDir: string, options: { checkAlive?: boolean } = {}): ServeRecord | undefined {
  let parsed: Partial<ServeRecord>;
  try {
    parsed = JSON.parse(readFileSync(serveRecordPath(dataDir), 'utf8')) as Partial<ServeRecord>;
  } catch {
    return undefined;
  }
  if (typeof parsed.url !== 'string' || typeof parsed.baseUrl !== 'string' || typeof parsed.pid !== 'number') return undefined;
  if ((options.checkAlive ?? true) && !isAlive(parsed.pid)) return undefined;
  return {
    url: parsed.url,
    baseUrl: parsed.baseUrl,
    pid: parsed.pid,
    writer: typeof parsed.writer === 'string' ? parsed.writer : 'wmark serve',
    startedOn: typeof parsed.startedOn === 'number' ? parsed.startedOn : 0,
  };
}

/** True when something accepts HTTP at the link's origin within `timeoutMs` (any status: a service answered). */
export async function answersAt(link: string, timeoutMs = 1500): Promise<boolean> {
  let origin: string;
  try {
    origin = new URL(link).origin;
  } catch {
    return false;
  }
  try {
    const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
