// A real engine (SQLite file, media folders, ffmpeg) in a throwaway data dir, with a counting process runner, and the
// ways tests drive it: ingest and render through the engine's own jobs, or the local service.
import { rmSync } from 'node:fs';
import { inProcessJobQueue } from '../src/engine/app/job-runs.js';
import { LocalService } from '../src/engine/app/local-service.js';
import type { BandSupport } from '../src/engine/band/band-support.js';
import { mediaFile, mediaKeys } from '../src/engine/data-folder/layout.js';
import type { Deployment, Engine } from '../src/engine/engine.js';
import { runIngestJob } from '../src/engine/ingest/ingest-job.js';
import { type IngestRequest, recordVideo } from '../src/engine/ingest/register.js';
import { openEngine } from '../src/engine/open/open-engine.js';
import type { VideoRecord } from '../src/engine/state/state-store.js';
import { tempDir } from './fixtures.js';
import { type CountingRunner, countingRunner } from './tools.js';

export interface TestEngine extends Engine {
  runner: CountingRunner;
  dataDir: string;
  dispose(): Promise<void>;
}

export async function testEngine(
  options: { dataDir?: string; workers?: number; now?: () => number; deployment?: Deployment; database?: string; band?: BandSupport } = {},
): Promise<TestEngine> {
  const dataDir = options.dataDir ?? tempDir('engine');
  const runner = countingRunner();
  const engine = await openEngine({
    dataDir,
    workers: options.workers ?? 2,
    encode: { preset: 'veryfast', crf: 23 },
    runner,
    now: options.now,
    database: options.database,
    ...(options.deployment ? { deployment: options.deployment } : {}),
    ...(options.band ? { band: options.band } : {}),
  });
  return {
    ...engine,
    runner,
    dataDir,
    async dispose() {
      await engine.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A watermark's folder on disk (the engine's media folder). */
export function watermarkDir(engine: Engine, videoId: string, watermarkId: string): string {
  return mediaFile(engine.paths, mediaKeys.watermark(videoId, watermarkId));
}

/** A video's folder of working segments on disk. */
export function videoDir(engine: Engine, videoId: string): string {
  return mediaFile(engine.paths, mediaKeys.video(videoId));
}

/** A video's working segment on disk. */
export function workingSegment(engine: Engine, videoId: string, index: number): string {
  return mediaFile(engine.paths, mediaKeys.workingSegment(videoId, index));
}

/**
 * Registers a video and runs its ingest job to the end in this process (what `wmark ingest` does through its queue):
 * the INGESTED record, or the job's error.
 */
export async function ingestVideo(engine: Engine, request: IngestRequest): Promise<{ video: VideoRecord; created: boolean }> {
  const { video, created } = await recordVideo(engine, request);
  if (video.status === 'PENDING') await runIngestJob(engine, video.id);
  return { video: (await engine.store.getVideo(video.id))!, created };
}

/** The local service on a test engine, its jobs run in this process. */
export function testService(engine: Engine, options: { baseUrl?: string } = {}): LocalService {
  return new LocalService(engine, { queue: inProcessJobQueue(engine, { concurrency: 1 }), baseUrl: options.baseUrl ?? 'http://127.0.0.1:8080' });
}
