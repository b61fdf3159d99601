// A real engine (SQLite file, media folders, ffmpeg) in a throwaway data dir, with a counting process runner, and the
// ways tests drive it: ingest and render through the engine's own jobs, or the local service.
import { rmSync } from 'node:fs';
import { openEngine, type Engine } from '../../src/engine/engine.js';
import { registerVideo, runIngestJob, type IngestRequest } from '../../src/engine/ingest.js';
import { InProcessJobQueue } from '../../src/engine/job-queue.js';
import { LocalService } from '../../src/engine/local-service.js';
import type { VideoRecord } from '../../src/engine/state-store.js';
import { tempDir } from './fixtures.js';
import { countingRunner, type CountingRunner } from './tools.js';

export interface TestEngine extends Engine {
  runner: CountingRunner;
  dataDir: string;
  dispose(): void;
}

export function testEngine(options: { dataDir?: string; workers?: number; now?: () => number } = {}): TestEngine {
  const dataDir = options.dataDir ?? tempDir('engine');
  const runner = countingRunner();
  const engine = openEngine({ dataDir, workers: options.workers ?? 2, encode: { preset: 'veryfast', crf: 23 }, runner, now: options.now });
  return Object.assign(engine, {
    runner,
    dataDir,
    dispose() {
      engine.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/**
 * Registers a video and runs its ingest job to the end in this process (what `wmark ingest` does through its queue):
 * the INGESTED record, or the job's error.
 */
export async function ingestVideo(engine: Engine, request: IngestRequest): Promise<{ video: VideoRecord; created: boolean }> {
  const { video, created } = await registerVideo(engine, request);
  if (video.status === 'PENDING') await runIngestJob(engine, video.id);
  return { video: engine.store.getVideo(video.id)!, created };
}

/** The local service on a test engine, its jobs run in this process. */
export function testService(engine: Engine, options: { baseUrl?: string } = {}): LocalService {
  return new LocalService(engine, { queue: new InProcessJobQueue(engine, { concurrency: 1 }), baseUrl: options.baseUrl ?? 'http://127.0.0.1:8080' });
}
