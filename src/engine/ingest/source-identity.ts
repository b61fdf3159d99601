// What makes a local source file the same source: its path and the hash of its bytes. Edited in place, the file is
// another source (the key refuses it, as it refuses another path), so the working media and the watermarks made from
// the old bytes never stand for the new ones. A URL's identity stays the URL.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { WmarkError } from '../../core/errors.js';
import type { VideoRecord } from '../state/state-store.js';

/** SHA-256 (hex) of a file's bytes, in one streamed pass (a source may be far larger than memory). */
export async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * How far a file's modification time may trail the clock: filesystems stamp from a coarse clock (milliseconds late on
 * Linux, up to 2 s on FAT), so a write just after a moment can carry a time just before it.
 */
const MTIME_SLACK_MS = 2000;

/** Whether the file may have been written after `ms` (Unix ms), going by its modification time. */
async function writtenSince(file: string, ms: number): Promise<boolean> {
  return (await stat(file)).mtimeMs > ms - MTIME_SLACK_MS;
}

/**
 * Whether the local file `file` is still the source `video` was registered from. With a recorded hash the bytes
 * decide. A video recorded before sources were hashed has none: its file counts as the one ingested when it has not
 * been written since the video was recorded, and the hash it then has is returned for the record (`adopt`); written
 * since, it counts as changed, since nothing says what the ingest read.
 */
export async function compareSource(video: VideoRecord, file: string): Promise<{ same: boolean; adopt?: string }> {
  if (video.sourceSha256) return { same: (await hashFile(file)) === video.sourceSha256 };
  if (await writtenSince(file, video.createdOn)) return { same: false };
  return { same: true, adopt: await hashFile(file) };
}

/**
 * Refuses to ingest `video` from a file that no longer holds the bytes it was registered with (edited while its ingest
 * waited, or before a resumed one). Registration hashed it moments ago, so the bytes are read again only when the file
 * was written since the video was recorded.
 */
export async function assertSourceUnchanged(video: VideoRecord, file: string): Promise<void> {
  if (!video.sourceSha256 || !(await writtenSince(file, video.createdOn))) return;
  if ((await hashFile(file)) !== video.sourceSha256) {
    throw new WmarkError('SOURCE_CHANGED', `${video.sourceUrl} has changed since it was registered as video ${video.id}, so it was not ingested`, {
      hint: `Ingest it again (\`wmark ingest ${video.sourceUrl} --key ${video.key}\`): the edited file is registered as a new source.`,
    });
  }
}
