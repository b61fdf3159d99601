// An engine with ingest on the render farm, in this process: a private redis-server and an in-process worker on the
// engine's media folder. The engine itself runs no ffmpeg on the ingest; a transcode that fails on the worker fails
// the video with the worker's reason (its error code kept) and leaves nothing in the store.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testFarmDeployment } from '../../harness/cluster.js';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { natural } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { countingRunner, FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { WmarkError } from '../../src/core/errors.js';
import { runIngestJob } from '../../src/engine/ingest/ingest-job.js';
import { recordVideo } from '../../src/engine/ingest/register.js';
import { type RunningFarmWorker, startFarmWorker } from '../../src/farm/farm-worker.js';
import { TaskQueue } from '../../src/farm/task-queue.js';
import type { IngestTask } from '../../src/farm/tasks/ingest-task.js';
import { createProcessRunner, type ProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import { VERSION } from '../../src/version.js';

let redis: TestRedis;
let engine: TestEngine;
let queue: TaskQueue;
let store: FolderMediaStore;
let source: string;

beforeAll(async () => {
  [redis, source] = await Promise.all([startRedis(), natural(6)]);
  queue = await TaskQueue.open(redis.url, { pollMs: 500 });
  engine = await testEngine({ deployment: testFarmDeployment(queue, redis.url, { ingestOnFarm: true }) });
  store = new FolderMediaStore(engine.paths.media);
});
afterAll(async () => {
  await queue?.close();
  await engine?.dispose();
  await redis?.stop();
});

let worker: RunningFarmWorker | undefined;
afterEach(async () => {
  await worker?.close({ force: true });
  worker = undefined;
});

async function startWorker(runner: ProcessRunner): Promise<void> {
  worker = await startFarmWorker({ queueUrl: redis.url, store, runner, tools: { ffmpeg: FFMPEG, font: FONT }, threads: 1, lockMs: 3_000 });
}

describe('ingest on the render farm, in process', () => {
  it('the worker transcodes; the engine runs no ffmpeg on the ingest and records what the worker measured', async () => {
    const workerRunner = countingRunner(createProcessRunner(FFMPEG, FFPROBE));
    await startWorker(workerRunner);
    const { video } = await recordVideo(engine, { source, key: 'farm-in-process' });
    const before = engine.runner.calls.filter((c) => c.tool === 'ffmpeg').length;
    const done = await runIngestJob(engine, video.id);
    expect(done).toMatchObject({ status: 'INGESTED', timeOrigin: expect.any(Number) });
    // 6 s at 30 fps with lead segments: 0.5 + 0.5 + 1 + 2 + 2 s, exact to the frame.
    expect(done!.segments).toEqual([0.5, 0.5, 1, 2, 2]);
    expect(engine.runner.calls.filter((c) => c.tool === 'ffmpeg').length).toBe(before);
    expect(workerRunner.encodes()).toBe(1);
    expect(await store.list(`videos/${video.id}/`)).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => `videos/${video.id}/seg_0000${i}.ts`),
      `videos/${video.id}/segments.csv`,
    ]);
  });

  it('a worker of another version refuses an ingest task with both versions named; a malformed one is TASK_INVALID', async () => {
    await startWorker(createProcessRunner(FFMPEG, FFPROBE));
    const task: IngestTask = {
      kind: 'ingest',
      version: '0.0.1-elsewhere',
      source: 'videos/nowhere/source.mp4',
      outputPrefix: 'videos/nowhere',
      fps: { num: 30, den: 1 },
      width: 320,
      height: 180,
      hasAudio: true,
      encode: { preset: 'veryfast', crf: 15 },
      lead: false,
    };
    const refused = await queue.enqueue(task).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'WORKER_VERSION_MISMATCH',
      message: expect.stringContaining(`runs wmark ${VERSION} and refuses a task planned by wmark 0.0.1-elsewhere`),
    });
    const malformed = await queue.enqueue({ ...task, version: VERSION, outputPrefix: 'videos/../../etc' }).catch((error: unknown) => error);
    expect(malformed).toMatchObject({ code: 'TASK_INVALID', message: expect.stringContaining('ingest task outputPrefix: not a media key') });
  });

  it('a transcode failing on the worker fails the video with its reason and code, and leaves nothing in the store', async () => {
    const real = createProcessRunner(FFMPEG, FFPROBE);
    const broken: ProcessRunner = {
      ffmpeg: (args, options) =>
        args.includes('-segment_list')
          ? Promise.reject(new WmarkError('FFMPEG_FAILED', 'ffmpeg exited with code 1: No space left on device'))
          : real.ffmpeg(args, options),
      ffprobe: (args, options) => real.ffprobe(args, options),
      x264: (bin, args, options) => real.x264(bin, args, options),
    };
    await startWorker(broken);
    const { video } = await recordVideo(engine, { source, key: 'farm-broken' });
    const failure = await runIngestJob(engine, video.id).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WmarkError);
    expect(failure).toMatchObject({ code: 'FFMPEG_FAILED', message: expect.stringContaining('No space left on device') });
    expect(await engine.store.getVideo(video.id)).toMatchObject({ status: 'FAILED_ENCODING', error: expect.stringContaining('No space left on device') });
    expect(await store.list(`videos/${video.id}/`)).toEqual([]);
  });
});
