// The last steps of resolving config layers: relative paths made absolute per layer, then the layers merged, later ones winning.
import path from 'node:path';
import type { WmarkConfig } from './schema.js';

/** Makes relative paths absolute against `base`: the config file's folder, or cwd for env and flags. */
export function resolvePaths(config: WmarkConfig, base: string): WmarkConfig {
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

export function mergeConfigs(layers: readonly WmarkConfig[]): WmarkConfig {
  let merged: WmarkConfig = {};
  for (const layer of layers) {
    const { encode, server, remote, queue, media, db, ...top } = layer;
    merged = {
      ...merged,
      ...withoutUndefined(top),
      encode: { ...merged.encode, ...withoutUndefined(encode ?? {}) },
      server: { ...merged.server, ...withoutUndefined(server ?? {}) },
      remote: { ...merged.remote, ...withoutUndefined(remote ?? {}) },
      queue: { ...merged.queue, ...withoutUndefined(queue ?? {}) },
      media: { ...merged.media, ...withoutUndefined(media ?? {}) },
      db: { ...merged.db, ...withoutUndefined(db ?? {}) },
    };
  }
  return merged;
}

// A JS config's `{ workers: undefined }` must not hide a lower layer's value.
export function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
