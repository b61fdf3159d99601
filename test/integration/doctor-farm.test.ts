// `wmark doctor --queue URL --media URL` against a private redis-server and an S3-protocol server (s3rver): Redis
// answers and its workers are listed; the media store takes a write, gives it back and lets it be deleted.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli.js';
import { type Sandbox, sandbox } from '../../harness/cli-helpers.js';
import { tempDir } from '../../harness/fixtures.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { startS3, type TestS3 } from '../../harness/s3.js';
import { freePort } from '../../harness/serve-helpers.js';
import { FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { type RunningFarmWorker, startFarmWorker } from '../../src/farm/farm-worker.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import { VERSION } from '../../src/version.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  required: boolean;
}

let redis: TestRedis;
let s3: TestS3;
let box: Sandbox;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  [redis, s3] = await Promise.all([startRedis(), startS3({ buckets: ['wmark-doctor'] })]);
  box = sandbox('doctor-farm');
  // The AWS SDK reads credentials from the process' environment (the in-process CLI's env is not it).
  for (const [k, v] of Object.entries(s3.env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await Promise.all([redis?.stop(), s3?.stop()]);
  box?.dispose();
});

let worker: RunningFarmWorker | undefined;
afterEach(async () => {
  await worker?.close({ force: true });
  worker = undefined;
});

async function doctor(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(['--json', 'doctor', ...args], { env: { WMARK_HOME: box.dataDir, WMARK_CONFIG_DIR: box.configDir, ...env } });
  const report = r.json<{ ok: boolean; checks: Check[] }>();
  return { ...r, report, check: (name: string) => report.checks.find((c) => c.name === name) };
}

describe('wmark doctor --queue --media', () => {
  it('checks Redis, lists no workers yet (a warning, not a failure), and writes to a shared folder', async () => {
    const media = tempDir('doctor-media');
    const r = await doctor(['--queue', redis.url, '--media', media]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.report.ok).toBe(true);
    expect(r.check('queue')).toEqual({
      name: 'queue',
      ok: true,
      required: true,
      detail: expect.stringMatching(/^redis:\/\/127\.0\.0\.1:\d+ answers \(Redis \d+\.\d+/),
    });
    expect(r.check('workers')).toMatchObject({ ok: false, required: false, detail: expect.stringContaining('none connected') });
    expect(r.check('media store')).toEqual({ name: 'media store', ok: true, required: true, detail: `${media} (write, read, list and delete work)` });
    // The probe cleans up after itself.
    expect(await new FolderMediaStore(media).list('')).toEqual([]);
  });

  it('lists the connected workers; WMARK_QUEUE_URL works as --queue', async () => {
    worker = await startFarmWorker({
      queueUrl: redis.url,
      store: new FolderMediaStore(tempDir('doctor-worker')),
      runner: createProcessRunner(FFMPEG, FFPROBE),
      tools: { ffmpeg: FFMPEG, font: FONT },
    });
    const r = await doctor([], { WMARK_QUEUE_URL: redis.url });
    expect(r.code).toBe(0);
    expect(r.check('workers')).toMatchObject({ ok: true, detail: expect.stringContaining(`1 connected: ${worker.id} (wmark ${VERSION})`) });
    expect(r.check('media store')).toBeUndefined();
  });

  it("flags a worker of another version (it refuses this version's tasks), as a warning", async () => {
    worker = await startFarmWorker({
      queueUrl: redis.url,
      store: new FolderMediaStore(tempDir('doctor-worker')),
      runner: createProcessRunner(FFMPEG, FFPROBE),
      tools: { ffmpeg: FFMPEG, font: FONT },
      version: '0.0.1-old',
    });
    const r = await doctor(['--queue', redis.url]);
    expect(r.code).toBe(0);
    expect(r.check('workers')).toMatchObject({ ok: false, required: false, detail: expect.stringContaining(`${worker.id} (wmark 0.0.1-old)`) });
    expect(r.check('workers')!.detail).toContain(`1 run(s) another version than this wmark ${VERSION} and refuse its tasks`);
  });

  it('an unreachable Redis fails the run (exit 6), without showing its password', async () => {
    const port = await freePort();
    const r = await doctor(['--queue', `redis://:hunter2@127.0.0.1:${port}`]);
    expect(r.code).toBe(6);
    expect(r.check('queue')).toMatchObject({
      ok: false,
      required: true,
      detail: expect.stringContaining(`cannot reach Redis at redis://:***@127.0.0.1:${port}`),
    });
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });

  it('checks an S3 bucket through the same SDK calls, and names the step that fails', async () => {
    const good = await doctor(['--media', 's3://wmark-doctor/farm', '--s3-endpoint', s3.endpoint]);
    expect(good.code, good.stdout).toBe(0);
    expect(good.check('media store')).toMatchObject({ ok: true, detail: 's3://wmark-doctor/farm/ (write, read, list and delete work)' });

    const missing = await doctor(['--media', 's3://no-such-bucket/farm', '--s3-endpoint', s3.endpoint]);
    expect(missing.code).toBe(6);
    expect(missing.check('media store')).toMatchObject({ ok: false, detail: expect.stringContaining('s3://no-such-bucket/farm/: cannot write: ') });

    // Nothing listens there: the reason, not a "send it again shortly" meant for API clients.
    const away = await doctor(['--media', 's3://wmark-doctor/farm', '--s3-endpoint', 'http://127.0.0.1:9']);
    expect(away.code).toBe(6);
    expect(away.check('media store')).toMatchObject({ ok: false, detail: expect.stringMatching(/cannot write: cannot reach the media store .*ECONNREFUSED/) });

    const bad = await doctor(['--media', 'relative/folder']);
    expect(bad.code).toBe(6);
    expect(bad.check('media store')).toMatchObject({ ok: false });
  });
});
