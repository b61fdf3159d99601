// Generated test inputs, made once per machine with the bundled ffmpeg and cached under .wmark-test/fixtures.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SamplePlan } from '../src/core/plan/sample-clip-args.js';
import { generateVideo } from '../src/engine/app/sample-video.js';
import { createProcessRunner } from '../src/ffmpeg/run-ffmpeg.js';
import { FFMPEG, FFPROBE } from './tools.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEST_ROOT = path.join(REPO, '.wmark-test');
const FIXTURES = path.join(TEST_ROOT, 'fixtures');

const GENERATOR = 3;

export type FixtureOptions = Omit<SamplePlan, 'output'>;

/** Path of a generated video with these properties (same options -> same cached file; safe across parallel workers). */
export async function fixture(options: FixtureOptions): Promise<string> {
  mkdirSync(FIXTURES, { recursive: true });
  // Bump GENERATOR when sampleVideoArgs changes, so cached fixtures made by an older generator are not reused.
  const name = `g${GENERATOR}-${options.kind}-${options.color ?? 'x'}-${options.width}x${options.height}-${options.seconds}s-${options.fps}fps-${options.audio === false ? 'mute' : 'audio'}.mp4`;
  const output = path.join(FIXTURES, name);
  return madeOnce(output, () => generateVideo(createProcessRunner(FFMPEG, FFPROBE), { ...options, output }));
}

/**
 * Makes `file` with `make` unless it exists, one maker at a time across test workers: the first takes a lock folder
 * beside it, and the others wait for the file instead of encoding the same input again (the 5-minute title costs a
 * core for a minute). A lock whose owner process is gone (a killed run) is taken over.
 */
export async function madeOnce(file: string, make: () => Promise<string>): Promise<string> {
  const lock = `${file}.lock`;
  for (;;) {
    if (existsSync(file)) return file;
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!ownerAlive(lock)) rmSync(lock, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    return await make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether the process that took `lock` still runs (a lock without its pid yet counts as held for its first seconds). */
function ownerAlive(lock: string): boolean {
  let pid = 0;
  try {
    pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
  } catch {}
  if (!Number.isInteger(pid) || pid <= 0) {
    try {
      return Date.now() - statSync(lock).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The small default: 320x180, 10 s, 30 fps, with audio. */
export const flat = (color = '336699', seconds = 10) => fixture({ kind: 'flat', color, width: 320, height: 180, seconds, fps: 30 });
export const natural = (seconds = 10) => fixture({ kind: 'natural', width: 320, height: 180, seconds, fps: 30 });

export function tempDir(label: string): string {
  const dir = path.join(TEST_ROOT, 'tmp', `${label}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
