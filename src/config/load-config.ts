// Resolves wmark's settings from defaults < config file < WMARK_* env vars < CLI flags, remembering where each came from.
import os from 'node:os';
import path from 'node:path';
import type { ApiVersion } from '../core/api-version.js';
import { type ConfigFileSearch, readConfigFile } from './config-file.js';
import { type ConfigFlags, envLayer, fieldSources, fileLayer, flagLayer, type Layer } from './config-layers.js';
import { platformDirs as defaultPlatformDirs, type PlatformDirs } from './paths.js';
import { mergeConfigs, withoutUndefined } from './resolve-and-merge.js';
import type { X264Preset } from './schema.js';

export type { ConfigFlags } from './config-layers.js';

/** With the config file search's `env`, `explicitFile` (`--config`) and `stopDir`. */
export interface LoadConfigOptions extends ConfigFileSearch {
  cwd: string;
  flags: ConfigFlags;
  /** Default for `workers`; os.availableParallelism() when not given. */
  availableParallelism?: number | undefined;
  /** Platform data/config folders; env-paths when not given. */
  platformDirs?: PlatformDirs | undefined;
}

export interface ResolvedConfig {
  dataDir: string;
  ffmpeg?: string;
  ffprobe?: string;
  font?: string;
  workers: number;
  encode: { preset: X264Preset; crf: number };
  publicUrl?: string;
  /** `trustProxy`: the reverse proxies whose X-Forwarded-For names the client, as given (validated) text. */
  server: {
    host: string;
    port: number;
    tokenTtlSeconds: number;
    trustProxy?: string;
    metricsPublic: boolean;
    drainSeconds: number;
    authIpv6Prefix: number;
    requestCacheSeconds?: number;
  };
  remote: { url?: string; api?: ApiVersion };
  /** The render farm's Redis; without it, renders run in this process (embedded). */
  queue?: { url: string };
  /** The render farm's shared media store; without it, media lives in the data folder only. */
  media?: { url?: string; s3Endpoint?: string; s3Region?: string };
  /** How long `serve` and `worker` give the work in hand when asked to stop (SIGTERM, Ctrl-C). */
  shutdownTimeoutSeconds: number;
  /** The PostgreSQL state database; without it, state lives in the SQLite file in the data folder. */
  db?: { url: string };
  /** The operator's secret (base64url); without it, the database's or the data folder's. */
  secret?: string;
  /** Undefined = decide from NO_COLOR / FORCE_COLOR / TTY. */
  color?: boolean;
  /** Dotted field path -> where its non-default value came from: a file path, `env WMARK_X` or `flag --x`. */
  sources: Record<string, string>;
  configFile?: string;
}

const DEFAULTS = {
  encode: { preset: 'veryfast', crf: 23 },
  server: { host: '127.0.0.1', port: 8080, tokenTtlSeconds: 3600, metricsPublic: false, drainSeconds: 0, authIpv6Prefix: 64 },
  shutdownTimeoutSeconds: 10,
} as const satisfies { encode: ResolvedConfig['encode']; server: ResolvedConfig['server']; shutdownTimeoutSeconds: number };

const MAX_WORKERS = 64;

export async function loadConfig(options: LoadConfigOptions): Promise<ResolvedConfig> {
  const cwd = path.resolve(options.cwd);
  const dirs = options.platformDirs ?? defaultPlatformDirs();

  const found = await readConfigFile(options, cwd, dirs);
  const layers: Layer[] = [];
  if (found) layers.push(fileLayer(found.config, found.filepath));
  layers.push(envLayer(options.env, cwd));
  layers.push(flagLayer(options.flags, cwd));
  const sources = fieldSources(layers);

  const merged = mergeConfigs(layers.map((l) => l.config));
  const cores = options.availableParallelism ?? os.availableParallelism();
  const resolved: ResolvedConfig = {
    dataDir: merged.dataDir ?? dirs.data,
    // Capped to the schema's range so a 128-core host still gets a valid default.
    workers: merged.workers ?? Math.min(MAX_WORKERS, Math.max(1, Math.floor(cores))),
    encode: { ...DEFAULTS.encode, ...merged.encode },
    server: { ...DEFAULTS.server, ...merged.server },
    remote: { ...merged.remote },
    shutdownTimeoutSeconds: merged.shutdownTimeoutSeconds ?? DEFAULTS.shutdownTimeoutSeconds,
    sources,
  };
  if (merged.ffmpeg !== undefined) resolved.ffmpeg = merged.ffmpeg;
  if (merged.ffprobe !== undefined) resolved.ffprobe = merged.ffprobe;
  if (merged.font !== undefined) resolved.font = merged.font;
  if (merged.publicUrl !== undefined) resolved.publicUrl = merged.publicUrl;
  if (merged.color !== undefined) resolved.color = merged.color;
  if (merged.queue?.url !== undefined) resolved.queue = { url: merged.queue.url };
  // The endpoint and region count without a URL too: `--media` may come as a flag, the endpoint from the environment.
  const media = withoutUndefined({ url: merged.media?.url, s3Endpoint: merged.media?.s3Endpoint, s3Region: merged.media?.s3Region });
  if (Object.keys(media).length) resolved.media = media;
  if (merged.db?.url !== undefined) resolved.db = { url: merged.db.url };
  if (merged.secret !== undefined) resolved.secret = merged.secret;
  if (found) resolved.configFile = found.filepath;
  return resolved;
}
