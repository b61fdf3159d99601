// The render farm as an engine deployment: segment renders, ingest transcodes and forensic preparation go to the
// farm's Redis queue, and media lives in the store the workers share (an S3 bucket, or the data folder's media folder
// mounted on every worker). Connected once, before the engine is built; nothing of it is attached afterwards.
import path from 'node:path';
import { WmarkError } from '../core/errors.js';
import { isHttpUrl } from '../core/http-url.js';
import type { BandSupport } from '../engine/band/band-support.js';
import { dataLayout } from '../engine/data-folder/layout.js';
import type { Deployment } from '../engine/engine.js';
import { FolderMediaStore } from '../media/folder-store.js';
import type { MediaStore } from '../media/media-store.js';
import { unreachableAtStart } from '../media/reachability.js';
import { FarmIngest } from './farm-ingest.js';
import { FarmRenderer } from './farm-renderer.js';
import { TaskQueue } from './task-queue.js';

/** Where a farm's shared store is (`--media`, `--s3-endpoint`, `--s3-region`). */
export interface SharedMediaFlags {
  media?: string;
  s3Endpoint?: string;
  s3Region?: string;
}

export interface ConnectedFarm {
  deployment: Deployment;
  /** The shared store the workers use, when it is not the data folder's own media folder. */
  shared?: MediaStore;
  /** Gives up the connections when no engine was built with the deployment (an engine closes them itself). */
  abandon(): Promise<void>;
}

/**
 * Connects to the farm's Redis (QUEUE_UNREACHABLE when it does not answer) and opens the shared store after one
 * request that shows it answers: a missing bucket or refused credentials fail here, at start, not at the first render.
 * The data folder's own media folder named as --media is what the farm uses anyway: no separate store.
 */
export async function connectFarm(options: { queueUrl: string; dataDir: string; media: SharedMediaFlags }): Promise<ConnectedFarm> {
  const shared = options.media.media ? await openSharedStore(options.media, path.resolve(dataLayout(options.dataDir).media)) : undefined;
  let queue: TaskQueue;
  try {
    queue = await TaskQueue.open(options.queueUrl);
  } catch (error) {
    shared?.close();
    throw error;
  }
  const deployment: Deployment = async (parts) => {
    // The workers render the bands, each with its own patched x264 (one without renders in full), so only WMARK_BAND=off
    // here turns band rendering off: the ingests then make no band media and every mark renders in full.
    const band: BandSupport = parts.band.chosen ? parts.band : {};
    const folder = new FolderMediaStore(parts.paths.media);
    const media: MediaStore = shared ?? folder;
    const renderer = await FarmRenderer.open({
      queue,
      url: options.queueUrl,
      media,
      folder,
      fontFile: parts.tools.font.path,
      encode: parts.encode,
      now: parts.now,
    });
    return {
      media,
      renderer,
      ingest: new FarmIngest({ queue, store: media, encode: parts.encode, secret: parts.secret, bands: !band.off }),
      // Watched for /readyz and for the requests that need them: the queue's Redis, and a bucket (a folder has none).
      dependencies: [queue.health, ...media.dependencies],
      band,
    };
  };
  return {
    deployment,
    ...(shared ? { shared } : {}),
    async abandon() {
      await queue.close();
      shared?.close();
    },
  };
}

async function openSharedStore(flags: SharedMediaFlags, mediaFolder: string): Promise<MediaStore | undefined> {
  if (flags.s3Endpoint !== undefined && !isHttpUrl(flags.s3Endpoint))
    throw new WmarkError('BAD_FLAG', `--s3-endpoint takes an http(s) URL, e.g. http://minio.internal:9000; got ${JSON.stringify(flags.s3Endpoint)}`);
  // Loaded here, not at start: the AWS SDK takes a while to load, which every other command would pay.
  const { openMediaStore } = await import('../media/open-media-store.js');
  const store = openMediaStore(flags.media!, { endpoint: flags.s3Endpoint, region: flags.s3Region });
  if (store.location === mediaFolder) {
    store.close();
    return undefined;
  }
  try {
    // A listing, not a HEAD: S3 answers a HEAD in a missing bucket as a missing object.
    await store.list('wmark-start-check');
  } catch (error) {
    store.close();
    throw unreachableAtStart(store, error);
  }
  return store;
}
