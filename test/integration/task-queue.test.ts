// Segment tasks through real parts, in this process: media in an S3-protocol server (s3rver), the queue in a private
// redis-server, renders by the bundled ffmpeg. What a worker renders must match what serve renders locally, frame for
// frame; what it must not render (another version, another font, no usable ffmpeg) is refused with the reason.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { frameHashes, GOP, SIZE, textTask, workingSegments } from '../../harness/cluster.js';
import { tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { countingRunner, FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { segmentRenderArgs } from '../../src/core/plan/render-args.js';
import { drawtextFilter } from '../../src/core/plan/text-drawing.js';
import { type RunningFarmWorker, startFarmWorker } from '../../src/farm/farm-worker.js';
import { TaskQueue } from '../../src/farm/task-queue.js';
import { fontSha256, runSegmentTask } from '../../src/farm/tasks/segment-task.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { decodesCleanly } from '../helpers/media.js';

let redis: TestRedis;
let s3: TestS3;
let store: MediaStore;
let work: string;
let segments: string[];
const tools = { ffmpeg: FFMPEG, font: FONT };

beforeAll(async () => {
  [redis, s3, segments] = await Promise.all([startRedis(), startS3({ buckets: ['wmark-farm'] }), workingSegments()]);
  store = openMediaStore('s3://wmark-farm/farm', { endpoint: s3.endpoint, credentials: s3.credentials });
  for (const [i, file] of segments.entries()) await store.putFile(`videos/v1/seg_0000${i}.ts`, file);
  work = tempDir('task-queue');
});
afterAll(async () => {
  store?.close();
  await Promise.all([redis?.stop(), s3?.stop()]);
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function queue(pollMs = 500): Promise<TaskQueue> {
  const q = await TaskQueue.open(redis.url, { pollMs });
  open.push(q);
  return q;
}

async function worker(options: Partial<Parameters<typeof startFarmWorker>[0]> = {}): Promise<RunningFarmWorker> {
  const w = await startFarmWorker({ queueUrl: redis.url, store, runner: createProcessRunner(FFMPEG, FFPROBE), tools, threads: 1, lockMs: 3_000, ...options });
  open.push(w);
  return w;
}

async function fetched(key: string): Promise<string> {
  const file = path.join(work, `${key.replace(/\//g, '_')}-${Date.now()}`);
  await store.getFile(key, file);
  return file;
}

let n = 0;
const output = () => `watermarks/q${n++}/seg_00000.ts`;

describe('runSegmentTask', () => {
  it('renders from the store into the store, frame for frame what a local render of the same plan gives', async () => {
    const runner = countingRunner();
    const task = textTask('videos/v1/seg_00000.ts', output(), 'for alice@example.com');
    const result = await runSegmentTask(task, store, runner, { fontFile: FONT, threads: 1, now: Date.now });
    expect(result).toMatchObject({ output: task.output, rendered: true });
    expect(runner.encodes()).toBe(1);

    // The same segment rendered as the engine does on one machine: absolute font path, files in a work folder.
    const local = path.join(work, 'local-render');
    mkdirSync(local, { recursive: true });
    writeFileSync(path.join(local, 'text_0.txt'), 'for alice@example.com');
    const setting = {
      type: 'TEXT',
      content: 'for alice@example.com',
      x: 0.5,
      y: 0.5,
      align: 'CENTER',
      verticalAlign: 'MIDDLE',
      fontSize: 0.12,
      fontColor: 'FFFFFF',
      fontOpacity: 1,
    };
    const { parseSettings } = await import('../../src/core/setting-schema.js');
    const parsed = parseSettings([setting], { apiVersion: '2.0' });
    if (!parsed.ok) throw new Error(parsed.issues.join());
    writeFileSync(
      path.join(local, 'filter.txt'),
      drawtextFilter({ setting: parsed.value[0] as never, textFile: 'text_0.txt', fontFile: FONT, frameHeight: SIZE.height, timeOrigin: 0 }),
    );
    await createProcessRunner(FFMPEG, FFPROBE).ffmpeg(
      segmentRenderArgs({ input: segments[0]!, output: 'out.ts', filterScript: 'filter.txt', gop: GOP, threads: 1, encode: task.encode, hasAudio: true }),
      { cwd: local },
    );
    const remote = await fetched(task.output);
    await decodesCleanly(remote);
    const [a, b] = await Promise.all([frameHashes(remote), frameHashes(path.join(local, 'out.ts'))]);
    expect(a).toHaveLength(120);
    expect(a).toEqual(b);
  });

  it('does not redo an output that is already in the store, and times each run by the clock it is given', async () => {
    const runner = countingRunner();
    const task = textTask('videos/v1/seg_00001.ts', output(), 'bob');
    // A clock that moves 250 ms at each reading: a run reads it when it starts and when it ends.
    let t = 0;
    const now = () => (t += 250);
    expect(await runSegmentTask(task, store, runner, { fontFile: FONT, now })).toMatchObject({ rendered: true, ms: 250 });
    expect(await runSegmentTask(task, store, runner, { fontFile: FONT, now })).toMatchObject({ rendered: false, ms: 250 });
    expect(runner.encodes()).toBe(1);
  });

  it('uploads a segment it made again when its upload failed, rather than render it again', async () => {
    const scratch = tempDir('unsent');
    const counting = countingRunner();
    // The bucket goes away once the encode is done: the segment is made, its upload fails.
    const runner = {
      ...counting,
      ffmpeg: async (...args: Parameters<typeof counting.ffmpeg>) => {
        const result = await counting.ffmpeg(...args);
        await s3.halt();
        return result;
      },
    };
    const task = textTask('videos/v1/seg_00002.ts', output(), 'carol');
    try {
      await expect(runSegmentTask(task, store, runner, { fontFile: FONT, tmpDir: scratch, now: Date.now })).rejects.toBeDefined();
    } finally {
      await s3.restart();
      // The store was marked down by the failed upload: its probe notices the return.
      await waitFor(async () => (store.dependencies.every((d) => d.status().up) ? true : undefined), 'the store to be back', 30_000, 50);
    }
    expect(await store.exists(task.output)).toBe(false);
    const again = await runSegmentTask(task, store, counting, { fontFile: FONT, tmpDir: scratch, now: Date.now });
    expect(again).toMatchObject({ output: task.output, rendered: false });
    expect(counting.encodes()).toBe(1);
    await decodesCleanly(await fetched(task.output));
    // Stored once, the kept file is gone.
    expect(readdirSync(path.join(scratch, 'wmark-unsent'))).toEqual([]);
  });

  it('names the missing input', async () => {
    const task = textTask('videos/v9/seg_00000.ts', output(), 'x');
    await expect(runSegmentTask(task, store, countingRunner(), { fontFile: FONT, now: Date.now })).rejects.toMatchObject({
      code: 'MEDIA_NOT_FOUND',
      message: expect.stringContaining('videos/v9/seg_00000.ts'),
    });
    expect(await store.exists(task.output)).toBe(false);
  });
});

describe('the queue with workers', () => {
  it('hands a task to a worker and resolves with its result once the output is stored', async () => {
    const w = await worker();
    const q = await queue();
    const task = textTask('videos/v1/seg_00002.ts', output(), 'carol');
    const result = await q.enqueue(task);
    expect(result).toMatchObject({ output: task.output, rendered: true, worker: w.id });
    const file = await fetched(task.output);
    await decodesCleanly(file);
    expect(await frameHashes(file)).toHaveLength(60);
  });

  it('runs identical concurrent requests for one output once', async () => {
    const runner = countingRunner();
    await worker({ runner, concurrency: 2 });
    const q = await queue();
    const task = textTask('videos/v1/seg_00000.ts', output(), 'dave');
    const results = await Promise.all([q.enqueue(task), q.enqueue(task), q.enqueue({ ...task })]);
    expect(results.map((r) => r.output)).toEqual([task.output, task.output, task.output]);
    expect(runner.encodes()).toBe(1);
  });

  it('refuses a task planned by another wmark version, with both versions in the reason; a right worker takes it when asked again', async () => {
    const stale = await worker({ version: '0.0.1-old' });
    const q = await queue();
    const task = textTask('videos/v1/seg_00000.ts', output(), 'erin');
    const error = (await q.enqueue(task).then(
      () => ({}),
      (e: unknown) => e,
    )) as { code: string; message: string; hint: string };
    expect(error).toMatchObject({ code: 'WORKER_VERSION_MISMATCH' });
    expect(error.message).toContain(`runs wmark 0.0.1-old and refuses a task planned by wmark ${task.version}`);
    expect(error.message).toContain(stale.id);
    expect(error.hint).toMatch(/same wmark version/);
    expect(await store.exists(task.output)).toBe(false);

    await stale.close();
    const good = await worker();
    expect(await q.enqueue(task)).toMatchObject({ rendered: true, worker: good.id });
  });

  it('a farm mid-upgrade: a task a worker of another version refuses goes to a worker of the right version', async () => {
    const inner = createProcessRunner(FFMPEG, FFPROBE);
    // The right worker is slow, so the stale one, idle, takes tasks first.
    const slow = {
      ...inner,
      ffmpeg: async (...args: Parameters<typeof inner.ffmpeg>) => {
        await new Promise((r) => setTimeout(r, 400));
        return inner.ffmpeg(...args);
      },
    };
    const good = await worker({ runner: slow, concurrency: 1 });
    const staleLog: string[] = [];
    const stale = await worker({ version: '0.0.1-old', log: (line) => staleLog.push(line) });
    const q = await queue();
    const tasks = ['grace', 'hank', 'ivy', 'jack'].map((name) => textTask('videos/v1/seg_00002.ts', output(), name));
    const results = await Promise.all(tasks.map((t) => q.enqueue(t)));
    expect(results.map((r) => r.worker)).toEqual(tasks.map(() => good.id));
    expect(
      staleLog.some((l) => l.startsWith('passed ')),
      staleLog.join('\n'),
    ).toBe(true);
    expect(stale.id).not.toBe(good.id);
  });

  it('refuses a task laid out with another font', async () => {
    await worker();
    const q = await queue();
    const ours = textTask('videos/v1/seg_00000.ts', output(), 'frank', { fontSha256: await fontSha256(FONT) });
    expect(await q.enqueue(ours)).toMatchObject({ rendered: true });
    const theirs = textTask('videos/v1/seg_00000.ts', output(), 'frank', { fontSha256: 'ab'.repeat(32) });
    await expect(q.enqueue(theirs)).rejects.toMatchObject({ code: 'WORKER_FONT_MISMATCH', message: expect.stringContaining(FONT) });
  });

  it('a worker without a usable ffmpeg or font refuses to start, saying what is wrong', async () => {
    const missing = '/nonexistent/ffmpeg';
    await expect(worker({ runner: createProcessRunner(missing, FFPROBE), tools: { ffmpeg: missing, font: FONT } })).rejects.toMatchObject({
      code: 'WORKER_UNUSABLE',
      message: expect.stringContaining(`ffmpeg at ${missing} cannot be run`),
    });
    const notAFont = path.join(work, 'not-a-font.ttf');
    writeFileSync(notAFont, 'hello');
    await expect(worker({ tools: { ffmpeg: FFMPEG, font: notAFont } })).rejects.toMatchObject({
      code: 'WORKER_UNUSABLE',
      message: expect.stringContaining(`the font ${notAFont} is not a TrueType/OpenType font`),
    });
    await expect(worker({ tools: { ffmpeg: FFMPEG, font: path.join(work, 'nope.ttf') } })).rejects.toMatchObject({
      code: 'WORKER_UNUSABLE',
      message: expect.stringContaining('cannot be read'),
    });
  });

  it('reports an unreachable Redis as QUEUE_UNREACHABLE, quickly', async () => {
    const started = Date.now();
    await expect(TaskQueue.open('redis://127.0.0.1:9', { connectTimeoutMs: 1_500 })).rejects.toMatchObject({
      code: 'QUEUE_UNREACHABLE',
      message: expect.stringContaining('redis://127.0.0.1:9'),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('survives Redis restarting empty while a task waits: the caller adds it again on reconnect and a worker renders it', async () => {
    // No polling to fall back on: the reconnect alone must bring the task back.
    const q = await queue(600_000);
    const task = textTask('videos/v1/seg_00001.ts', output(), 'grace');
    const pending = q.enqueue(task);
    // Nobody takes it yet; then Redis loses everything.
    await new Promise((r) => setTimeout(r, 300));
    await redis.restart();
    const w = await worker();
    expect(await pending).toMatchObject({ output: task.output, rendered: true, worker: w.id });
  });

  it('a running worker keeps taking tasks after Redis restarted', async () => {
    const w = await worker();
    const q = await queue();
    expect(await q.enqueue(textTask('videos/v1/seg_00002.ts', output(), 'heidi'))).toMatchObject({ worker: w.id });
    await redis.restart();
    expect(await q.enqueue(textTask('videos/v1/seg_00002.ts', output(), 'ivan'))).toMatchObject({ rendered: true, worker: w.id });
  });

  it('drops a queued task that no worker took yet (its watermark was deleted): whoever waits hears CANCELLED, and it is never rendered', async () => {
    const q = await queue();
    const [dropped, kept] = ['mallory', 'nina'].map((name) => textTask('videos/v1/seg_00002.ts', output(), name));
    const droppedResult = q.enqueue(dropped!).then(
      () => 'rendered',
      (error: { code?: string }) => error.code,
    );
    const keptResult = q.enqueue(kept!);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await q.discard([dropped!.output, 'watermarks/none/none/seg_00000.ts']);
    expect(await droppedResult).toBe('CANCELLED');
    await worker({ concurrency: 2 });
    expect(await keptResult).toMatchObject({ output: kept!.output, rendered: true });
    expect(await store.exists(kept!.output)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await store.exists(dropped!.output)).toBe(false);
    expect((await q.counts()).waiting + (await q.counts()).prioritized).toBe(0);
  });

  it('asked again more urgently, by this serve or another, a queued task moves ahead of the others', async () => {
    const q = await queue();
    const other = await queue();
    const tasks = ['judy', 'kim', 'leo'].map((name) => textTask('videos/v1/seg_00002.ts', output(), name));
    // Queued as full renders while no worker runs; then a player waits for the last one.
    const background = tasks.map((t) => q.enqueue(t, { priority: 3 }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const urgent = other.enqueue(tasks[2]!, { priority: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const order: string[] = [];
    await worker({ concurrency: 1, log: (line) => void (line.startsWith('rendered ') && order.push(line.split(' ')[1]!)) });
    await Promise.all([...background, urgent]);
    expect(order[0]).toBe(tasks[2]!.output);
    expect(order).toHaveLength(3);
  });
});
