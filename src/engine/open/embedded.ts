// The embedded deployment: everything in this process. ffmpeg renders and ingests here, and media lives in the data
// folder's media folder (or in a store given, when a command reads what a render farm made).
import { FolderMediaStore } from '../../media/folder-store.js';
import type { MediaStore } from '../../media/media-store.js';
import type { Deployment } from '../deployment.js';
import { LocalIngest } from '../ingest/local-ingest.js';
import { LocalRenderer } from '../render/local-renderer.js';

export const embedded: Deployment = async (parts) => {
  const media = new FolderMediaStore(parts.paths.media);
  return {
    media,
    renderer: new LocalRenderer({
      media,
      runner: parts.runner,
      fontFile: parts.tools.font.path,
      encode: parts.encode,
      threads: parts.workers,
      now: parts.now,
      ...(parts.band.x264 ? { band: { x264: parts.band.x264 } } : {}),
    }),
    ingest: new LocalIngest(parts, media),
  };
};

/**
 * For a command that only reads what a render farm made (`wmark detect --media`, on any machine with the database and
 * the store): media is read from the farm's store; renders and ingests, which such a command never starts, stay the
 * embedded ones on the data folder.
 */
export function readingFrom(store: MediaStore): Deployment {
  return async (parts) => ({ ...(await embedded(parts)), media: store });
}
