// Engine side of `ingest --replace` and `watermark rm`: refused while a process works on what would be removed; rows,
// jobs and files all go otherwise.
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ingestVideo, type TestEngine, testEngine, testService, watermarkDir } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { parseWatermarkOrder } from '../../src/core/api-requests.js';
import { recordVideo } from '../../src/engine/ingest/register.js';
import { jobId } from '../../src/engine/jobs/job-lease.js';

let engine: TestEngine;
beforeEach(async () => {
  engine = await testEngine();
});
afterEach(async () => await engine.dispose());

it('replace and rm are refused while a live job holds the watermark; both succeed once it is over', async () => {
  const [a, b] = await Promise.all([flat('336699', 4), flat('993366', 4)]);
  const { video } = await ingestVideo(engine, { source: a, key: 'k' });
  const service = testService(engine);
  const { resource } = await service.watermarks.request(
    parseWatermarkOrder({ key: 'k', containers: ['m3u8'], settings: [{ content: 'for alice' }] }, { api: '2.0', nowMs: engine.now() }),
  );
  await service.queue.close();
  const id = resource.id!;
  // Another process renders it: a live lease on its job.
  await engine.store.ensureJob('watermark', id, engine.now());
  await engine.store.resetJob(jobId('watermark', id), engine.now());
  expect(await engine.store.acquireJob(jobId('watermark', id), 'someone-else', engine.now(), 20_000)).toBe(true);

  await expect(recordVideo(engine, { source: b, key: 'k', replace: true })).rejects.toMatchObject({
    code: 'KEY_EXISTS',
    message: expect.stringContaining('still being worked on'),
  });
  await expect(testService(engine).watermarks.delete(id)).rejects.toMatchObject({ code: 'WATERMARK_BUSY' });
  expect((await engine.store.getVideoByKey('k'))?.id).toBe(video.id);

  await engine.store.finishJob(jobId('watermark', id), 'someone-else', engine.now(), { status: 'done' });
  const dir = watermarkDir(engine, video.id, id);
  expect(existsSync(dir)).toBe(true);
  const replaced = await recordVideo(engine, { source: b, key: 'k', replace: true });
  expect(replaced).toMatchObject({ created: true, replaced: { videoId: video.id, sourceUrl: a, watermarks: 1 } });
  expect(await engine.store.getVideo(video.id)).toBeUndefined();
  expect(await engine.store.getWatermark(id)).toBeUndefined();
  expect(await engine.store.getJob(jobId('watermark', id))).toBeUndefined();
  expect(await engine.store.getJob(jobId('ingest', video.id))).toBeUndefined();
  expect(existsSync(dir)).toBe(false);
});
