// A media store in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2), through @aws-sdk/client-s3 only. An S3 PUT
// is visible whole or not at all; files above one part go up as a multipart upload, which appears only when completed.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { type Dependency, unavailableError } from '../core/dependency.js';
import { WmarkError } from '../core/errors.js';
import { type ByteRange, bodyFromReads, checkKey, checkPrefix, checkRange, type MediaStat, type MediaStore, withCopies } from './media-store.js';
import { firstLine, ProbeMonitor } from './reachability.js';

export interface S3StoreOptions {
  bucket: string;
  /** Folder inside the bucket that every key goes under ('' for the bucket's root). */
  prefix?: string;
  /** An S3-compatible server's URL (MinIO, Ceph, R2, a test server); else the SDK's own (AWS_ENDPOINT_URL_S3, AWS). */
  endpoint?: string;
  /** Else the SDK's chain (AWS_REGION, the profile); us-east-1 when that finds none and an endpoint is given. */
  region?: string;
  /** Else the SDK's chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the profile (AWS_PROFILE), SSO, instance roles. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** bucket.host/key (virtual hosted) or host/bucket/key. Most self-hosted servers need path style: the default with an endpoint. */
  forcePathStyle?: boolean;
  /** Files larger than this go up in parts of this size (S3's minimum part is 5 MiB). */
  partSize?: number;
  /** The clock of when the bucket stopped answering and for how long (the engine's or the worker's; else the wall clock). */
  now?: () => number;
}

const DEFAULT_PART_SIZE = 64 * 1024 * 1024;
const MIN_PART_SIZE = 5 * 1024 * 1024;
/**
 * A call with no answer within this long (the SDK's own retries included) finds the store down: a request that needs
 * it is answered 503 well within 5 s instead of waiting on a dead socket. An upload gets a second more per MiB.
 */
const CALL_DEADLINE_MS = 3_000;
const PROBE_DEADLINE_MS = 2_000;
/** Errors of a call that got no answer at all (as opposed to an answer that says no). */
const NO_ANSWER = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const READ_ATTEMPTS = 4;
const READ_RETRY_MS = 50;

export class S3MediaStore implements MediaStore {
  readonly location: string;
  /** Whether the bucket answers: judged by every call, and by a cheap listing now and then while someone watches. */
  readonly health: ProbeMonitor;
  /** The bucket's server, watched. */
  readonly dependencies: readonly Dependency[];
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private readonly now: () => number;

  constructor(options: S3StoreOptions) {
    this.now = options.now ?? Date.now;
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${options.prefix.replace(/\/+$/, '')}/` : '';
    this.location = `s3://${this.bucket}/${this.prefix}`;
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? DEFAULT_PART_SIZE);
    const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? (options.endpoint ? 'us-east-1' : undefined);
    const config: S3ClientConfig = {
      ...(region ? { region } : {}),
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      forcePathStyle: options.forcePathStyle ?? Boolean(options.endpoint),
      // Checksums only where S3 requires them: many S3-compatible servers reject the trailing checksums that recent
      // SDKs add to every upload by default. Integrity is TLS's and the server's MD5/ETag.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    // wmark pins an SDK release that runs on Node 20 (package.json); the SDK's warning that later releases need Node 22
    // would print on every start and ask the user for an upgrade that is wmark's to make. Set it to false to see it.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client(config);
    this.health = new ProbeMonitor({ name: 'media', location: this.location, probe: () => this.probe(), now: this.now });
    this.dependencies = [this.health];
  }

  /** One listing of at most one key: any answer (even a refusal) shows the store is there. */
  private async probe(): Promise<void> {
    const Prefix = `${this.prefix}wmark-probe/`;
    await withDeadline(PROBE_DEADLINE_MS, (abortSignal) =>
      this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, MaxKeys: 1 }), { abortSignal }),
    ).catch((error: unknown) => {
      if (noAnswer(error)) throw error;
    });
  }

  private objectKey(key: string): string {
    return `${this.prefix}${checkKey(key)}`;
  }

  describe(key: string): string {
    return `${this.location}${checkKey(key)}`;
  }

  /** Objects are copied here to be used as files, and read through the store's calls to be served. */
  readonly withLocalFiles: MediaStore['withLocalFiles'] = (keys, options, use) => withCopies(this, keys, options, use);
  readonly bodyToSend: MediaStore['bodyToSend'] = (key, info, range) => bodyFromReads(this, key, info, range);

  /** An upload appears whole or not at all, so nothing unfinished is ever left in the bucket. */
  async dropUnfinished(prefix: string): Promise<number> {
    checkPrefix(prefix, { allowEmpty: false });
    return 0;
  }

  async putFile(key: string, file: string, options: { move?: boolean } = {}): Promise<void> {
    await this.upload(key, file);
    if (options.move) await rm(file, { force: true });
  }

  private async upload(key: string, file: string): Promise<void> {
    const Key = this.objectKey(key);
    const info = await stat(file).catch(() => {
      throw new WmarkError('INPUT_NOT_READABLE', `cannot store ${key}: ${file} does not exist`);
    });
    // Bodies are read into memory (a part at most): a stream cannot be sent again when the SDK retries a request.
    if (info.size <= this.partSize) {
      const Body = await readRange(file, 0, info.size);
      await this.call(
        'put',
        key,
        (c, abortSignal) => c.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body, ContentLength: info.size }), { abortSignal }),
        info.size,
      );
      return;
    }
    const { UploadId } = await this.call('put', key, (c, abortSignal) =>
      c.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }), { abortSignal }),
    );
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let start = 0, PartNumber = 1; start < info.size; start += this.partSize, PartNumber++) {
        const Body = await readRange(file, start, Math.min(info.size - start, this.partSize));
        const { ETag } = await this.call(
          'put',
          key,
          (c, abortSignal) =>
            c.send(new UploadPartCommand({ Bucket: this.bucket, Key, UploadId, PartNumber, Body, ContentLength: Body.length }), { abortSignal }),
          Body.length,
        );
        parts.push({ ETag: ETag!, PartNumber });
      }
      await this.call('put', key, (c, abortSignal) =>
        c.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId, MultipartUpload: { Parts: parts } }), { abortSignal }),
      );
    } catch (error) {
      // Parts of an abandoned upload cost storage until aborted; nothing of it was ever visible.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })).catch(() => undefined);
      throw error;
    }
  }

  async put(key: string, bytes: Buffer | string): Promise<void> {
    const Body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    await this.call(
      'put',
      key,
      (c, abortSignal) => c.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body, ContentLength: Body.length }), { abortSignal }),
      Body.length,
    );
  }

  /**
   * The whole object. A body cut off mid-way, or a 5xx "try again", is read again (three times at most): an object
   * being overwritten, a growing playlist say, can fail a read on stores whose overwrites are not atomic, and the next
   * read gets the new one. Both are answers, so neither marks the store down; a store that gives no answer fails in
   * `openRange`, and is not asked again here.
   */
  async read(key: string): Promise<Buffer> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { body, length, etag } = await this.getObject(key);
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk as Buffer);
        const bytes = Buffer.concat(chunks);
        // A whole object's ETag from a single PUT is its MD5: a body that does not match it (or its announced length)
        // was torn by a write racing the read (stores that write objects in place), and is read again.
        // An empty ETag (`""`) is no store's answer for a whole object: it is what a store that rewrites its own
        // records in place (s3rver) gives mid-write, with a length that may be the truncated object's.
        const md5 = etag && /^"?([0-9a-f]{32})"?$/i.exec(etag)?.[1]?.toLowerCase();
        const torn = etag !== undefined && etag.replaceAll('"', '') === '';
        if (torn || (length !== undefined && bytes.length !== length) || (md5 && createHash('md5').update(bytes).digest('hex') !== md5)) {
          throw new WmarkError('MEDIA_STORE_FAILED', `get ${key} from ${this.location}: the body does not match the object's length or checksum`);
        }
        return bytes;
      } catch (error) {
        // Read again after a cut body or the store's own "try again" (a 5xx answer, which s3rver gives a read racing a
        // write); a missing object, or a store that gives no answer at all, is the answer.
        const wrapped = isWmark(error) ? error : storeError(this, 'get', key, error);
        if (attempt === READ_ATTEMPTS || wrapped.code !== 'MEDIA_STORE_FAILED') throw wrapped;
        await delay(READ_RETRY_MS * attempt);
      }
    }
  }

  async copy(from: string, to: string): Promise<void> {
    // The server copies (up to 5 GB, far above a segment); the source names bucket/key, URL-encoded.
    const CopySource = encodeURI(`${this.bucket}/${this.objectKey(from)}`);
    await this.call('copy', from, (c, abortSignal) =>
      c.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.objectKey(to), CopySource }), { abortSignal }),
    );
  }

  async getFile(key: string, file: string): Promise<void> {
    const body = await this.openRange(key);
    const temp = `${file}.${randomBytes(6).toString('hex')}.part`;
    try {
      await pipeline(body, createWriteStream(temp));
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      if (isWmark(error) || (error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
      throw this.failure('get', key, error);
    }
  }

  async openRange(key: string, range?: ByteRange): Promise<Readable> {
    checkRange(key, range);
    return (await this.getObject(key, range)).body;
  }

  /** One GET: the body as a stream, with the length and ETag the store announced for it. */
  private async getObject(key: string, range?: ByteRange): Promise<{ body: Readable; length?: number; etag?: string }> {
    const Key = this.objectKey(key);
    const answer = await this.call('get', key, (c, abortSignal) =>
      c.send(new GetObjectCommand({ Bucket: this.bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }), { abortSignal }),
    );
    const body = answer.Body;
    if (!(body instanceof Readable)) throw new WmarkError('MEDIA_STORE_FAILED', `get ${key} from ${this.location}: the answer had no body stream`);
    return { body, length: answer.ContentLength, etag: answer.ETag };
  }

  async stat(key: string): Promise<MediaStat | undefined> {
    try {
      const head = await this.call('stat', key, (c, abortSignal) =>
        c.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }), { abortSignal }),
      );
      return { size: head.ContentLength ?? 0, modified: head.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isWmark(error) && error.code === 'MEDIA_NOT_FOUND') return undefined;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async list(prefix: string): Promise<string[]> {
    checkPrefix(prefix, { allowEmpty: true });
    const keys: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await this.call('list', prefix, (c, abortSignal) =>
        c.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}${prefix}`, ContinuationToken }), { abortSignal }),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key.slice(this.prefix.length));
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return keys.sort();
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkPrefix(prefix, { allowEmpty: false });
    const keys = await this.list(prefix);
    // DeleteObjects takes at most 1,000 keys a request.
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const answer = await this.call('delete', prefix, (c, abortSignal) =>
        c.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((k) => ({ Key: `${this.prefix}${k}` })), Quiet: true } }), {
          abortSignal,
        }),
      );
      const failed = answer.Errors ?? [];
      if (failed.length)
        throw new WmarkError(
          'MEDIA_STORE_FAILED',
          `delete ${prefix} in ${this.location}: ${failed.length} object(s) not deleted (${failed[0]?.Code}: ${failed[0]?.Message})`,
        );
    }
    return keys.length;
  }

  close(): void {
    this.health.close();
    this.client.destroy();
  }

  /**
   * Sends one request, unless the store is known to be down (MEDIA_STORE_UNAVAILABLE at once). No answer within the
   * deadline marks it down; S3's answers become MEDIA_NOT_FOUND or MEDIA_STORE_FAILED naming the operation and key.
   */
  private async call<T>(operation: string, key: string, request: (client: S3Client, signal: AbortSignal) => Promise<T>, bytes = 0): Promise<T> {
    if (!this.health.isUp) throw unavailableError(this.health.status(), this.now());
    try {
      const answer = await withDeadline(CALL_DEADLINE_MS + Math.ceil(bytes / (1024 * 1024)) * 1000, (signal) => request(this.client, signal));
      this.health.answered();
      return answer;
    } catch (error) {
      throw this.failure(operation, key, error);
    }
  }

  /** A call's error as the catalogue's: no answer marks the store down (503); an answer means it is there. */
  private failure(operation: string, key: string, error: unknown): WmarkError {
    if (noAnswer(error)) {
      this.health.failed(`${operation} ${key}: ${firstLine(error)}`);
      return unavailableError(this.health.status(), this.now());
    }
    if (!isWmark(error)) this.health.answered();
    return storeError(this, operation, key, error);
  }
}

/** Runs `work` with a signal that aborts it after `ms`; the timer ends with the call, so a body still streaming is never cut. */
async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${ms} ms`)), ms);
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** True for a call that got no answer: refused, reset, cut off, or past its deadline. */
function noAnswer(error: unknown): boolean {
  if (isWmark(error) || typeof error !== 'object' || error === null) return false;
  const e = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  if (e.$metadata?.httpStatusCode !== undefined) return false;
  return e.name === 'AbortError' || e.name === 'TimeoutError' || NO_ANSWER.has(e.code ?? '') || /socket hang up|aborted/i.test(e.message ?? '');
}

const isWmark = (error: unknown): error is WmarkError => error instanceof WmarkError;

/** `length` bytes of `file` from `start`. */
async function readRange(file: string, start: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await handle.read(buffer, done, length - done, start + done);
      if (bytesRead === 0)
        throw new WmarkError('INPUT_NOT_READABLE', `${file} ended at ${start + done} bytes while being stored (was it still being written?)`);
      done += bytesRead;
    }
    return buffer;
  } finally {
    await handle.close();
  }
}

function storeError(store: S3MediaStore, operation: string, key: string, error: unknown): WmarkError {
  if (isWmark(error)) return error;
  const e = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (e.name === 'NoSuchKey' || e.name === 'NotFound' || (status === 404 && e.name !== 'NoSuchBucket')) {
    return new WmarkError('MEDIA_NOT_FOUND', `no ${key} in the media store ${store.location}`, { cause: error });
  }
  if (e.name === 'InvalidRange' || status === 416)
    return new WmarkError('RANGE_NOT_SATISFIABLE', `${operation} ${key}: byte range outside the object`, { cause: error });
  const why = e.name === 'NoSuchBucket' ? 'the bucket does not exist' : (e.code ?? e.name ?? 'error') + (e.message ? `: ${e.message}` : '');
  return new WmarkError('MEDIA_STORE_FAILED', `${operation} ${key} in ${store.location} failed (${why})`, {
    cause: error,
    ...(e.name === 'NoSuchBucket' ? { hint: 'Create the bucket first (e.g. `aws s3 mb s3://BUCKET` or `mc mb`), or fix --media.' } : {}),
  });
}
