// A media object in serve's shared store (S3, a shared folder) as a response, with what fileResponse gives a local
// file: type, length, validators, byte ranges (206/416), HEAD. The bytes come from the store through this process.
import type { ServerResponse } from 'node:http';
import { WmarkError } from '../core/errors.js';
import type { MediaStore } from '../media/media-store.js';
import { bodyResponseHead, type FileResponseOptions, fileResponse } from './file-response.js';
import type { ApiRequest, ApiResponse, StoreBody } from './http-types.js';

/**
 * Objects up to this size (every segment, and the mp4 of a short title) are read whole before the answer's head is
 * sent. A store that stops answering part-way (a bucket going away mid-read) then makes a 503 with Retry-After, which
 * players and SDKs retry, instead of a transfer cut after a 200; and the store's own checks (the length, the MD5
 * ETag, a read again after a torn body) apply. Larger objects stream, opened before the head is sent.
 */
export const WHOLE_BODY_BYTES = 16 * 1024 * 1024;

/**
 * A stored object as a response. An object the store keeps as a file on this machine is sent from the file itself
 * (fileResponse: reused read buffers, the fastest way to serve segments); others come from the store, and a store
 * that does not answer fails the request before anything of it is sent.
 */
export async function storeResponse(req: ApiRequest, store: MediaStore, key: string, options: FileResponseOptions): Promise<ApiResponse> {
  const local = store.localFile?.(key);
  if (local !== undefined) return fileResponse(req, local, options);
  for (let attempt = 1; ; attempt++) {
    const info = await store.stat(key);
    if (!info) throw new WmarkError('NOT_FOUND', 'no such file');
    const { status, headers, range } = bodyResponseHead(req, info, options);
    if (!range || req.method === 'HEAD') return { status, headers };
    if (info.size > WHOLE_BODY_BYTES) {
      const stream = await store.openRange(key, range);
      return { status, headers, body: { stream, length: range.end - range.start + 1 } };
    }
    const bytes = await store.read(key);
    if (bytes.length === info.size) return { status, headers, body: bytes.subarray(range.start, range.end + 1) };
    // Rewritten between the stat and the read (its head would not match its bytes): the new one is answered.
    if (attempt === 2) throw new WmarkError('MEDIA_STORE_FAILED', `${key} changed twice while it was being read`);
  }
}

/**
 * Streams the opened body into `res` (head already written) and ends it. A store that fails mid-way, or an object
 * replaced by a shorter one, destroys the response: the client sees a cut transfer, never wrong bytes. Never rejects.
 */
export async function sendStored(res: ServerResponse, body: StoreBody): Promise<void> {
  let sent = 0;
  try {
    // Leaving the loop (a client gone, too many bytes) destroys the store's stream, which releases its connection.
    for await (const chunk of body.stream as AsyncIterable<Buffer>) {
      sent += chunk.length;
      if (sent > body.length || res.destroyed) break;
      if (!res.write(chunk) && !(await drained(res))) break;
    }
    if (sent !== body.length) return void res.destroy();
    res.end();
  } catch {
    res.destroy();
  }
}

/** Resolves true once the socket wants more, false when the response closes first. */
function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/** The body's bytes, for in-process requests (tests call the app without a socket). */
export async function readStored(body: StoreBody): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body.stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (bytes.length !== body.length) throw new WmarkError('MEDIA_STORE_FAILED', `the store sent ${bytes.length} bytes of ${body.length}`);
  return bytes;
}
