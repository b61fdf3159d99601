// Render-farm test parts: real working segments (made by the ingest's own ffmpeg plan), segment tasks that draw a
// line of text on them, spawned `wmark worker` processes, and per-frame checksums to compare renders.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ingestArgs } from '../src/core/plan/ingest-args.js';
import { framesPerSegment } from '../src/core/plan/segment-timing.js';
import { drawtextFilter } from '../src/core/plan/text-drawing.js';
import { parseSettings } from '../src/core/setting-schema.js';
import type { TextSetting } from '../src/core/setting-types.js';
import type { Deployment } from '../src/engine/engine.js';
import { LocalIngest } from '../src/engine/ingest/local-ingest.js';
import { FarmIngest } from '../src/farm/farm-ingest.js';
import { FarmRenderer } from '../src/farm/farm-renderer.js';
import type { TaskQueue } from '../src/farm/task-queue.js';
import { type SegmentTask, TASK_FONT_FILE } from '../src/farm/tasks/segment-task.js';
import { FolderMediaStore } from '../src/media/folder-store.js';
import type { MediaStore } from '../src/media/media-store.js';
import { VERSION } from '../src/version.js';
import { BIN, collected, type Spawned, wmarkEnv } from './cli-helpers.js';
import { flat, REPO, TEST_ROOT } from './fixtures.js';
import { startProcess } from './start-process.js';
import type { StopOptions } from './stop-process.js';
import { FFMPEG } from './tools.js';

const run = promisify(execFile);

const FPS = { num: 30, den: 1 };
export const GOP = framesPerSegment(FPS);
export const SIZE = { width: 320, height: 180 };

/** The 10 s flat fixture ingested into uniform closed-GOP segments, no lead (cached per machine): 3 files, 4 + 4 + 2 s. */
export async function workingSegments(): Promise<string[]> {
  const dir = path.join(TEST_ROOT, 'fixtures', 'cluster-segments-v1');
  const names = () =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => /^seg_\d{5}\.ts$/.test(f))
          .sort()
      : [];
  if (names().length === 3) return names().map((n) => path.join(dir, n));
  // Made in a private folder and renamed into place, so parallel test files never see half of it.
  const staging = `${dir}.${process.pid}.${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  const source = await flat('336699', 10);
  await run(FFMPEG, [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    ...ingestArgs({ source, outDir: staging, fps: FPS, ...SIZE, hasAudio: true, encode: { preset: 'veryfast', crf: 18 }, lead: false }),
  ]);
  const { rename, rm } = await import('node:fs/promises');
  await rename(staging, dir).catch(() => rm(staging, { recursive: true, force: true }));
  return names().map((n) => path.join(dir, n));
}

/** A task that draws `text` on the stored `input`, as serve would plan it (the font by its in-task name). */
export function textTask(input: string, output: string, text: string, extra: Partial<SegmentTask> = {}): SegmentTask {
  const parsed = parseSettings(
    [{ type: 'TEXT', content: text, x: 0.5, y: 0.5, align: 'CENTER', verticalAlign: 'MIDDLE', fontSize: 0.12, fontColor: 'FFFFFF', fontOpacity: 1 }],
    { apiVersion: '2.0' },
  );
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  const setting = parsed.value[0] as TextSetting;
  const filter = drawtextFilter({ setting, textFile: 'text_0.txt', fontFile: TASK_FONT_FILE, frameHeight: SIZE.height, timeOrigin: 0 });
  return {
    version: VERSION,
    input,
    output,
    filterScript: filter,
    textFiles: [{ name: 'text_0.txt', content: text }],
    encode: { preset: 'veryfast', crf: 23 },
    gop: GOP,
    hasAudio: true,
    ...extra,
  };
}

/** One checksum per decoded video frame: two renders match frame for frame when these lists are equal. */
export async function frameHashes(file: string): Promise<string[]> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-map', '0:v:0', '-f', 'framemd5', '-'], { maxBuffer: 16 * 1024 * 1024 });
  return stdout
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(',').pop()!.trim());
}

export interface SpawnedWorker extends Spawned {
  /** The id it printed once it took work. */
  id: string;
}

/** SIGKILLs the workers and serves a test spawned that still run, and waits until each has exited (after each test). */
export async function killSpawned(workers: SpawnedWorker[], serves: { stop(options?: Partial<StopOptions>): Promise<unknown> }[]): Promise<void> {
  for (const w of workers.splice(0)) {
    await w.stop({ signal: 'SIGKILL' });
    await w.done;
  }
  for (const s of serves.splice(0)) await s.stop({ signal: 'SIGKILL' });
}

/** Starts `wmark worker` and resolves once it printed its id (it takes tasks from then on). */
export async function spawnWorker(args: string[], env: Record<string, string | undefined>): Promise<SpawnedWorker> {
  const worker = startProcess({
    name: 'wmark worker',
    command: process.execPath,
    args: [BIN, '--json', 'worker', ...args],
    cwd: REPO,
    env: wmarkEnv(env),
    stdin: '',
    ready: { line: /^\{.*$/, what: 'its id (a JSON line on stdout)' },
    timeoutMs: 30_000,
    // Tests read its whole log.
    keep: Number.POSITIVE_INFINITY,
  });
  const [line] = await worker.ready;
  return { ...collected(worker), id: (JSON.parse(line!) as { worker: string }).worker };
}

/** Lines of an ffmpeg wrapper log that rendered (libx264) the scratch output of a task. */
export function renderLines(log: string): string[] {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('libx264') && l.includes('output.ts'))
    : [];
}

/**
 * An engine deployment for tests that put part of the work on a farm: segment renders on `queue` (always), ingest on
 * the farm too or in this process, and media in `media` (default: the data folder's media folder, which in-process
 * workers share).
 */
export function testFarmDeployment(queue: TaskQueue, url: string, options: { media?: MediaStore; ingestOnFarm?: boolean } = {}): Deployment {
  return async (parts) => {
    const folder = new FolderMediaStore(parts.paths.media);
    const media: MediaStore = options.media ?? folder;
    const renderer = await FarmRenderer.open({ queue, url, media, folder, fontFile: parts.tools.font.path, encode: parts.encode, now: parts.now });
    const ingest = options.ingestOnFarm ? new FarmIngest({ queue, store: media, encode: parts.encode, secret: parts.secret }) : new LocalIngest(parts, folder);
    // Watched as a farm's deployment watches them: the queue's Redis, and a bucket.
    return { media, renderer, ingest, dependencies: [queue.health, ...media.dependencies] };
  };
}
