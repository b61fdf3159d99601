// Generated test inputs, made once per machine with the bundled ffmpeg and cached under .wmark-test/fixtures.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SamplePlan } from '../src/core/plan/sample-clip-args.js';
import { generateVideo } from '../src/engine/ingest/sample-video.js';
import { createProcessRunner } from '../src/ffmpeg/run-ffmpeg.js';
import { FFMPEG, FFPROBE } from './tools.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEST_ROOT = path.join(REPO, '.wmark-test');
const FIXTURES = path.join(TEST_ROOT, 'fixtures');

const GENERATOR = 2;

export type FixtureOptions = Omit<SamplePlan, 'output'>;

/** Path of a generated video with these properties (same options -> same cached file; safe across parallel workers). */
export async function fixture(options: FixtureOptions): Promise<string> {
  mkdirSync(FIXTURES, { recursive: true });
  // Bump GENERATOR when sampleVideoArgs changes, so cached fixtures made by an older generator are not reused.
  const name = `g${GENERATOR}-${options.kind}-${options.color ?? 'x'}-${options.width}x${options.height}-${options.seconds}s-${options.fps}fps-${options.audio === false ? 'mute' : 'audio'}.mp4`;
  return generateVideo(createProcessRunner(FFMPEG, FFPROBE), { ...options, output: path.join(FIXTURES, name) });
}

/** The small default: 320x180, 10 s, 30 fps, with audio. */
export const flat = (color = '336699', seconds = 10) => fixture({ kind: 'flat', color, width: 320, height: 180, seconds, fps: 30 });
export const natural = (seconds = 10) => fixture({ kind: 'natural', width: 320, height: 180, seconds, fps: 30 });

export function tempDir(label: string): string {
  const dir = path.join(TEST_ROOT, 'tmp', `${label}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
