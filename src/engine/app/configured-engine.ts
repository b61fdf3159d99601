// The engine a resolved config describes (data folder, tools, workers, encoding, database, secret): one mapping for the
// CLI and for the library's embedded engine, so both open the same engine on the same settings. To a front end the
// engine is a handle: it opens one here and hands it to the application layer (a service, a server's, a job run).
import type { ResolvedConfig } from '../../config/load-config.js';
import type { MediaStore } from '../../media/media-store.js';
import type { Deployment } from '../deployment.js';
import type { Engine } from '../engine.js';
import { readingFrom } from '../open/embedded.js';
import { openEngine } from '../open/open-engine.js';

export type { Engine };

/**
 * Which engine a command runs on: the embedded one (the default), a render farm's `deployment`, or the embedded one
 * reading its media from a farm's store (`media`: a command that only reads what the farm made, like detect).
 */
export interface EngineChoice {
  deployment?: Deployment;
  media?: MediaStore;
}

export function openConfiguredEngine(config: ResolvedConfig, choice: EngineChoice = {}): Promise<Engine> {
  const deployment = choice.media ? readingFrom(choice.media) : choice.deployment;
  return openEngine({
    dataDir: config.dataDir,
    ffmpeg: config.ffmpeg,
    ffprobe: config.ffprobe,
    font: config.font,
    workers: config.workers,
    encode: config.encode,
    database: config.db?.url,
    ...(config.server.requestCacheSeconds !== undefined ? { requestCacheMs: config.server.requestCacheSeconds * 1000 } : {}),
    secret: config.secret,
    ...(deployment ? { deployment } : {}),
  });
}
