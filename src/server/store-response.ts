// A media object in serve's shared store (S3, a shared folder) as a response, with what fileResponse gives a local
// file: type, length, validators, byte ranges (206/416), HEAD. The bytes stream from the store through this process.
import type { ServerResponse } from 'node:http';
import { WmarkError } from '../core/errors.js';
import type { MediaStore } from '../media/media-store.js';
import { bodyResponseHead, type FileResponseOptions, fileResponse } from './file-response.js';
import type { ApiRequest, ApiResponse, StoreBody } from './http-types.js';

/**
 * A stored object as a response. An object the store keeps as a file on this machine is sent from the file itself
 * (fileResponse: reused read buffers, the fastest way to serve segments); others stream from the store.
 */
export async function storeResponse(req: ApiRequest, store: MediaStore, key: string, options: FileResponseOptions): Promise<ApiResponse> {
  const local = store.localFile?.(key);
  if (local !== undefined) return fileResponse(req, local, options);
  const info = await store.stat(key);
  if (!info) throw new WmarkError('NOT_FOUND', 'no such file');
  const { status, headers, range } = bodyResponseHead(req, info, options);
  return { status, headers, ...(range ? { body: { store, key, ...range } } : {}) };
}

/**
 * Streams the object's range into `res` (head already written) and ends it. A store that fails mid-way, or an object
 * replaced by a shorter one, destroys the response: the client sees a cut transfer, never wrong bytes. Never rejects.
 */
export async function sendStored(res: ServerResponse, body: StoreBody): Promise<void> {
  const expected = body.end - body.start + 1;
  try {
    const stream = await body.store.openRange(body.key, { start: body.start, end: body.end });
    let sent = 0;
    // Leaving the loop (a client gone, too many bytes) destroys the store's stream, which releases its connection.
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      sent += chunk.length;
      if (sent > expected || res.destroyed) break;
      if (!res.write(chunk) && !(await drained(res))) break;
    }
    if (sent !== expected) return void res.destroy();
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

/** The object's range as bytes, for in-process requests (tests call the app without a socket). */
export async function readStored(body: StoreBody): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await body.store.openRange(body.key, { start: body.start, end: body.end })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
