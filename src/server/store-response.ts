// A media object in the engine's media store (the data folder, a shared folder, S3) as a response, with what
// fileResponse gives a local file: type, length, validators, byte ranges (206/416), HEAD.
import type { ServerResponse } from 'node:http';
import { WmarkError } from '../core/errors.js';
import type { MediaStore } from '../media/media-store.js';
import { bodyResponseHead, type FileResponseOptions } from './file-response.js';
import type { ApiRequest, ApiResponse, StoreBody } from './http-types.js';

/**
 * A stored object as a response. The store says how its bytes go: from a file on this machine (fileResponse's way:
 * reused read buffers), read whole, or streamed (objects over WHOLE_BODY_BYTES); a store that does not answer fails
 * the request before anything of it is sent.
 */
export async function storeResponse(req: ApiRequest, store: MediaStore, key: string, options: FileResponseOptions): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    const info = await store.stat(key);
    if (!info) throw new WmarkError('NOT_FOUND', 'no such file');
    const { status, headers, range } = bodyResponseHead(req, info, options);
    if (!range || req.method === 'HEAD') return { status, headers };
    const body = await store.bodyToSend(key, info, range);
    if (body !== undefined) return { status, headers, body };
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
