// The config layers (file, WMARK_* env vars, CLI flags): each validated with errors that name its source, and which layer set each field.
import path from 'node:path';
import type { z } from 'zod';
import { coerce, type FieldKind } from './coerce-string.js';
import { ConfigError } from './config-error.js';
import type { Env } from './paths.js';
import { resolvePaths } from './resolve-and-merge.js';
import { knownKeysAt, type WmarkConfig, wmarkConfigSchema } from './schema.js';

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
  /** `wmark serve --trust-proxy 127.0.0.1,10.0.0.0/8`: the proxies whose X-Forwarded-For is believed. */
  trustProxy?: string | undefined;
  /** `wmark serve --metrics-public`: GET /metrics answers callers on other machines too. */
  metricsPublic?: boolean | string | undefined;
  /** `wmark serve --drain-seconds <seconds>`: how long serve drains on SIGTERM before it stops listening. */
  drainSeconds?: number | string | undefined;
  /** `wmark serve --auth-ipv6-prefix <bits>`: an IPv6 client's prefix, for the failed-credential limit. */
  authIpv6Prefix?: number | string | undefined;
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
  /** `wmark serve|worker --shutdown-timeout <seconds>`: how long the work in hand gets when asked to stop. */
  shutdownTimeout?: number | string | undefined;
  /** `--db postgres://…`: the state database. */
  db?: string | undefined;
}

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
  { path: 'server.trustProxy', env: 'WMARK_TRUST_PROXY', flag: 'trustProxy', kind: 'string' },
  { path: 'server.metricsPublic', env: 'WMARK_METRICS_PUBLIC', flag: 'metricsPublic', kind: 'boolean' },
  { path: 'server.drainSeconds', env: 'WMARK_DRAIN_SECONDS', flag: 'drainSeconds', kind: 'int' },
  { path: 'server.authIpv6Prefix', env: 'WMARK_AUTH_IPV6_PREFIX', flag: 'authIpv6Prefix', kind: 'int' },
  { path: 'server.requestCacheSeconds', env: 'WMARK_REQUEST_CACHE_SECONDS', kind: 'int' },
  { path: 'remote.url', env: 'WMARK_API_URL', flag: 'remote', kind: 'string' },
  { path: 'remote.api', env: 'WMARK_API_VERSION', flag: 'api', kind: 'api' },
  { path: 'queue.url', env: 'WMARK_QUEUE_URL', flag: 'queue', kind: 'string' },
  { path: 'media.url', env: 'WMARK_MEDIA_URL', flag: 'media', kind: 'string' },
  { path: 'media.s3Endpoint', env: 'WMARK_S3_ENDPOINT', flag: 's3Endpoint', kind: 'string' },
  { path: 'media.s3Region', env: 'WMARK_S3_REGION', flag: 's3Region', kind: 'string' },
  { path: 'shutdownTimeoutSeconds', env: 'WMARK_SHUTDOWN_TIMEOUT', flag: 'shutdownTimeout', kind: 'int' },
  { path: 'db.url', env: 'WMARK_DB_URL', flag: 'db', kind: 'string' },
  // No flag: a secret on a command line is visible to every user of the machine.
  { path: 'secret', env: 'WMARK_SECRET', kind: 'string' },
  { path: 'color', flag: 'color', kind: 'boolean' },
];

export interface Layer {
  config: WmarkConfig;
  /** Source label for a dotted field path. */
  label: (fieldPath: string) => string;
}

/** The config file's layer: validated, its relative paths resolved against the file's folder. */
export function fileLayer(raw: unknown, file: string): Layer {
  const config = resolvePaths(validateFile(raw, file), path.dirname(file));
  return { config, label: () => file };
}

/** Dotted field path -> the source of the last layer that sets it. */
export function fieldSources(layers: readonly Layer[]): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const layer of layers) {
    for (const field of FIELDS) {
      if (getLeaf(layer.config, field.path) !== undefined) sources[field.path] = layer.label(field.path);
    }
  }
  return sources;
}

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
      ? unique(unknownAt.map((at) => `Known keys${at.length > 0 ? ` in "${at.join('.')}"` : ''}: ${knownKeysAt(at).join(', ')}.`)).join(' ')
      : `Fix the listed field${lines.length > 1 ? 's' : ''} in ${file}.`;
  throw new ConfigError(unique(lines).join('\n'), { hint, file });
}

export function envLayer(env: Env, cwd: string): Layer {
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

export function flagLayer(flags: ConfigFlags, cwd: string): Layer {
  const raw: Record<string, unknown> = {};
  const byPath = new Map<string, string>();
  for (const field of FIELDS) {
    if (field.flag === undefined) continue;
    const value = flags[field.flag];
    if (value === undefined) continue;
    setLeaf(raw, field.path, typeof value === 'string' ? coerce(value, field.kind) : value);
    byPath.set(field.path, `flag ${flagName(field.flag, value)}`);
  }
  const config = validateSource(raw, byPath, (label) => `Check the value given to ${label}.`, true);
  return { config: resolvePaths(config, cwd), label: (p) => byPath.get(p) ?? 'flag' };
}

/** Validates values assembled from env vars or flags, naming the variable or flag rather than the field. */
function validateSource(raw: Record<string, unknown>, labels: Map<string, string>, hintFor: (label: string) => string, fromFlag = false): WmarkConfig {
  const parsed = wmarkConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const bad = parsed.error.issues.map((issue: z.core.$ZodIssue) => {
    const fieldPath = issue.path.map(String).join('.');
    const label = labels.get(fieldPath) ?? fieldPath;
    // A flag's value is always typed as text: "--port: expected ..., got "abc"", as the CLI words its other flags.
    return fromFlag ? { label: label.replace(/^flag /, ''), message: issue.message.replace(/got the string /, 'got ') } : { label, message: issue.message };
  });
  throw new ConfigError(unique(bad.map((b) => `${b.label}: ${b.message}`)).join('\n'), {
    hint: unique(bad.map((b) => hintFor(b.label))).join(' '),
    fromFlag,
    ...(fromFlag && bad[0] ? { flag: bad[0].label } : {}),
  });
}

function flagName(key: keyof ConfigFlags, value: unknown): string {
  if (key === 'color') return value === false ? '--no-color' : '--color';
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
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
