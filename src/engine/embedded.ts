// The embedded deployment: everything in this process. ffmpeg renders and ingests here, and media lives in the data
// folder's media folder.
import { FolderMediaStore } from '../media/folder-store.js';
import type { Deployment } from './deployment.js';
import { LocalIngest } from './ingest/local-ingest.js';
import { LocalRenderer } from './render/local-renderer.js';

export const embedded: Deployment = async (parts) => {
  const media = new FolderMediaStore(parts.paths.media);
  return {
    media,
    renderer: new LocalRenderer({ media, runner: parts.runner, fontFile: parts.tools.font.path, encode: parts.encode, threads: parts.workers }),
    ingest: new LocalIngest(parts, media),
  };
};
