// The media-store seam against real storage: the same cases for a folder and for an S3-protocol server (s3rver on
// loopback, through the AWS SDK), so the engine can use either without knowing which.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/fixtures.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { unreachableAtStart } from '../../src/media/reachability.js';

let s3: TestS3;
let work: string;
const stores: MediaStore[] = [];

beforeAll(async () => {
  s3 = await startS3({ buckets: ['wmark-media'] });
  work = tempDir('media-store');
});
afterAll(async () => {
  for (const store of stores) store.close();
  await s3?.stop();
  rmSync(work, { recursive: true, force: true });
});

let made = 0;
/** A fresh, empty store of each kind (its own folder, or its own prefix in the bucket). */
const kinds: [string, (name?: string) => MediaStore][] = [
  ['folder', (name = `f${made++}`) => track(openMediaStore(path.join(work, 'stores', name)))],
  // Small parts so a modest file takes the multipart path.
  [
    's3',
    (name = `p${made++}`) =>
      track(openMediaStore(`s3://wmark-media/${name}`, { endpoint: s3.endpoint, credentials: s3.credentials, partSize: 5 * 1024 * 1024 })),
  ],
];

function track<S extends MediaStore>(store: S): S {
  stores.push(store);
  return store;
}

function localFile(name: string, bytes: Buffer): string {
  const file = path.join(work, 'local', `${name}-${randomBytes(4).toString('hex')}`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return file;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code ?? String(error),
  );

describe.each(kinds)('%s media store', (kind, makeStore) => {
  it('puts a local file and gets it back byte for byte, with its size', async () => {
    const store = makeStore();
    const bytes = randomBytes(300_000);
    await store.putFile('videos/v1/seg_00000.ts', localFile('seg', bytes));
    expect(await store.exists('videos/v1/seg_00000.ts')).toBe(true);
    const info = await store.stat('videos/v1/seg_00000.ts');
    expect(info?.size).toBe(bytes.length);
    expect(info?.modified).toBeGreaterThan(Date.now() - 10 * 60_000);
    const out = path.join(work, 'local', `got-${made}`);
    await store.getFile('videos/v1/seg_00000.ts', out);
    expect(readFileSync(out).equals(bytes)).toBe(true);
  });

  it('replaces an object that is put again', async () => {
    const store = makeStore();
    await store.putFile('a/b.txt', localFile('one', Buffer.from('first version, longer')));
    await store.putFile('a/b.txt', localFile('two', Buffer.from('second')));
    expect(await readAll(await store.openRange('a/b.txt'))).toEqual(Buffer.from('second'));
    expect((await store.stat('a/b.txt'))?.size).toBe(6);
  });

  it('copies an object to another key inside the store; the source stays; a missing source is MEDIA_NOT_FOUND', async () => {
    const store = makeStore();
    const bytes = randomBytes(200_000);
    await store.putFile('videos/v1/forensic/ab_00003.ts', localFile('variant', bytes));
    await store.copy('videos/v1/forensic/ab_00003.ts', 'watermarks/v1/w1/seg_00003.ts');
    expect(await readAll(await store.openRange('watermarks/v1/w1/seg_00003.ts'))).toEqual(bytes);
    expect(await readAll(await store.openRange('videos/v1/forensic/ab_00003.ts'))).toEqual(bytes);
    // Deleting the copy's folder leaves the source whole (a hard link in a folder store shares bytes, not the name).
    await store.deletePrefix('watermarks/v1/w1/');
    expect((await store.stat('videos/v1/forensic/ab_00003.ts'))?.size).toBe(bytes.length);
    expect(await codeOf(store.copy('videos/v1/forensic/none.ts', 'watermarks/v1/w1/seg_00004.ts'))).toBe('MEDIA_NOT_FOUND');
    expect(await store.exists('watermarks/v1/w1/seg_00004.ts')).toBe(false);
  });

  it('answers a missing key with undefined, false and MEDIA_NOT_FOUND', async () => {
    const store = makeStore();
    await store.putFile('videos/v1/seg_00000.ts', localFile('x', Buffer.from('x')));
    expect(await store.stat('videos/v1/seg_00001.ts')).toBeUndefined();
    expect(await store.exists('videos/v1/seg_00001.ts')).toBe(false);
    // A folder's name is not an object.
    expect(await store.exists('videos/v1')).toBe(false);
    expect(await codeOf(store.getFile('videos/v1/seg_00001.ts', path.join(work, 'local', 'never')))).toBe('MEDIA_NOT_FOUND');
    expect(await codeOf(store.openRange('videos/nope/seg_00000.ts'))).toBe('MEDIA_NOT_FOUND');
  });

  it('streams a byte range, as HTTP Range asks (inclusive end, clipped at the object end)', async () => {
    const store = makeStore();
    const bytes = randomBytes(200_000);
    await store.putFile('videos/v1/seg_00003.ts', localFile('r', bytes));
    // Safari's first probe. (Not 0-0 here: s3rver reads an end of 0 as "to the end"; S3 itself answers one byte.)
    expect(await readAll(await store.openRange('videos/v1/seg_00003.ts', { start: 0, end: 1 }))).toEqual(bytes.subarray(0, 2));
    expect(await readAll(await store.openRange('videos/v1/seg_00003.ts', { start: 1000, end: 70_999 }))).toEqual(bytes.subarray(1000, 71_000));
    expect(await readAll(await store.openRange('videos/v1/seg_00003.ts', { start: 199_990, end: 300_000 }))).toEqual(bytes.subarray(199_990));
    expect(await readAll(await store.openRange('videos/v1/seg_00003.ts'))).toEqual(bytes);
    expect(await codeOf(store.openRange('videos/v1/seg_00003.ts', { start: 200_000, end: 200_100 }))).toBe('RANGE_NOT_SATISFIABLE');
    expect(await codeOf(store.openRange('videos/v1/seg_00003.ts', { start: 10, end: 5 }))).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('lists a prefix, sorted: a folder, part of a name, and nothing of a sibling whose name starts the same', async () => {
    const store = makeStore();
    const keys = [
      'videos/v1/seg_00001.ts',
      'videos/v1/seg_00000.ts',
      'videos/v1/forensic/a_00000.ts',
      'videos/v1/playlist.m3u8',
      'videos/v10/seg_00000.ts',
      'watermarks/w1/seg_00000.ts',
    ];
    for (const key of keys) await store.putFile(key, localFile('l', Buffer.from(key)));
    expect(await store.list('videos/v1/')).toEqual([
      'videos/v1/forensic/a_00000.ts',
      'videos/v1/playlist.m3u8',
      'videos/v1/seg_00000.ts',
      'videos/v1/seg_00001.ts',
    ]);
    expect(await store.list('videos/v1/seg_')).toEqual(['videos/v1/seg_00000.ts', 'videos/v1/seg_00001.ts']);
    expect(await store.list('videos/v1')).toEqual([...keys].filter((k) => k.startsWith('videos/v1')).sort());
    expect(await store.list('')).toEqual([...keys].sort());
    expect(await store.list('nothing/here/')).toEqual([]);
  });

  it('deletes a prefix and only that prefix, and refuses the empty prefix', async () => {
    const store = makeStore();
    for (const key of ['videos/v1/seg_00000.ts', 'videos/v1/sub/x.ts', 'videos/v10/seg_00000.ts', 'videos/v2/seg_00000.ts'])
      await store.putFile(key, localFile('d', Buffer.from(key)));
    expect(await store.deletePrefix('videos/v1/')).toBe(2);
    expect(await store.list('')).toEqual(['videos/v10/seg_00000.ts', 'videos/v2/seg_00000.ts']);
    expect(await store.deletePrefix('videos/v1/')).toBe(0);
    expect(await codeOf(store.deletePrefix(''))).toBe('MEDIA_KEY_INVALID');
    expect(await store.list('')).toHaveLength(2);
  });

  it('keeps stores on different folders or prefixes apart', async () => {
    const a = makeStore();
    const b = makeStore();
    await a.putFile('k/one.ts', localFile('a', Buffer.from('a')));
    expect(await b.exists('k/one.ts')).toBe(false);
    expect(await b.list('')).toEqual([]);
  });

  it('refuses keys that could leave the store or hide among temp files', async () => {
    const store = makeStore();
    const file = localFile('k', Buffer.from('k'));
    for (const key of ['', '../escape.ts', 'a/../../b', '/abs/key', 'a//b', 'a/./b', '.hidden', 'a/.x.part', 'a b', 'a/b/']) {
      expect(await codeOf(store.putFile(key, file)), key).toBe('MEDIA_KEY_INVALID');
      expect(await codeOf(store.stat(key)), key).toBe('MEDIA_KEY_INVALID');
    }
    expect(await codeOf(store.list('../'))).toBe('MEDIA_KEY_INVALID');
  });

  it('hands local files of a set of keys to a function, one folder per key folder, and leaves no copy behind', async () => {
    const store = makeStore();
    const keys = ['watermarks/v1/w1/seg_00001.ts', 'watermarks/v1/w1/seg_00000.ts', 'videos/v1/seg_00000.ts'];
    for (const key of keys) await store.putFile(key, localFile('w', Buffer.from(`bytes of ${key}`)));
    const scratch = path.join(work, 'scratch', `${kind}-${made}`);
    mkdirSync(scratch, { recursive: true });
    const seen = await store.withLocalFiles(keys, { scratch }, async (files) => {
      expect(path.dirname(files[0]!)).toBe(path.dirname(files[1]!));
      expect(files.map((f) => path.basename(f))).toEqual(['seg_00001.ts', 'seg_00000.ts', 'seg_00000.ts']);
      return files.map((f) => readFileSync(f, 'utf8'));
    });
    expect(seen).toEqual(keys.map((key) => `bytes of ${key}`));
    // The folder's files are its own, used where they are; a bucket's copies are gone with their folder.
    expect(readdirSync(scratch)).toEqual([]);
    const missing = store.withLocalFiles(['videos/v9/seg_00000.ts'], { scratch }, async () => 'used');
    expect(await codeOf(missing)).toBe(kind === 'folder' ? 'resolved' : 'MEDIA_NOT_FOUND');
    expect(readdirSync(scratch)).toEqual([]);
    const stop = new AbortController();
    stop.abort();
    if (kind === 's3') expect(await codeOf(store.withLocalFiles(keys, { scratch, signal: stop.signal }, async () => 'used'))).toBe('CANCELLED');
  });

  it('names an object for messages: its file, or its place in the bucket', async () => {
    const store = makeStore();
    const where = store.describe('videos/v1/seg_00000.ts');
    expect(where).toBe(kind === 'folder' ? path.join(store.location, 'videos/v1/seg_00000.ts') : `${store.location}videos/v1/seg_00000.ts`);
    expect(where).not.toContain('//v');
    expect(() => store.describe('../x')).toThrow('not a media key');
  });

  it('gives the bytes of a range to send, the same from either store, and undefined for an object that changed', async () => {
    const store = makeStore();
    const bytes = randomBytes(4000);
    await store.putFile('watermarks/v1/w1/seg_00000.ts', localFile('b', bytes));
    const info = (await store.stat('watermarks/v1/w1/seg_00000.ts'))!;
    const body = await store.bodyToSend('watermarks/v1/w1/seg_00000.ts', info, { start: 100, end: 199 });
    const sent = body === undefined || Buffer.isBuffer(body) ? body : 'file' in body ? readFileSync(body.file).subarray(body.start, body.end + 1) : undefined;
    expect(sent?.equals(bytes.subarray(100, 200))).toBe(true);
    if (kind === 's3') {
      const stale = await store.bodyToSend('watermarks/v1/w1/seg_00000.ts', { ...info, size: info.size - 1 }, { start: 0, end: 9 });
      expect(stale).toBeUndefined();
    }
  });

  it('drops what unfinished writes left in a folder: none in a bucket, whose uploads appear whole or not at all', async () => {
    const store = makeStore();
    await store.putFile('videos/v1/seg_00000.ts', localFile('u', Buffer.from('whole')));
    expect(await store.dropUnfinished('videos/v1/')).toBe(0);
    expect(await store.list('videos/v1/')).toEqual(['videos/v1/seg_00000.ts']);
    expect(await codeOf(store.dropUnfinished(''))).toBe('MEDIA_KEY_INVALID');
  });

  it('names what it needs that may stop answering: nothing for a folder, the bucket’s server, up, for a bucket', () => {
    const store = makeStore();
    const expected = kind === 'folder' ? [] : [{ name: 'media', up: true, location: store.location }];
    expect(store.dependencies.map((d) => d.status())).toEqual(expected);
  });

  it('stores a file larger than one upload part whole', async () => {
    const store = makeStore();
    const bytes = randomBytes(11 * 1024 * 1024 + 123);
    await store.putFile('watermarks/w1/video.mp4', localFile('big', bytes));
    expect((await store.stat('watermarks/w1/video.mp4'))?.size).toBe(bytes.length);
    const out = path.join(work, 'local', `big-out-${made}`);
    await store.getFile('watermarks/w1/video.mp4', out);
    expect(readFileSync(out).equals(bytes)).toBe(true);
  });
});

describe('folder media store', () => {
  // Folder only: s3rver writes objects in place, so a read during a PUT can be cut short there. S3, MinIO and Ceph make
  // an object visible whole when its PUT (or multipart upload) completes, which is all the S3 store relies on.
  it('never shows a reader half an object while it is replaced', async () => {
    const store = kinds[0]![1]();
    const versions = [Buffer.alloc(3 * 1024 * 1024, 0x41), Buffer.alloc(2 * 1024 * 1024, 0x42)];
    const files = versions.map((v, i) => localFile(`v${i}`, v));
    await store.putFile('videos/v1/playlist.m3u8', files[0]!);
    let writing = true;
    const writer = (async () => {
      for (let i = 1; i <= 8; i++) await store.putFile('videos/v1/playlist.m3u8', files[i % 2]!);
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const bytes = await readAll(await store.openRange('videos/v1/playlist.m3u8'));
      const whole = versions.some((v) => v.equals(bytes));
      expect(whole, `read ${bytes.length} bytes that are neither version`).toBe(true);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
    // Nothing of the writes is left behind beside the object.
    expect(await store.list('videos/')).toEqual(['videos/v1/playlist.m3u8']);
  });
  it('writes through a hidden temp file beside the target, so a crash leaves no visible half object', async () => {
    const root = path.join(work, 'stores', 'crash');
    const store = track(new FolderMediaStore(root));
    await store.putFile('videos/v1/seg_00000.ts', localFile('c', Buffer.from('whole')));
    // What a killed writer leaves: its temp file.
    writeFileSync(path.join(root, 'videos/v1/.seg_00001.ts.abcdef.part'), 'half');
    expect(await store.list('videos/v1/')).toEqual(['videos/v1/seg_00000.ts']);
    expect(await store.exists('videos/v1/seg_00001.ts')).toBe(false);
    // Once no write there can be under way, what the killed writer left goes, and only that.
    writeFileSync(path.join(root, 'videos/v2-temp-neighbour.part'), 'not in the folder');
    expect(await store.dropUnfinished('videos/v1/')).toBe(1);
    expect(readdirSync(path.join(root, 'videos/v1'))).toEqual(['seg_00000.ts']);
    expect(readFileSync(path.join(root, 'videos/v2-temp-neighbour.part'), 'utf8')).toBe('not in the folder');
  });

  it('says which store lacks a key', async () => {
    const store = kinds[0]![1]();
    await expect(store.getFile('videos/x/seg_00000.ts', path.join(work, 'local', 'n'))).rejects.toThrow(
      `no videos/x/seg_00000.ts in the media store ${store.location}`,
    );
  });
});

describe('s3 media store', () => {
  it('reads a playlist that is being overwritten as one whole version, old or new: a body cut short is read again', async () => {
    // s3rver writes an object in place, so a read racing a PUT can be cut off: the store reads it again.
    const store = kinds[1]![1]();
    const versions = Array.from({ length: 40 }, (_, i) => Buffer.from(`#EXTM3U\n${'#EXTINF:4.000,\nseg.ts\n'.repeat(20 + i)}`));
    await store.put('videos/v1/w1/video.m3u8', versions[0]!);
    let writing = true;
    const writer = (async () => {
      for (const v of versions) await store.put('videos/v1/w1/video.m3u8', v);
      writing = false;
    })();
    const readers = [0, 1, 2].map(async () => {
      let reads = 0;
      while (writing) {
        const bytes = await store.read('videos/v1/w1/video.m3u8');
        expect(
          versions.some((v) => v.equals(bytes)),
          `read ${bytes.length} bytes that are no version`,
        ).toBe(true);
        reads++;
      }
      return reads;
    });
    await writer;
    expect((await Promise.all(readers)).reduce((a, b) => a + b)).toBeGreaterThan(0);
  });

  it('names the bucket when it does not exist', async () => {
    const store = track(openMediaStore('s3://no-such-bucket/p', { endpoint: s3.endpoint, credentials: s3.credentials }));
    const error = await store.putFile('a/b.ts', localFile('nb', Buffer.from('x'))).catch((e: unknown) => e as { code: string; message: string; hint?: string });
    expect(error).toMatchObject({ code: 'MEDIA_STORE_FAILED' });
    expect((error as { message: string }).message).toContain('s3://no-such-bucket/p/');
    expect((error as { hint: string }).hint).toMatch(/Create the bucket/);
  });

  it('says the store cannot be reached when nothing listens at the endpoint', async () => {
    const store = track(openMediaStore('s3://wmark-media/p', { endpoint: 'http://127.0.0.1:9', credentials: s3.credentials }));
    const error = await store.stat('a/b.ts').catch((e: unknown) => e as { code: string; message: string });
    // For a request, the 503 of a store that does not answer; at start (serve's check, doctor), the reason why.
    expect(error).toMatchObject({ code: 'MEDIA_STORE_UNAVAILABLE' });
    expect(store.dependencies.map((d) => d.status())).toMatchObject([{ name: 'media', up: false, reason: expect.stringMatching(/ECONNREFUSED/) }]);
    const atStart = unreachableAtStart(store, error);
    expect(atStart).toMatchObject({ code: 'MEDIA_STORE_FAILED' });
    expect((atStart as { message: string }).message).toMatch(/s3:\/\/wmark-media\/p\/: stat a\/b\.ts: .*ECONNREFUSED/);
  });

  it('reports refused credentials as a store failure, not as a missing object', async () => {
    // s3rver checks the key id (not SigV4 signatures); AWS and MinIO refuse a wrong secret the same way.
    const store = track(openMediaStore('s3://wmark-media/p', { endpoint: s3.endpoint, credentials: { accessKeyId: 'NOT-A-KEY', secretAccessKey: 'wrong' } }));
    expect(await codeOf(store.putFile('a/b.ts', localFile('ws', Buffer.from('x'))))).toBe('MEDIA_STORE_FAILED');
  });
});
