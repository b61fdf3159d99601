// The shared store a data folder's media may also live in. `wmark serve --media s3://…` writes it down in the data
// folder (no credentials), so that any later process on the folder (`wmark watermark rm`, `ingest --replace`, an
// export) deletes and finds media there too, even when that process itself keeps its media only in the folder.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import type { MediaStore } from '../../media/media-store.js';
import type { DataLayout } from './layout.js';

/** Where a data folder's shared store is: the URL and endpoint serve was given (credentials stay the SDK's). */
export interface SharedMediaRecord {
  url: string;
  s3Endpoint?: string;
  s3Region?: string;
}

/** serve --media writes down its store, so that deleting from any process on this data folder deletes there too. */
export async function rememberSharedMedia(paths: Pick<DataLayout, 'sharedMedia'>, record: SharedMediaRecord): Promise<void> {
  await writeFileAtomic(paths.sharedMedia, `${JSON.stringify(record)}\n`, { encoding: 'utf8' });
}

/** What the functions below need of an engine: its media store, its data folder's record of a shared one, its clock. */
interface MediaPlaces {
  paths: Pick<DataLayout, 'sharedMedia'>;
  media: Pick<MediaStore, 'location'>;
  now: () => number;
}

async function rememberedStore(engine: MediaPlaces): Promise<MediaStore | undefined> {
  // Most data folders never had a shared store: one stat, and the AWS SDK is never loaded.
  if (!existsSync(engine.paths.sharedMedia)) return undefined;
  const record = JSON.parse(await readFile(engine.paths.sharedMedia, 'utf8')) as SharedMediaRecord;
  const { openMediaStore } = await import('../../media/open-media-store.js');
  const store = openMediaStore(record.url, { endpoint: record.s3Endpoint, region: record.s3Region, now: engine.now });
  if (store.location !== engine.media.location) return store;
  store.close();
  return undefined;
}

/**
 * Runs `use` on every store that may hold this data folder's media: the engine's own, then a remembered shared one
 * that is not the same store. Returns what each call returned, in that order.
 */
export async function withEveryStore<T>(engine: MediaPlaces & { media: MediaStore }, use: (store: MediaStore) => Promise<T>): Promise<T[]> {
  const results = [await use(engine.media)];
  const remembered = await rememberedStore(engine);
  if (!remembered) return results;
  try {
    results.push(await use(remembered));
  } finally {
    remembered.close();
  }
  return results;
}

/** Deletes every object below a folder of the media (a watermark's, a video's) wherever this data folder keeps media. */
export async function deleteMediaFolder(engine: MediaPlaces & { media: MediaStore }, folder: string): Promise<void> {
  await withEveryStore(engine, (store) => store.deletePrefix(`${folder}/`));
}
