// `--out` exports of a render farm's watermark: with a shared store (serve --media), rendered segments and the mp4
// live only in the store, so an export must fetch them from there, from serve's own engine or from another process
// on the same data folder (which finds the store through shared-media.json).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { flat, tempDir } from '../../harness/fixtures.js';
import { rememberSharedMedia } from '../../src/engine/data-folder/shared-media.js';
import { exportWatermark } from '../../src/engine/watermark/manage.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { FolderMediaStore } from '../../src/media/folder-store.js';
import { ingestFixture, settingsOf } from '../helpers/watermark-helpers.js';

let engine: TestEngine;
let storeRoot: string;
let store: FolderMediaStore;
let id: string;
/** What the render wrote, by file name: the bytes an export must hand back. */
const rendered = new Map<string, Buffer>();

beforeAll(async () => {
  engine = await testEngine();
  const video = await ingestFixture(engine, await flat('446688', 9), 'export-shared');
  const r = await requestWatermark(engine, {
    video: { key: video.key },
    settings: settingsOf([{ type: 'text', content: 'for the farm' }]),
    containers: ['m3u8', 'mp4'],
  });
  await runWatermarkJob(engine, r.watermark.id);
  id = r.watermark.id;
  // As a farm leaves it: segments and mp4 in the store only; the playlist in both places (serve keeps its copy).
  storeRoot = tempDir('export-store');
  store = new FolderMediaStore(storeRoot);
  const dir = watermarkDir(engine, video.id, id);
  for (const name of readdirSync(dir).filter((n) => /^(seg_\d{5}\.ts|video\.mp4|video\.m3u8)$/.test(n))) {
    const file = path.join(dir, name);
    rendered.set(name, readFileSync(file));
    await store.putFile(path.relative(engine.paths.media, file).split(path.sep).join('/'), file);
    if (name !== 'video.m3u8') rmSync(file);
  }
});
afterAll(async () => {
  await engine?.dispose();
  store?.close();
  rmSync(storeRoot, { recursive: true, force: true });
});

function expectWhole(copied: string): void {
  const names = readdirSync(copied).sort();
  expect(names).toEqual([...rendered.keys()].sort());
  expect(names.filter((n) => n.endsWith('.ts')).length).toBeGreaterThan(1);
  for (const [name, bytes] of rendered) expect(readFileSync(path.join(copied, name)).equals(bytes), name).toBe(true);
}

describe('exporting a watermark whose media is in a shared store', () => {
  it('fetches the segments and the mp4 from serve’s store', async () => {
    // serve's own engine: built with the shared store as its media.
    const serving = { ...engine, media: store };
    expectWhole(await exportWatermark(serving, (await engine.store.getWatermark(id))!, tempDir('export-out')));
  });

  it('fetches them in another process on the data folder, through the store serve wrote down', async () => {
    await rememberSharedMedia(engine.paths, { url: storeRoot });
    expectWhole(await exportWatermark(engine, (await engine.store.getWatermark(id))!, tempDir('export-out')));
  });
});
