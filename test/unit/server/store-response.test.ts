// A media object answers the same from any store: validators, ranges (206/416), 304; a folder's as a range of its
// file, a store elsewhere's read whole or streamed.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unavailableError } from '../../../src/core/dependency.js';
import { FolderMediaStore } from '../../../src/media/folder-store.js';
import { bodyFromReads, type MediaStore, WHOLE_BODY_BYTES } from '../../../src/media/media-store.js';
import { bodyEtag } from '../../../src/server/file-response.js';
import type { ApiRequest } from '../../../src/server/http-types.js';
import { readStored, storeResponse } from '../../../src/server/store-response.js';

// A real (folder) store: the S3 one answers the same calls, and the e2e farm test streams from s3rver.
const root = mkdtempSync(path.join(os.tmpdir(), 'wmark-store-response-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
const modified = Date.UTC(2026, 0, 2, 3, 4, 5);
mkdirSync(path.join(root, 'watermarks', 'v', 'w'), { recursive: true });
for (const [name, content] of [
  ['seg_00000.ts', bytes],
  ['empty.ts', Buffer.alloc(0)],
] as const) {
  const file = path.join(root, 'watermarks', 'v', 'w', name);
  writeFileSync(file, content);
  utimesSync(file, modified / 1000, modified / 1000);
}
const folder = new FolderMediaStore(root);
// Read through its calls: the folder answers as a store on another machine does (the S3 one), read whole or streamed.
const fromReads = {
  bodyToSend(this: MediaStore, ...args: Parameters<MediaStore['bodyToSend']>) {
    return bodyFromReads(this, ...args);
  },
};
const store: MediaStore = Object.assign(Object.create(folder) as FolderMediaStore, fromReads);
const options = { contentType: 'video/mp2t', cacheControl: 'private, max-age=60, immutable', headers: { 'Access-Control-Allow-Origin': '*' } };
const req = (headers: Record<string, string> = {}, method = 'GET') => ({ method, headers }) as unknown as ApiRequest;

describe('storeResponse', () => {
  it("answers a folder store's object with its file's range, the same head as a store read elsewhere", async () => {
    const key = 'watermarks/v/w/seg_00000.ts';
    const local = await storeResponse(req({ range: 'bytes=10-19' }), folder, key, options);
    expect(local.status).toBe(206);
    expect(local.body).toEqual({ file: path.join(root, key), start: 10, end: 19 });
    expect(local.headers).toEqual((await storeResponse(req({ range: 'bytes=10-19' }), store, key, options)).headers);
    await expect(storeResponse(req(), folder, 'watermarks/v/w/seg_00009.ts', options)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers the whole object with length, type, validators and the extra headers', async () => {
    const r = await storeResponse(req(), store, 'watermarks/v/w/seg_00000.ts', options);
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({
      'Content-Type': 'video/mp2t',
      'Content-Length': '1000',
      'Accept-Ranges': 'bytes',
      ETag: bodyEtag({ size: 1000, modified }),
      'Last-Modified': 'Fri, 02 Jan 2026 03:04:05 GMT',
      'Access-Control-Allow-Origin': '*',
    });
    expect(r.headers.ETag).toBe(`"3e8-${modified.toString(16)}"`);
    expect(r.body).toEqual(bytes);
    const head = await storeResponse(req({}, 'HEAD'), store, 'watermarks/v/w/seg_00000.ts', options);
    expect(head).toMatchObject({ status: 200, headers: { 'Content-Length': '1000' } });
    expect(head.body).toBeUndefined();
  });

  it('answers a range with 206 and its bytes, a range past the end with 416, and a matching ETag with 304', async () => {
    const part = await storeResponse(req({ range: 'bytes=10-19' }), store, 'watermarks/v/w/seg_00000.ts', options);
    expect(part.status).toBe(206);
    expect(part.headers['Content-Range']).toBe('bytes 10-19/1000');
    expect(part.headers['Content-Length']).toBe('10');
    expect(part.body).toEqual(bytes.subarray(10, 20));
    const beyond = await storeResponse(req({ range: 'bytes=1000-' }), store, 'watermarks/v/w/seg_00000.ts', options);
    expect(beyond).toMatchObject({ status: 416, headers: { 'Content-Range': 'bytes */1000', 'Content-Length': '0' } });
    expect(beyond.body).toBeUndefined();
    const etag = bodyEtag({ size: 1000, modified });
    expect((await storeResponse(req({ 'if-none-match': etag }), store, 'watermarks/v/w/seg_00000.ts', options)).status).toBe(304);
  });

  it('is NOT_FOUND for a missing object, and bodiless for an empty one', async () => {
    await expect(storeResponse(req(), store, 'watermarks/v/w/seg_00009.ts', options)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const empty = await storeResponse(req(), store, 'watermarks/v/w/empty.ts', options);
    expect(empty).toMatchObject({ status: 200, headers: { 'Content-Length': '0' } });
    expect(empty.body).toBeUndefined();
  });

  it('reads a segment whole before answering: a store that stops part-way is its 503, never a 200 cut short', async () => {
    // The bucket answers the HEAD, then goes away before the body is read (the moment a real outage can pick).
    const goneAfterStat: MediaStore = Object.assign(Object.create(store) as MediaStore, {
      read: () => Promise.reject(unavailableError({ name: 'media', location: 's3://b/', up: false, downSince: Date.now() }, Date.now())),
    });
    await expect(storeResponse(req(), goneAfterStat, 'watermarks/v/w/seg_00000.ts', options)).rejects.toMatchObject({
      code: 'MEDIA_STORE_UNAVAILABLE',
      httpStatus: 503,
    });
  });

  it('answers the object as it is when it is rewritten between its stat and its read', async () => {
    const file = path.join(root, 'watermarks', 'v', 'w', 'rewritten.ts');
    writeFileSync(file, bytes.subarray(0, 500));
    const rewriting: MediaStore = Object.assign(Object.create(store) as MediaStore, {
      read: async (key: string) => {
        const before = await store.read(key);
        writeFileSync(file, bytes);
        return before.length === 500 ? bytes : before;
      },
    });
    const r = await storeResponse(req(), rewriting, 'watermarks/v/w/rewritten.ts', options);
    expect(r.headers['Content-Length']).toBe('1000');
    expect(r.body).toEqual(bytes);
  });

  it('streams an object too large to hold, opened before its head is sent, with the length it announced', async () => {
    const large = Buffer.alloc(WHOLE_BODY_BYTES + 4096, 7);
    large.writeUInt32BE(0xdeadbeef, large.length - 4);
    writeFileSync(path.join(root, 'watermarks', 'v', 'w', 'video.mp4'), large);
    const whole = await storeResponse(req(), store, 'watermarks/v/w/video.mp4', options);
    expect(whole.headers['Content-Length']).toBe(String(large.length));
    expect((await readStored(whole.body as never)).equals(large)).toBe(true);
    const tail = await storeResponse(req({ range: `bytes=${large.length - 4}-` }), store, 'watermarks/v/w/video.mp4', options);
    expect(tail.status).toBe(206);
    expect((await readStored(tail.body as never)).readUInt32BE(0)).toBe(0xdeadbeef);
  });
});
