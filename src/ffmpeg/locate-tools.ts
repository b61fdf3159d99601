// Finds ffmpeg, ffprobe and the drawtext font: explicit config/env first, then the bundled npm binaries, then PATH.

import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

type ToolSource = 'config' | 'bundled' | 'path' | 'missing';

interface ToolLocation {
  path: string;
  source: ToolSource;
}

export interface MediaTools {
  ffmpeg: ToolLocation;
  ffprobe: ToolLocation;
  font: ToolLocation;
}

export interface ToolOverrides {
  ffmpeg?: string;
  ffprobe?: string;
  font?: string;
}

const require = createRequire(import.meta.url);

function bundledBinary(pkg: '@ffmpeg-installer/ffmpeg' | '@ffprobe-installer/ffprobe'): string | undefined {
  try {
    // The installer packages throw a plain string when the platform package is absent.
    const found = require(pkg) as { path?: string };
    return found.path && isExecutable(found.path) ? found.path : undefined;
  } catch {
    return undefined;
  }
}

function bundledFont(): string | undefined {
  try {
    const pkgJson = require.resolve('dejavu-fonts-ttf/package.json');
    const font = path.join(path.dirname(pkgJson), 'ttf', 'DejaVuSans.ttf');
    return existsSync(font) ? font : undefined;
  } catch {
    return undefined;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function pick(explicit: string | undefined, bundled: () => string | undefined, fromPath: () => string | undefined, name: string): ToolLocation {
  if (explicit) return { path: explicit, source: 'config' };
  const b = bundled();
  if (b) return { path: b, source: 'bundled' };
  const p = fromPath();
  if (p) return { path: p, source: 'path' };
  return { path: name, source: 'missing' };
}

export function locateTools(overrides: ToolOverrides, envPath: string | undefined = process.env.PATH): MediaTools {
  return {
    ffmpeg: pick(
      overrides.ffmpeg,
      () => bundledBinary('@ffmpeg-installer/ffmpeg'),
      () => onPath('ffmpeg', envPath),
      'ffmpeg',
    ),
    ffprobe: pick(
      overrides.ffprobe,
      () => bundledBinary('@ffprobe-installer/ffprobe'),
      () => onPath('ffprobe', envPath),
      'ffprobe',
    ),
    font: pick(overrides.font, bundledFont, () => undefined, 'DejaVuSans.ttf'),
  };
}
