// The media-store seam: where sources, working segments, rendered segments, playlists and mp4s live. A folder on this
// machine (or a shared mount) or an S3-compatible bucket, so workers on other machines read and write the same media.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Dependency } from '../core/dependency.js';
import { isWmarkError, WmarkError } from '../core/errors.js';
import { forEachBounded } from '../core/for-each-bounded.js';

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
   * What the store needs that may stop answering, watched: a bucket's server (while it does not answer, calls fail at
   * once with MEDIA_STORE_UNAVAILABLE; /readyz shows it and a farm worker takes no task). None for a folder on this
   * machine, which is always there (a full or missing disk fails the call itself).
   */
  readonly dependencies: readonly Dependency[];
  /** Stores a local file under `key`, replacing what was there; `move` lets the store take the file itself. */
  putFile(key: string, file: string, options?: { move?: boolean }): Promise<void>;
  /** Stores `bytes` under `key`, replacing what was there (playlists, sidecars, small records). */
  put(key: string, bytes: Buffer | string): Promise<void>;
  /** The whole object's bytes. Missing: MEDIA_NOT_FOUND. */
  read(key: string): Promise<Buffer>;
  /** Where the object under `key` is, for messages: its file on this machine, or its place in the bucket. */
  describe(key: string): string;
  /**
   * Hands `use` a file on this machine for each key (in the keys' order; keys of one folder are files of one folder),
   * and once it settles removes whatever was made for it. A store that keeps its objects as files here hands the files
   * themselves; another copies the objects into a folder of its own under `scratch` first. Missing: MEDIA_NOT_FOUND;
   * `signal` stops the copying (CANCELLED).
   */
  withLocalFiles<T>(keys: readonly string[], options: { scratch: string; signal?: AbortSignal }, use: (files: string[]) => Promise<T>): Promise<T>;
  /**
   * The bytes `range` of the object `info` (its `stat`) describes, as a server sends them: a store that keeps its
   * objects as files here names the file's range (sent from the file itself, the fastest way to serve a segment);
   * another reads them (see bodyFromReads). Undefined when the object changed since `info`: stat it again.
   */
  bodyToSend(key: string, info: MediaStat, range: ByteRange): Promise<BodyToSend | undefined>;
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
   * files), for when no write there can still be under way; returns how many. A store whose writes leave nothing
   * behind (a bucket: an upload appears whole or not at all) has nothing to drop.
   */
  dropUnfinished(prefix: string): Promise<number>;
  /** Deletes every object whose key starts with `prefix` (which must not be empty); returns how many went. */
  deletePrefix(prefix: string): Promise<number>;
  /** Releases connections; the store is not used after. */
  close(): void;
}

/** An object's bytes as a server sends them: a range of a file on this machine, bytes read, or an opened stream. */
export type BodyToSend = { file: string; start: number; end: number } | Buffer | { stream: Readable; length: number };

/**
 * Objects up to this size (every segment, and the mp4 of a short title) are read whole before a server sends the
 * answer's head. A store that stops answering part-way (a bucket going away mid-read) then makes a 503 with
 * Retry-After, which players and SDKs retry, instead of a transfer cut after a 200; and the store's own checks (the
 * length, the MD5 ETag, a read again after a torn body) apply. Larger objects stream, opened before the head is sent.
 */
export const WHOLE_BODY_BYTES = 16 * 1024 * 1024;

/** `bodyToSend` for a store whose objects are not files here: read through its own calls (WHOLE_BODY_BYTES). */
export async function bodyFromReads(store: MediaStore, key: string, info: MediaStat, range: ByteRange): Promise<BodyToSend | undefined> {
  if (info.size > WHOLE_BODY_BYTES) return { stream: await store.openRange(key, range), length: range.end - range.start + 1 };
  const bytes = await store.read(key);
  // Rewritten between the stat and the read: its head would not match these bytes.
  return bytes.length === info.size ? bytes.subarray(range.start, range.end + 1) : undefined;
}

/** Objects copied to this machine at once by withCopies: a few hide the round trips. */
const COPIES_AT_ONCE = 4;

/**
 * `withLocalFiles` for a store whose objects are not files here: copies them into a folder of their own under
 * `scratch` (keys keep their folders), hands them to `use`, and removes the folder once it settles.
 */
export async function withCopies<T>(
  store: MediaStore,
  keys: readonly string[],
  options: { scratch: string; signal?: AbortSignal },
  use: (files: string[]) => Promise<T>,
): Promise<T> {
  const folder = await mkdtemp(path.join(options.scratch, 'copies-'));
  try {
    const files = keys.map((key) => path.join(folder, ...checkKey(key).split('/')));
    await forEachBounded([...keys.keys()], COPIES_AT_ONCE, async (i) => {
      if (options.signal?.aborted) throw new WmarkError('CANCELLED', `copying from ${store.location} cancelled`);
      await mkdir(path.dirname(files[i]!), { recursive: true });
      await store.getFile(keys[i]!, files[i]!);
    });
    return await use(files);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
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
