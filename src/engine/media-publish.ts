// The engine's side of a shared media store (issue 11, `wmark serve --queue … --media s3://…`): what serve makes
// itself (working segments, forensic variants and sidecar, playlists, mp4s) is published to the store under the keys
// workers use, and what workers render is looked for there. Without a store (engine.media unset) none of this runs:
// the data folder's media folder is the only copy, as it always was.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { joinMp4Args } from '../core/plan/render-args.js';
import { segmentFileName } from '../core/plan/segment-timing.js';
import { WmarkError } from '../core/errors.js';
import type { MediaStore } from '../media/media-store.js';
import type { Engine } from './engine.js';
import { forEachBounded } from './for-each-bounded.js';
import writeFileAtomic from 'write-file-atomic';

/** Uploads (and downloads, for an mp4 join) one store request each; a few at once hide the round trips. */
const TRANSFERS_AT_ONCE = 4;

/**
 * A file's key in the store: its path relative to the media folder, with `/` separators (the layout is the same in
 * the folder and in the store). A file outside the media folder has no key: MEDIA_KEY_INVALID.
 */
export function mediaKey(mediaRoot: string, file: string): string {
  const key = path.relative(mediaRoot, file).split(path.sep).join('/');
  if (key === '' || key === '..' || key.startsWith('../') || path.isAbsolute(key)) {
    throw new WmarkError('MEDIA_KEY_INVALID', `${file} is outside the media folder ${mediaRoot}`);
  }
  return key;
}

/** Which of `count` segments a listing of a watermark's keys holds (`seg_00000.ts`… directly under `prefix`). */
export function segmentsListed(keys: readonly string[], prefix: string, count: number): boolean[] {
  const names = new Set(keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)));
  return Array.from({ length: count }, (_, i) => names.has(segmentFileName(i)));
}

/** Which segments of the folder `dir` (a watermark's, under the media folder) are in the store. */
export async function storedSegments(engine: Engine, store: MediaStore, dir: string, count: number): Promise<boolean[]> {
  const prefix = `${mediaKey(engine.paths.media, dir)}/`;
  return segmentsListed(await store.list(`${prefix}seg_`), prefix, count);
}

const published = new WeakMap<Engine, Map<string, Promise<void>>>();

/**
 * Puts a video's media folder (working segments, forensic variants, layout and sidecar) in the store, each file that
 * is not there yet. Once per video and process: an ingest publishes its video, and a video ingested before serve had
 * a store is published the first time a watermark of it renders.
 */
export function publishVideoMedia(engine: Engine, videoId: string): Promise<void> {
  const store = engine.media;
  if (!store) return Promise.resolve();
  let done = published.get(engine);
  if (!done) published.set(engine, (done = new Map()));
  let publishing = done.get(videoId);
  if (!publishing) {
    publishing = publishFolder(engine, store, path.join(engine.paths.videos, videoId));
    done.set(videoId, publishing);
    publishing.catch(() => done.delete(videoId));
  }
  return publishing;
}

async function publishFolder(engine: Engine, store: MediaStore, folder: string): Promise<void> {
  const prefix = `${mediaKey(engine.paths.media, folder)}/`;
  const there = new Set(await store.list(prefix));
  const files = (await localFiles(folder)).filter((file) => !there.has(mediaKey(engine.paths.media, file)));
  await forEachBounded(files, TRANSFERS_AT_ONCE, (file) => store.putFile(mediaKey(engine.paths.media, file), file));
}

/** Every file below `folder` (none when it does not exist), without hidden names: those are writes in flight. */
async function localFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)));
  return entries
    .filter((e) => e.isFile() && !path.relative(folder, path.join(e.parentPath, e.name)).split(path.sep).some((part) => part.startsWith('.')))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Forgets a video's media in the store (its working copies and every watermark of it), when the video goes. */
export async function unpublishVideoMedia(engine: Engine, videoId: string): Promise<void> {
  published.get(engine)?.delete(videoId);
  await unpublishFolder(engine, path.join(engine.paths.videos, videoId));
  await unpublishFolder(engine, path.join(engine.paths.watermarks, videoId));
}

/**
 * Deletes every object under a folder of the media folder (a watermark's, a video's) from the shared store: serve's,
 * or, in another process on the same data folder (`wmark watermark rm`, `ingest --replace`), the one it remembers.
 */
export async function unpublishFolder(engine: Engine, folder: string): Promise<void> {
  const prefix = `${mediaKey(engine.paths.media, folder)}/`;
  await withSharedStore(engine, (store) => store.deletePrefix(prefix));
}

/**
 * Copies what the shared store holds below a folder of the media folder into `into`, keeping the layout: a farm's
 * rendered segments and mp4 live only there, so an export of a watermark (`--out`) needs them from the store. Files
 * already in `into` are left as they are. Returns how many files came from the store (0 without one).
 */
export async function fetchStoredFolder(engine: Engine, folder: string, into: string): Promise<number> {
  const prefix = `${mediaKey(engine.paths.media, folder)}/`;
  const fetched = await withSharedStore(engine, async (store) => {
    const wanted = (await store.list(prefix)).map((key) => ({ key, file: path.join(into, ...key.slice(prefix.length).split('/')) })).filter(({ file }) => !existsSync(file));
    await forEachBounded(wanted, TRANSFERS_AT_ONCE, async ({ key, file }) => {
      await mkdir(path.dirname(file), { recursive: true });
      await store.getFile(key, file);
    });
    return wanted.length;
  });
  return fetched ?? 0;
}

/** Runs `use` on this data folder's shared store: serve's own, or the one a serve on this folder wrote down; none: undefined. */
async function withSharedStore<T>(engine: Engine, use: (store: MediaStore) => Promise<T>): Promise<T | undefined> {
  if (engine.media) return use(engine.media);
  const remembered = await rememberedStore(engine);
  if (!remembered) return undefined;
  try {
    return await use(remembered);
  } finally {
    remembered.close();
  }
}

/** Where a data folder's shared store is: the URL and endpoint serve was given (credentials stay the SDK's). */
export interface SharedMediaRecord {
  url: string;
  s3Endpoint?: string;
  s3Region?: string;
}

/** Beside the database: the store that holds this data folder's rendered media, which only it knows of. */
const sharedMediaFile = (engine: Engine) => path.join(engine.paths.root, 'shared-media.json');

/** serve --media writes down its store, so that deleting from any process on this data folder deletes there too. */
export async function rememberSharedMedia(engine: Engine, record: SharedMediaRecord): Promise<void> {
  await writeFileAtomic(sharedMediaFile(engine), `${JSON.stringify(record)}\n`, { encoding: 'utf8' });
}

async function rememberedStore(engine: Engine): Promise<MediaStore | undefined> {
  const file = sharedMediaFile(engine);
  // Most data folders never had a shared store: one stat, and the AWS SDK is never loaded.
  if (!existsSync(file)) return undefined;
  const record = JSON.parse(await readFile(file, 'utf8')) as SharedMediaRecord;
  const { openMediaStore } = await import('../media/open-media-store.js');
  return openMediaStore(record.url, { endpoint: record.s3Endpoint, region: record.s3Region });
}

/** Puts a file serve wrote in the media folder (a playlist) in the store too. */
export async function publishFile(engine: Engine, file: string): Promise<void> {
  await engine.media?.putFile(mediaKey(engine.paths.media, file), file);
}

/** Whether a file of the media folder is in the store (with one), or on disk (without). */
export function isStored(engine: Engine, store: MediaStore, file: string): Promise<boolean> {
  return store.exists(mediaKey(engine.paths.media, file));
}

/**
 * Joins a watermark's rendered segments into its mp4 and puts that in the store. The segments live in the store
 * only, so they are fetched to a scratch folder first; the join copies streams, as it does from the media folder.
 */
export async function joinMp4InStore(engine: Engine, store: MediaStore, plan: { dir: string; segments: number; hasAudio: boolean; mp4: string }, signal?: AbortSignal): Promise<void> {
  const scratch = await mkdtemp(path.join(engine.paths.tmp, 'mp4-'));
  try {
    const names = Array.from({ length: plan.segments }, (_, i) => segmentFileName(i));
    await forEachBounded(names, TRANSFERS_AT_ONCE, async (name) => {
      if (signal?.aborted) throw new WmarkError('CANCELLED', 'mp4 join cancelled');
      await store.getFile(mediaKey(engine.paths.media, path.join(plan.dir, name)), path.join(scratch, name));
    });
    const output = path.basename(plan.mp4);
    await engine.runner.ffmpeg(joinMp4Args(names, output, plan.hasAudio), { signal, cwd: scratch });
    await store.putFile(mediaKey(engine.paths.media, plan.mp4), path.join(scratch, output));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
