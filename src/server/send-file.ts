// Streams a byte range of a file into an HTTP response through a small pool of reused read buffers.
//
// Why not createReadStream: every read allocates a fresh off-heap buffer. A 256 KB segment chunk often outlives two
// young-generation collections while the socket drains it, gets promoted, and the external memory it holds then
// forces full mark-compact collections under load, each of which stalls every request being served (see
// docs/architecture.md, "Facts the code relies on"). Here a buffer is reused once the socket has taken its bytes (the
// write callback), so a steady stream of segment GETs allocates no buffers at all.
import { open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';

/** One read per call: a 100-500 KB segment is one or two reads, and fewer, larger reads serve a segment faster. */
export const CHUNK_BYTES = 256 * 1024;
/** Buffers kept for reuse; more concurrent downloads than this allocate and drop their own. */
const POOL_SIZE = 32;
const pool: Buffer[] = [];

/** Writes `chunk` and resolves once the socket has taken it (true), or when the response closes first (false). */
function written(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    // A response destroyed during the read has already emitted 'close'.
    if (res.destroyed) return resolve(false);
    const onClose = () => resolve(false);
    res.once('close', onClose);
    res.write(chunk, (error) => {
      res.off('close', onClose);
      resolve(!error);
    });
  });
}

/**
 * Sends bytes `start..end` (inclusive) of `file` as the body of `res`, whose head is already set, and ends it. A read
 * error, a file shorter than promised or a client that hangs up destroys the response (the client sees a cut
 * transfer, never wrong bytes); the file is always closed. Resolves when done, never rejects.
 */
export async function sendFile(res: ServerResponse, file: string, start: number, end: number): Promise<void> {
  let buffer: Buffer | undefined;
  let reusable = true;
  try {
    const handle = await open(file, 'r');
    try {
      buffer = pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
      for (let position = start; position <= end; ) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, end - position + 1), position);
        if (bytesRead === 0) throw new Error(`${file} ended at byte ${position}, before ${end + 1}`);
        position += bytesRead;
        // Until the write callback, the socket may still be reading this buffer: it is not reused before then.
        reusable = false;
        if (!(await written(res, bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead)))) return;
        reusable = true;
      }
      res.end();
    } finally {
      await handle.close();
    }
  } catch {
    res.destroy();
  } finally {
    if (buffer && reusable && pool.length < POOL_SIZE) pool.push(buffer);
  }
}
