// Where wmark keeps its files on this machine: the platform's data and config folders (the data folder's own layout
// is engine/data-folder/layout.ts).
import envPaths from 'env-paths';

export interface PlatformDirs {
  data: string;
  config: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** The platform's data/config folders for wmark (no "-nodejs" suffix: users look for plain "wmark"). */
export function platformDirs(): PlatformDirs {
  const dirs = envPaths('wmark', { suffix: '' });
  return { data: dirs.data, config: dirs.config };
}

/** The user config folder (credentials, user-wide config): WMARK_CONFIG_DIR wins so tests and CI can isolate it. */
export function configDir(env: Env, dirs: PlatformDirs = platformDirs()): string {
  const fromEnv = env.WMARK_CONFIG_DIR;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : dirs.config;
}
