// The engine a resolved config describes (data folder, tools, workers, encoding, database, secret): one mapping for the
// CLI and for the library's embedded engine, so both open the same engine on the same settings.
import type { ResolvedConfig } from '../../config/load-config.js';
import type { Deployment } from '../deployment.js';
import { type Engine, openEngine } from '../engine.js';

export function openConfiguredEngine(config: ResolvedConfig, choice: { deployment?: Deployment } = {}): Promise<Engine> {
  return openEngine({
    dataDir: config.dataDir,
    ffmpeg: config.ffmpeg,
    ffprobe: config.ffprobe,
    font: config.font,
    workers: config.workers,
    encode: config.encode,
    database: config.db?.url,
    secret: config.secret,
    ...choice,
  });
}
