// The media-store seam: where sources, working segments, rendered segments, playlists and mp4s live. A folder on this
// machine (or a shared mount) or an S3-compatible bucket, so workers on other machines read and write the same media.
import type { Readable } from 'node:stream';
import type { Dependency } from '../core/dependency.js';
import { isWmarkError, WmarkError } from '../core/errors.js';

/** What a stored object is, for serving it (Content-Length, ETag, Last-Modified). */
export interface MediaStat {
  size: number;
  /** Last modification, in ms since the epoch. */
  modified: number;
}

/** An inclusive byte range, as HTTP's Range header gives it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Objects addressed by keys like `videos/<id>/seg_00000.ts`. Every write is whole: a reader sees the previous object,
 * the new one, or none, never half of one, so a crash mid-upload publishes nothing.
 */
export interface MediaStore {
  /** Where the store is, for messages: `s3://bucket/prefix` or `/abs/folder`. */
  readonly location: string;
  /**
   * Whether a store reached over the network answers now (a bucket). While it does not, calls fail at once with
   * MEDIA_STORE_UNAVAILABLE. A folder on this machine has none.
   */
  readonly health?: Dependency;
  /** Stores a local file under `key`, replacing what was there; `move` lets the store take the file itself. */
  putFile(key: string, file: string, options?: { move?: boolean }): Promise<void>;
  /** Stores `bytes` under `key`, replacing what was there (playlists, sidecars, small records). */
  put(key: string, bytes: Buffer | string): Promise<void>;
  /** The whole object's bytes. Missing: MEDIA_NOT_FOUND. */
  read(key: string): Promise<Buffer>;
  /**
   * The object as a file on this machine, where the store keeps its objects as files (a folder store): a reader can
   * then use the file itself (ffmpeg, a server's file fast path) instead of a copy. Stores elsewhere do not have it.
   */
  localFile?(key: string): string;
  /**
   * Copies an object to another key inside the store, without its bytes passing through this process (a forensic
   * viewer's segment is a prepared variant under the watermark's own name). Missing `from`: MEDIA_NOT_FOUND.
   */
  copy(from: string, to: string): Promise<void>;
  /** Copies the object to a local file (written beside it first, then renamed). Missing: MEDIA_NOT_FOUND. */
  getFile(key: string, file: string): Promise<void>;
  /** The object's bytes (all, or the inclusive `range`) as a stream, for serving. Missing: MEDIA_NOT_FOUND. */
  openRange(key: string, range?: ByteRange): Promise<Readable>;
  /** Size and modification time, or undefined when there is no such object. */
  stat(key: string): Promise<MediaStat | undefined>;
  exists(key: string): Promise<boolean>;
  /** Every key that starts with `prefix`, sorted. `videos/v1/` lists a folder; `videos/v1/seg_` a part of it. */
  list(prefix: string): Promise<string[]>;
  /**
   * Removes what writes cut short by a killed process left in the folder `prefix` names (a folder store's hidden temp
   * files), for when no write there can still be under way. Stores whose writes leave nothing behind do not have it.
   */
  dropUnfinished?(prefix: string): Promise<number>;
  /** Deletes every object whose key starts with `prefix` (which must not be empty); returns how many went. */
  deletePrefix(prefix: string): Promise<number>;
  /** Releases connections; the store is not used after. */
  close(): void;
}

/** True for the error a store gives for an object that is not there. */
export function isMediaNotFound(error: unknown): boolean {
  return isWmarkError(error) && error.code === 'MEDIA_NOT_FOUND';
}

/** One path segment of a key: no empty, `.` or `..` segments, and nothing hidden (temp files start with a dot). */
const KEY_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Throws MEDIA_KEY_INVALID unless `key` is a relative path of plain segments (so it can never leave the store). */
export function checkKey(key: string): string {
  if (key.length === 0 || key.length > 900 || !key.split('/').every((s) => KEY_SEGMENT.test(s) && s !== '..')) {
    throw new WmarkError('MEDIA_KEY_INVALID', `not a media key: ${JSON.stringify(key)}`);
  }
  return key;
}

/**
 * Checks a listing prefix: empty (everything), a key's leading folders ending in `/`, or those folders plus the start
 * of a name (`videos/v1/seg_`).
 */
export function checkPrefix(prefix: string, options: { allowEmpty: boolean }): string {
  if (prefix === '') {
    if (options.allowEmpty) return prefix;
    throw new WmarkError('MEDIA_KEY_INVALID', 'refusing an empty prefix (it names the whole store)');
  }
  const cut = prefix.lastIndexOf('/');
  if (cut >= 0) checkKey(prefix.slice(0, cut));
  const rest = prefix.slice(cut + 1);
  if (rest !== '' && !KEY_SEGMENT.test(rest)) throw new WmarkError('MEDIA_KEY_INVALID', `not a media key prefix: ${JSON.stringify(prefix)}`);
  return prefix;
}

export function checkRange(key: string, range: ByteRange | undefined): void {
  if (range && !(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.end >= range.start)) {
    throw new WmarkError('RANGE_NOT_SATISFIABLE', `bad byte range ${range.start}-${range.end} for ${key}`);
  }
}

export type MediaLocation = { kind: 'folder'; root: string } | { kind: 's3'; bucket: string; prefix: string };

/** S3's bucket naming rules (3-63 characters; lowercase letters, digits, dots and dashes; letter or digit at both ends). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/prefix` or an absolute folder path (a `file://` URL too) to a store location. */
export function parseMediaUrl(url: string): MediaLocation {
  const bad = (why: string) => new WmarkError('BAD_MEDIA_URL', `--media ${JSON.stringify(url)}: ${why}`);
  if (url.startsWith('s3://')) {
    const rest = url.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    if (!BUCKET.test(bucket) || bucket.includes('..')) throw bad(`"${bucket}" is not an S3 bucket name`);
    const prefix = (slash < 0 ? '' : rest.slice(slash + 1)).replace(/\/+$/, '');
    if (prefix !== '') {
      try {
        checkKey(prefix);
      } catch {
        throw bad(`the prefix "${prefix}" must be folder names of letters, digits, dot, dash and underscore`);
      }
    }
    return { kind: 's3', bucket, prefix };
  }
  if (url.startsWith('file://')) {
    let root: string;
    try {
      root = decodeURIComponent(new URL(url).pathname);
    } catch {
      throw bad('not a file URL');
    }
    return { kind: 'folder', root: trimSlashes(root) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw bad('only s3:// URLs and folders are supported');
  if (!url.startsWith('/')) throw bad('give an absolute folder path');
  return { kind: 'folder', root: trimSlashes(url) };
}

function trimSlashes(folder: string): string {
  const trimmed = folder.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}
