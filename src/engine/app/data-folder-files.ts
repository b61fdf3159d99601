// The files of a data folder that front ends write down or point at themselves: where a running `wmark serve`
// listens (serve.json), the shared store it last used (shared-media.json, for later commands), and the media folder
// a render farm's workers mount. The data folder's layout stays the engine's.
import { dataLayout } from '../data-folder/layout.js';
import { rememberSharedMedia, type SharedMediaRecord } from '../data-folder/shared-media.js';

/** serve.json: where the `wmark serve` running on this data folder listens and links. */
export function serveRecordFile(dataDir: string): string {
  return dataLayout(dataDir).serveRecord;
}

/** The folder that holds a data folder's media: what workers mount when the farm keeps media here. */
export function mediaFolder(dataDir: string): string {
  return dataLayout(dataDir).media;
}

/** Writes down the shared store `serve --media` uses, so that later commands on this data folder find media there. */
export function rememberSharedStore(dataDir: string, store: SharedMediaRecord): Promise<void> {
  return rememberSharedMedia(dataLayout(dataDir), store);
}
