// Where wmark keeps its state: the data folder layout and the user config folder.
import path from 'node:path';
import envPaths from 'env-paths';

export interface DataPaths {
  root: string;
  /** SQLite database (WAL), shared by `wmark serve` and CLI runs. */
  db: string;
  /** HMAC key for signed URLs and tokens. */
  secret: string;
  media: string;
  videos: string;
  watermarks: string;
  /** Scratch space on the same filesystem as media, so finished folders can be renamed into place. */
  tmp: string;
  locks: string;
}

export interface PlatformDirs {
  data: string;
  config: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

export function dataPaths(dataDir: string): DataPaths {
  const media = path.join(dataDir, 'media');
  return {
    root: dataDir,
    db: path.join(dataDir, 'wmark.db'),
    secret: path.join(dataDir, 'secret.key'),
    media,
    videos: path.join(media, 'videos'),
    watermarks: path.join(media, 'watermarks'),
    tmp: path.join(dataDir, 'tmp'),
    locks: path.join(dataDir, 'locks'),
  };
}

/** The platform's data/config folders for wmark (no "-nodejs" suffix: users look for plain "wmark"). */
export function platformDirs(): PlatformDirs {
  const dirs = envPaths('wmark', { suffix: '' });
  return { data: dirs.data, config: dirs.config };
}

/** The user config folder (credentials, user-wide config): WMARK_CONFIG_DIR wins so tests and CI can isolate it. */
export function configDir(env: Env, dirs: PlatformDirs = platformDirs()): string {
  const fromEnv = env['WMARK_CONFIG_DIR'];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : dirs.config;
}
