// Finding wmark's config file (the --config file, a search up from cwd, then the user config folder) and reading it, with errors that name the file.
import path from 'node:path';
import { type CosmiconfigResult, cosmiconfig } from 'cosmiconfig';
import { ConfigError } from './config-error.js';
import { configDir, type Env, type PlatformDirs } from './paths.js';

// The places searched in each folder, walking up from cwd. No `.ts`: loading it needs the
// TypeScript compiler at runtime, which an installed CLI does not ship.
const SEARCH_PLACES = [
  'package.json',
  '.wmarkrc',
  '.wmarkrc.json',
  '.wmarkrc.yaml',
  '.wmarkrc.yml',
  '.wmarkrc.js',
  '.wmarkrc.mjs',
  '.wmarkrc.cjs',
  'wmark.config.js',
  'wmark.config.mjs',
  'wmark.config.cjs',
  'wmark.config.json',
];

// Checked in the user config folder when nothing is found walking up (what cosmiconfig's
// "global" strategy does, but with the folder taken from the injected env).
const USER_CONFIG_PLACES = ['config', 'config.json', 'config.yaml', 'config.yml', 'config.js', 'config.mjs', 'config.cjs'];

/** Where to look for the config file. */
export interface ConfigFileSearch {
  /** The environment: WMARK_CONFIG_DIR moves the user config folder. */
  env: Env;
  /** `--config <file>`: skips the search; relative to cwd; must exist. */
  explicitFile?: string | undefined;
  /** Last folder (inclusive) the upward search visits; the filesystem root when not given. */
  stopDir?: string | undefined;
}

export interface FoundFile {
  filepath: string;
  config: unknown;
}

export async function readConfigFile(options: ConfigFileSearch, cwd: string, dirs: PlatformDirs): Promise<FoundFile | undefined> {
  // cache off: a long-lived process (tests, `wmark serve`) must see edits between calls.
  const explorer = cosmiconfig('wmark', {
    searchStrategy: 'none',
    searchPlaces: SEARCH_PLACES,
    cache: false,
  });

  if (options.explicitFile !== undefined) {
    const file = path.resolve(cwd, options.explicitFile);
    const result = await guard(() => explorer.load(file), file, true);
    // An empty explicit file (or a package.json without "wmark") is a valid, empty config.
    return { filepath: file, config: unwrapDefault(result?.config ?? {}) };
  }

  // Walked here rather than with cosmiconfig's "global" strategy, whose last stop (the user
  // config folder) comes from process.env; ours honours the injected WMARK_CONFIG_DIR.
  const stopDir = options.stopDir === undefined ? undefined : path.resolve(cwd, options.stopDir);
  for (let dir = cwd; ; ) {
    const result = await guard(() => explorer.search(dir), dir, false);
    if (result && !result.isEmpty) return { filepath: result.filepath, config: unwrapDefault(result.config) };
    const parent = path.dirname(dir);
    if (dir === stopDir || parent === dir) break;
    dir = parent;
  }

  const userExplorer = cosmiconfig('wmark', {
    searchStrategy: 'none',
    searchPlaces: USER_CONFIG_PLACES,
    cache: false,
  });
  const userDir = configDir(options.env, dirs);
  const result = await guard(() => userExplorer.search(userDir), userDir, false);
  if (result && !result.isEmpty) return { filepath: result.filepath, config: unwrapDefault(result.config) };
  return undefined;
}

// An ESM config loaded through a CommonJS shim (tsx, older loaders) arrives as `{ default: {...} }`;
// "default" is never a valid key, so unwrapping it cannot hide a real mistake.
function unwrapDefault(config: unknown): unknown {
  if (config !== null && typeof config === 'object' && !Array.isArray(config)) {
    const keys = Object.keys(config);
    const inner = (config as Record<string, unknown>).default;
    if (keys.length === 1 && keys[0] === 'default' && inner !== null && typeof inner === 'object') return inner;
  }
  return config;
}

/** Turns cosmiconfig's and the filesystem's errors into ConfigErrors that name the file. */
async function guard(read: () => Promise<CosmiconfigResult>, where: string, explicit: boolean): Promise<CosmiconfigResult> {
  try {
    return await read();
  } catch (error) {
    const err = error as NodeJS.ErrnoException & { filepath?: string };
    if (explicit && err.code === 'ENOENT') {
      throw new ConfigError(`${where}: config file not found`, {
        hint: 'Check the path given to --config.',
        file: where,
        cause: error,
      });
    }
    if (explicit && err.code === 'EISDIR') {
      throw new ConfigError(`${where}: is a folder, not a config file`, {
        hint: 'Pass a file to --config, e.g. .wmarkrc.json.',
        file: where,
        cause: error,
      });
    }
    const file = err.filepath ?? where;
    throw new ConfigError(`${file}: ${describeLoadFailure(file, err)}`, {
      hint: `Fix the syntax of ${file}, or pass another file with --config.`,
      file,
      cause: error,
    });
  }
}

function describeLoadFailure(file: string, err: Error): string {
  const detail = (err.message ?? String(err))
    // cosmiconfig prefixes "JSON Error in <file>:"; we already lead with the file.
    .replace(/^(JSON|YAML|TypeScript) Error in .*?:[ \t]*\n/s, '')
    // parse-json repeats the whole input and a code frame; keep the one line that says what is wrong.
    .replace(/ while parsing '.*?'\s*(?=\n|$)/gs, '')
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s*(>\s*)?\d*\s*\|/.test(line) && !/^-+\^$/.test(line))
    .join(' ')
    .trim();
  const ext = path.extname(file);
  const what =
    ext === '.json' ? 'invalid JSON' : ext === '.yaml' || ext === '.yml' ? 'invalid YAML' : ext === '' ? 'invalid JSON or YAML' : 'cannot load module';
  return `${what}: ${detail}`;
}
