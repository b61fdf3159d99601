// `wmark worker` as real processes against a private redis-server and an S3-protocol server (s3rver) on loopback:
// competing workers render every segment exactly once between them; a worker SIGKILLed mid-segment has its task
// finished by another, and the result decodes and matches a single-machine render frame for frame.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { type Sandbox, sandbox, until } from '../../harness/cli-helpers.js';
import { frameHashes, killSpawned, renderLines, type SpawnedWorker, spawnWorker, textTask, workingSegments } from '../../harness/cluster.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { countingRunner, FFMPEG, FONT } from '../../harness/tools.js';
import { TaskQueue } from '../../src/farm/task-queue.js';
import { runSegmentTask } from '../../src/farm/tasks/segment-task.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import type { MediaStore } from '../../src/media/media-store.js';
import { openMediaStore } from '../../src/media/open-media-store.js';
import { VERSION } from '../../src/version.js';
import { decodesCleanly } from '../helpers/media.js';

const BUCKET = 'wmark-farm';
const MEDIA = `s3://${BUCKET}/e2e`;

let redis: TestRedis;
let s3: TestS3;
let store: MediaStore;
let box: Sandbox;
let queue: TaskQueue;

beforeAll(async () => {
  let segments: string[];
  [redis, s3, segments] = await Promise.all([startRedis(), startS3({ buckets: [BUCKET] }), workingSegments()]);
  store = openMediaStore(MEDIA, { endpoint: s3.endpoint, credentials: s3.credentials });
  for (const [i, file] of segments.entries()) await store.putFile(`videos/v1/seg_0000${i}.ts`, file);
  box = sandbox('farm');
  queue = await TaskQueue.open(redis.url, { pollMs: 500 });
});
afterAll(async () => {
  await queue?.close();
  store?.close();
  await Promise.all([redis?.stop(), s3?.stop()]);
  box?.dispose();
});

const workers: SpawnedWorker[] = [];
afterEach(() => killSpawned(workers, []));

/** An ffmpeg stand-in that logs each call (with its pid) and sleeps before each segment render, then runs the real one. */
function wrapper(name: string, sleepSeconds: number): { ffmpeg: string; log: string } {
  const file = path.join(box.root, `${name}.sh`);
  const log = path.join(box.root, `${name}.log`);
  writeFileSync(
    file,
    ['#!/bin/sh', `printf '%s %s\\n' "$$" "$*" >> '${log}'`, `case "$*" in *output.ts*) sleep ${sleepSeconds};; esac`, `exec '${FFMPEG}' "$@"`, ''].join('\n'),
  );
  chmodSync(file, 0o755);
  return { ffmpeg: file, log };
}

/**
 * Every worker here notices a dead worker's task after 2 s instead of 30. All of them: the stalled-job check is shared
 * through Redis, and a worker that ran it holds it off for its own interval, so one slow-checking worker slows all.
 */
async function startWorker(ffmpeg: string): Promise<SpawnedWorker> {
  const w = await spawnWorker(['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint, '--threads', '1', '--lock-timeout', '2'], {
    ...s3.env,
    WMARK_FFMPEG: ffmpeg,
    WMARK_HOME: box.dataDir,
    WMARK_CONFIG_DIR: box.configDir,
  });
  workers.push(w);
  return w;
}

/** What one machine renders for the task: the reference a farm's output must equal frame for frame. */
async function singleMachineRender(task: ReturnType<typeof textTask>): Promise<string[]> {
  const local = new FolderMediaStore(path.join(box.root, 'reference'));
  await local.putFile(task.input, path.join(box.root, 'ref-input.ts')).catch(async () => {
    await store.getFile(task.input, path.join(box.root, 'ref-input.ts'));
    await local.putFile(task.input, path.join(box.root, 'ref-input.ts'));
  });
  await runSegmentTask(task, local, countingRunner(), { fontFile: FONT, threads: 1, now: Date.now });
  const file = path.join(box.root, 'reference', task.output);
  return frameHashes(file);
}

async function fetched(key: string): Promise<string> {
  const file = path.join(box.root, `${key.replace(/\//g, '_')}`);
  await store.getFile(key, file);
  return file;
}

describe('wmark worker', () => {
  it('three competing workers render each of 8 segments exactly once, and each renders some', async () => {
    const logged = wrapper('compete', 0.4);
    const started = await Promise.all([startWorker(logged.ffmpeg), startWorker(logged.ffmpeg), startWorker(logged.ffmpeg)]);
    // What serve will show as the connected workers.
    expect(await queue.workers()).toEqual(started.map((w) => ({ id: w.id, version: VERSION })).sort((a, b) => a.id.localeCompare(b.id)));
    const tasks = Array.from({ length: 8 }, (_, i) => textTask(`videos/v1/seg_0000${i % 3}.ts`, `watermarks/c${i}/seg_0000${i % 3}.ts`, `viewer ${i}`));
    const results = await Promise.all(tasks.map((t) => queue.enqueue(t)));

    expect(results.map((r) => r.output)).toEqual(tasks.map((t) => t.output));
    expect(results.every((r) => r.rendered)).toBe(true);
    // Eight outputs, eight encodes in all three workers' ffmpeg calls: none rendered twice.
    expect(renderLines(logged.log)).toHaveLength(8);
    const byWorker = new Map(started.map((w) => [w.id, results.filter((r) => r.worker === w.id).length]));
    expect(
      [...byWorker.values()].every((count) => count > 0),
      JSON.stringify([...byWorker]),
    ).toBe(true);
    expect([...byWorker.values()].reduce((a, b) => a + b, 0)).toBe(8);
    for (const t of tasks.slice(0, 3)) await decodesCleanly(await fetched(t.output));
  });

  it('a worker SIGKILLed mid-segment: another worker finishes the segment, which decodes and matches a one-machine render', async () => {
    const slow = wrapper('killed', 10);
    const doomed = await startWorker(slow.ffmpeg);
    const task = textTask('videos/v1/seg_00001.ts', 'watermarks/k1/seg_00001.ts', 'leaked by mallory');
    const pending = queue.enqueue(task);
    // Mid-segment: its ffmpeg has started on the task.
    await until(() => renderLines(slow.log).length === 1, 'the first worker to start rendering', 30_000);
    doomed.child.kill('SIGKILL');
    expect((await doomed.done).signal).toBe('SIGKILL');
    expect(await store.exists(task.output)).toBe(false);

    const fine = wrapper('rescuer', 0);
    const rescuer = await startWorker(fine.ffmpeg);
    const result = await pending;
    expect(result).toMatchObject({ output: task.output, rendered: true, worker: rescuer.id });
    expect(renderLines(fine.log)).toHaveLength(1);

    const file = await fetched(task.output);
    await decodesCleanly(file);
    const hashes = await frameHashes(file);
    expect(hashes).toHaveLength(120);
    expect(hashes).toEqual(await singleMachineRender(task));
  });

  it('stops on SIGTERM after the segment in hand, and exits 0', async () => {
    const w = await startWorker(wrapper('term', 0).ffmpeg);
    w.child.kill('SIGTERM');
    const done = await w.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/stopping/);
    // The AWS SDK's Node 22 notice is not the user's to act on (wmark pins the SDK).
    expect(done.stderr).not.toMatch(/Warning/);
  });
});

describe('wmark worker refuses to start', () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(['--json', 'worker', ...args], { env: { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir, ...s3.env, ...env } });

  it('without a queue or a media store, naming the flag and the env var (exit 2)', async () => {
    const r = await cli(['--media', MEDIA]);
    expect(r.code).toBe(2);
    expect(r.json().error).toMatchObject({ code: 'BAD_FLAG', message: expect.stringContaining('--queue redis://HOST:PORT or set WMARK_QUEUE_URL') });
    const m = await cli(['--queue', redis.url]);
    expect(m.json().error.message).toContain('--media s3://BUCKET/PREFIX');
    expect((await cli(['--queue', redis.url, '--media', MEDIA, '--concurrency', '0'])).json().error.message).toContain('--concurrency takes 1 to 64');
    expect((await cli(['--queue', 'localhost:6379', '--media', MEDIA])).json().error.code).toBe('BAD_QUEUE_URL');
    expect((await cli(['--queue', redis.url, '--media', 'relative/dir'])).json().error.code).toBe('BAD_MEDIA_URL');
  });

  it('takes the queue from queue.url in the config, as serve does', async () => {
    const cwd = path.join(box.root, 'with-config');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(path.join(cwd, '.wmarkrc.json'), JSON.stringify({ queue: { url: 'redis://127.0.0.1:9' } }));
    const r = await runCli(['--json', 'worker', '--media', MEDIA, '--s3-endpoint', s3.endpoint], {
      cwd,
      env: { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir, ...s3.env },
    });
    expect(r.code).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'QUEUE_UNREACHABLE', message: expect.stringContaining('redis://127.0.0.1:9') });
  });

  it('when Redis cannot be reached (exit 5)', async () => {
    const r = await cli(['--queue', 'redis://127.0.0.1:9', '--media', MEDIA, '--s3-endpoint', s3.endpoint]);
    expect(r.code).toBe(5);
    expect(r.json().error).toMatchObject({ code: 'QUEUE_UNREACHABLE', message: expect.stringContaining('redis://127.0.0.1:9') });
  });

  it('without a usable ffmpeg (exit 6), saying which', async () => {
    const r = await cli(['--queue', redis.url, '--media', MEDIA, '--s3-endpoint', s3.endpoint], { WMARK_FFMPEG: '/nonexistent/ffmpeg' });
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({ code: 'WORKER_UNUSABLE', message: expect.stringContaining('/nonexistent/ffmpeg') });
  });
});
