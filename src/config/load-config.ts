// Resolves wmark's settings from defaults < config file < WMARK_* env vars < CLI flags, remembering where each came from.
import os from 'node:os';
import path from 'node:path';
import { cosmiconfig, type CosmiconfigResult } from 'cosmiconfig';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { configDir, platformDirs as defaultPlatformDirs, type Env, type PlatformDirs } from './paths.js';
import type { ApiVersion } from '../core/api-version.js';
import { knownKeysAt, wmarkConfigSchema, type WmarkConfig, type X264Preset } from './schema.js';

/** Values the CLI's flags set; undefined means the flag was not given. Numbers may arrive as strings from argv. */
export interface ConfigFlags {
  dataDir?: string | undefined;
  color?: boolean | undefined;
  ffmpeg?: string | undefined;
  ffprobe?: string | undefined;
  font?: string | undefined;
  workers?: number | string | undefined;
  preset?: string | undefined;
  crf?: number | string | undefined;
  publicUrl?: string | undefined;
  host?: string | undefined;
  port?: number | string | undefined;
  tokenTtlSeconds?: number | string | undefined;
  /** `--remote <url>`: the service to talk to. */
  remote?: string | undefined;
  /** `--api 1.0|2.0`. */
  api?: string | undefined;
  /** `wmark serve --queue redis://HOST:PORT`: the render farm's Redis. */
  queue?: string | undefined;
  /** `--media s3://BUCKET/PREFIX` or a shared folder, with `--s3-endpoint` and `--s3-region`: the farm's media store. */
  media?: string | undefined;
  s3Endpoint?: string | undefined;
  s3Region?: string | undefined;
}

export interface LoadConfigOptions {
  cwd: string;
  env: Env;
  /** `--config <file>`: skips the search; relative to cwd; must exist. */
  explicitFile?: string | undefined;
  flags: ConfigFlags;
  /** Default for `workers`; os.availableParallelism() when not given. */
  availableParallelism?: number | undefined;
  /** Platform data/config folders; env-paths when not given. */
  platformDirs?: PlatformDirs | undefined;
  /** Last folder (inclusive) the upward search visits; the filesystem root when not given. */
  stopDir?: string | undefined;
}

export interface ResolvedConfig {
  dataDir: string;
  ffmpeg?: string;
  ffprobe?: string;
  font?: string;
  workers: number;
  encode: { preset: X264Preset; crf: number };
  publicUrl?: string;
  server: { host: string; port: number; tokenTtlSeconds: number };
  remote: { url?: string; api?: ApiVersion };
  /** The render farm's Redis; without it, renders run in this process (embedded). */
  queue?: { url: string };
  /** The render farm's shared media store; without it, media lives in the data folder only. */
  media?: { url: string; s3Endpoint?: string; s3Region?: string };
  /** Undefined = decide from NO_COLOR / FORCE_COLOR / TTY. */
  color?: boolean;
  /** Dotted field path -> where its non-default value came from: a file path, `env WMARK_X` or `flag --x`. */
  sources: Record<string, string>;
  configFile?: string;
}

export const DEFAULTS = {
  encode: { preset: 'veryfast', crf: 23 },
  server: { host: '127.0.0.1', port: 8080, tokenTtlSeconds: 3600 },
} as const satisfies { encode: ResolvedConfig['encode']; server: ResolvedConfig['server'] };

const MAX_WORKERS = 64;

// The places searched in each folder, walking up from cwd. No `.ts`: loading it needs the
// TypeScript compiler at runtime, which an installed CLI does not ship.
export const SEARCH_PLACES = [
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
export const USER_CONFIG_PLACES = [
  'config',
  'config.json',
  'config.yaml',
  'config.yml',
  'config.js',
  'config.mjs',
  'config.cjs',
];

type FieldKind = 'string' | 'int' | 'boolean' | 'api' | 'path' | 'command';

interface FieldSpec {
  /** Dotted path in the config file. */
  path: string;
  env?: string;
  flag?: keyof ConfigFlags;
  kind: FieldKind;
}

// Every leaf of the schema, with the env var and flag that can set it.
const FIELDS: readonly FieldSpec[] = [
  { path: 'dataDir', env: 'WMARK_HOME', flag: 'dataDir', kind: 'path' },
  { path: 'ffmpeg', env: 'WMARK_FFMPEG', flag: 'ffmpeg', kind: 'command' },
  { path: 'ffprobe', env: 'WMARK_FFPROBE', flag: 'ffprobe', kind: 'command' },
  { path: 'font', env: 'WMARK_FONT', flag: 'font', kind: 'path' },
  { path: 'workers', env: 'WMARK_WORKERS', flag: 'workers', kind: 'int' },
  { path: 'encode.preset', env: 'WMARK_PRESET', flag: 'preset', kind: 'string' },
  { path: 'encode.crf', env: 'WMARK_CRF', flag: 'crf', kind: 'int' },
  { path: 'publicUrl', env: 'WMARK_PUBLIC_URL', flag: 'publicUrl', kind: 'string' },
  { path: 'server.host', flag: 'host', kind: 'string' },
  { path: 'server.port', flag: 'port', kind: 'int' },
  { path: 'server.tokenTtlSeconds', flag: 'tokenTtlSeconds', kind: 'int' },
  { path: 'remote.url', env: 'WMARK_API_URL', flag: 'remote', kind: 'string' },
  { path: 'remote.api', env: 'WMARK_API_VERSION', flag: 'api', kind: 'api' },
  { path: 'queue.url', env: 'WMARK_QUEUE_URL', flag: 'queue', kind: 'string' },
  { path: 'media.url', env: 'WMARK_MEDIA_URL', flag: 'media', kind: 'string' },
  { path: 'media.s3Endpoint', env: 'WMARK_S3_ENDPOINT', flag: 's3Endpoint', kind: 'string' },
  { path: 'media.s3Region', env: 'WMARK_S3_REGION', flag: 's3Region', kind: 'string' },
  { path: 'color', flag: 'color', kind: 'boolean' },
];

interface Layer {
  config: WmarkConfig;
  /** Source label for a dotted field path. */
  label: (fieldPath: string) => string;
}

export async function loadConfig(options: LoadConfigOptions): Promise<ResolvedConfig> {
  const cwd = path.resolve(options.cwd);
  const dirs = options.platformDirs ?? defaultPlatformDirs();

  const found = await readConfigFile(options, cwd, dirs);
  const layers: Layer[] = [];
  if (found) {
    const file = found.filepath;
    const config = resolvePaths(validateFile(found.config, file), path.dirname(file));
    layers.push({ config, label: () => file });
  }
  layers.push(envLayer(options.env, cwd));
  layers.push(flagLayer(options.flags, cwd));

  const sources: Record<string, string> = {};
  for (const layer of layers) {
    for (const field of FIELDS) {
      if (getLeaf(layer.config, field.path) !== undefined) sources[field.path] = layer.label(field.path);
    }
  }

  const merged = mergeConfigs(layers.map((l) => l.config));
  const cores = options.availableParallelism ?? os.availableParallelism();
  const resolved: ResolvedConfig = {
    dataDir: merged.dataDir ?? dirs.data,
    // Capped to the schema's range so a 128-core host still gets a valid default.
    workers: merged.workers ?? Math.min(MAX_WORKERS, Math.max(1, Math.floor(cores))),
    encode: { ...DEFAULTS.encode, ...merged.encode },
    server: { ...DEFAULTS.server, ...merged.server },
    remote: { ...merged.remote },
    sources,
  };
  if (merged.ffmpeg !== undefined) resolved.ffmpeg = merged.ffmpeg;
  if (merged.ffprobe !== undefined) resolved.ffprobe = merged.ffprobe;
  if (merged.font !== undefined) resolved.font = merged.font;
  if (merged.publicUrl !== undefined) resolved.publicUrl = merged.publicUrl;
  if (merged.color !== undefined) resolved.color = merged.color;
  if (merged.queue?.url !== undefined) resolved.queue = { url: merged.queue.url };
  if (merged.media?.url !== undefined) resolved.media = { url: merged.media.url, ...withoutUndefined({ s3Endpoint: merged.media.s3Endpoint, s3Region: merged.media.s3Region }) };
  if (found) resolved.configFile = found.filepath;
  return resolved;
}

// ---------------------------------------------------------------------------------------------
// Finding and reading the file

interface FoundFile {
  filepath: string;
  config: unknown;
}

async function readConfigFile(
  options: LoadConfigOptions,
  cwd: string,
  dirs: PlatformDirs,
): Promise<FoundFile | undefined> {
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
    const inner = (config as Record<string, unknown>)['default'];
    if (keys.length === 1 && keys[0] === 'default' && inner !== null && typeof inner === 'object') return inner;
  }
  return config;
}

/** Turns cosmiconfig's and the filesystem's errors into ConfigErrors that name the file. */
async function guard(
  read: () => Promise<CosmiconfigResult>,
  where: string,
  explicit: boolean,
): Promise<CosmiconfigResult> {
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
    ext === '.json'
      ? 'invalid JSON'
      : ext === '.yaml' || ext === '.yml'
        ? 'invalid YAML'
        : ext === ''
          ? 'invalid JSON or YAML'
          : 'cannot load module';
  return `${what}: ${detail}`;
}

// ---------------------------------------------------------------------------------------------
// Validation

function validateFile(raw: unknown, file: string): WmarkConfig {
  const parsed = wmarkConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines: string[] = [];
  const unknownAt: string[][] = [];
  for (const issue of parsed.error.issues) {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${file}: ${[...at, key].join('.')}: unknown key`);
      unknownAt.push(at);
    } else {
      lines.push(at.length > 0 ? `${file}: ${at.join('.')}: ${issue.message}` : `${file}: ${issue.message}`);
    }
  }
  const hint =
    unknownAt.length > 0
      ? unique(
          unknownAt.map(
            (at) => `Known keys${at.length > 0 ? ` in "${at.join('.')}"` : ''}: ${knownKeysAt(at).join(', ')}.`,
          ),
        ).join(' ')
      : `Fix the listed field${lines.length > 1 ? 's' : ''} in ${file}.`;
  throw new ConfigError(unique(lines).join('\n'), { hint, file });
}

function envLayer(env: Env, cwd: string): Layer {
  const raw: Record<string, unknown> = {};
  const byPath = new Map<string, string>();
  for (const field of FIELDS) {
    if (field.env === undefined) continue;
    const value = env[field.env];
    // An empty variable reads as unset, as with `WMARK_HOME= wmark ...`.
    if (value === undefined || value.trim() === '') continue;
    setLeaf(raw, field.path, coerce(value, field.kind));
    byPath.set(field.path, `env ${field.env}`);
  }
  const config = validateSource(raw, byPath, (label) => `Fix or unset ${label.replace(/^env /, '')}.`);
  return { config: resolvePaths(config, cwd), label: (p) => byPath.get(p) ?? 'env' };
}

function flagLayer(flags: ConfigFlags, cwd: string): Layer {
  const raw: Record<string, unknown> = {};
  const byPath = new Map<string, string>();
  for (const field of FIELDS) {
    if (field.flag === undefined) continue;
    const value = flags[field.flag];
    if (value === undefined) continue;
    setLeaf(raw, field.path, typeof value === 'string' ? coerce(value, field.kind) : value);
    byPath.set(field.path, `flag ${flagName(field.flag, value)}`);
  }
  const config = validateSource(raw, byPath, (label) => `Check the value given to ${label.replace(/^flag /, '')}.`, true);
  return { config: resolvePaths(config, cwd), label: (p) => byPath.get(p) ?? 'flag' };
}

/** Validates values assembled from env vars or flags, naming the variable or flag rather than the field. */
function validateSource(
  raw: Record<string, unknown>,
  labels: Map<string, string>,
  hintFor: (label: string) => string,
  fromFlag = false,
): WmarkConfig {
  const parsed = wmarkConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const bad = parsed.error.issues.map((issue: z.core.$ZodIssue) => {
    const fieldPath = issue.path.map(String).join('.');
    return { label: labels.get(fieldPath) ?? fieldPath, message: issue.message };
  });
  throw new ConfigError(unique(bad.map((b) => `${b.label}: ${b.message}`)).join('\n'), {
    hint: unique(bad.map((b) => hintFor(b.label))).join(' '),
    fromFlag,
  });
}

/** Env vars and argv are strings; numbers are parsed only when they look like one so the error shows the original text. */
function coerce(value: string, kind: FieldKind): unknown {
  const text = value.trim();
  switch (kind) {
    case 'int':
      return /^[+-]?\d+$/.test(text) ? Number(text) : value;
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      return value;
    case 'api':
      // `--api 2` is what people type.
      return /^[12]$/.test(text) ? `${text}.0` : text;
    default:
      return value;
  }
}

function flagName(key: keyof ConfigFlags, value: unknown): string {
  if (key === 'color') return value === false ? '--no-color' : '--color';
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

// ---------------------------------------------------------------------------------------------
// Paths and merging

/** Makes relative paths absolute against `base`: the config file's folder, or cwd for env and flags. */
function resolvePaths(config: WmarkConfig, base: string): WmarkConfig {
  const out: WmarkConfig = { ...config };
  if (out.dataDir !== undefined) out.dataDir = path.resolve(base, out.dataDir);
  if (out.font !== undefined) out.font = path.resolve(base, out.font);
  if (out.ffmpeg !== undefined) out.ffmpeg = resolveCommand(base, out.ffmpeg);
  if (out.ffprobe !== undefined) out.ffprobe = resolveCommand(base, out.ffprobe);
  return out;
}

// A bare name like "ffmpeg" means "look it up on PATH", so only values with a separator are paths.
function resolveCommand(base: string, value: string): string {
  return /[\\/]/.test(value) ? path.resolve(base, value) : value;
}

function mergeConfigs(layers: readonly WmarkConfig[]): WmarkConfig {
  let merged: WmarkConfig = {};
  for (const layer of layers) {
    const { encode, server, remote, queue, media, ...top } = layer;
    merged = {
      ...merged,
      ...withoutUndefined(top),
      encode: { ...merged.encode, ...withoutUndefined(encode ?? {}) },
      server: { ...merged.server, ...withoutUndefined(server ?? {}) },
      remote: { ...merged.remote, ...withoutUndefined(remote ?? {}) },
      queue: { ...merged.queue, ...withoutUndefined(queue ?? {}) },
      media: { ...merged.media, ...withoutUndefined(media ?? {}) },
    };
  }
  return merged;
}

// A JS config's `{ workers: undefined }` must not hide a lower layer's value.
function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function getLeaf(config: WmarkConfig, dotted: string): unknown {
  let node: unknown = config;
  for (const key of dotted.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function setLeaf(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  const last = keys.pop();
  if (last === undefined) return;
  let node = target;
  for (const key of keys) {
    const next = node[key];
    if (next === null || typeof next !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[last] = value;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
