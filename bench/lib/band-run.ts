// What every band suite does first and last: find the patched x264 (refusing to run without it), and work in a
// folder that is removed afterwards, or kept under bench/out with --keep.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import { OUT_DIR, type SuiteContext } from './suite.js';

export function bandX264(ctx: SuiteContext, suite: string): string {
  const x264 = locateBandX264(ctx.env);
  if (!x264) throw new Error(`the ${suite} suite needs the patched x264: run scripts/build-x264.sh (or set WMARK_X264)`);
  return x264;
}

/** Runs `work` in a fresh folder (bench/out/<kept> with --keep, kept afterwards; else a temporary one, removed). */
export async function inWorkFolder<T>(ctx: SuiteContext, kept: string, work: (dir: string) => Promise<T>): Promise<T> {
  await mkdir(OUT_DIR, { recursive: true });
  const dir = ctx.args.keep ? path.join(OUT_DIR, kept) : await mkdtemp(path.join(os.tmpdir(), `bench-${kept}-`));
  try {
    return await work(dir);
  } finally {
    if (!ctx.args.keep) await rm(dir, { recursive: true, force: true });
  }
}
