// The built-in sample: a generated clip (the demo's dusk landscape with a tone), cached in the data dir.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { type SamplePlan, sampleVideoArgs } from '../../core/plan/sample-clip-args.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import type { DataLayout } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';

export async function generateVideo(runner: ProcessRunner, plan: SamplePlan, onProgress?: (f: number) => void): Promise<string> {
  if (existsSync(plan.output)) return plan.output;
  await mkdir(path.dirname(plan.output), { recursive: true });
  const part = `${plan.output}.${process.pid}.part.mp4`;
  try {
    await runner.ffmpeg(sampleVideoArgs({ ...plan, output: part }), { durationSeconds: plan.seconds, onProgress });
    await rename(part, plan.output);
  } finally {
    await rm(part, { force: true });
  }
  return plan.output;
}

export const SAMPLE = { width: 640, height: 360, seconds: 20, fps: 30, kind: 'scene' } as const;

function samplePath(paths: Pick<DataLayout, 'samples'>): string {
  return path.resolve(paths.samples, `sample-${SAMPLE.kind}-${SAMPLE.width}x${SAMPLE.height}-${SAMPLE.seconds}s.mp4`);
}

/** The demo's sample on an engine's data folder: where it is, and how to make it there once (a no-op once made). */
export function demoSample(engine: Engine): { path: string; make: (onProgress?: (f: number) => void) => Promise<string> } {
  const output = samplePath(engine.paths);
  return { path: output, make: (onProgress) => generateVideo(engine.runner, { output, ...SAMPLE }, onProgress) };
}
