// Shared-decode renders: watermarks of one video rendered at the same time decode each working segment once, in one
// ffmpeg with an encode per viewer, and every viewer's output is the one a render of its own gives.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestVideo, type TestEngine, testEngine, watermarkDir } from '../../harness/engine.js';
import { natural, tempDir } from '../../harness/fixtures.js';
import { segmentFileName } from '../../src/core/plan/segment-timing.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { gradedAlphaPng } from '../helpers/images.js';
import { decodeFrame } from '../helpers/media.js';
import { settingsOf } from '../helpers/watermark-helpers.js';

const SIZE = { width: 320, height: 180 };
const VIEWERS = ['alice@example.com', 'bob@example.com', 'carol@example.com'];
/** A logo for bob (drawn over his text) and carol (under hers): graphs with images share the decode too. */
let logo: string;
const settingsFor = (viewer: string) => {
  const text = { content: viewer, fontSize: 0.08, fontOpacity: 1, y: 0.85 };
  const image = { type: 'IMAGE', content: logo, x: 0.5, y: 0.8, width: 0.3, opacity: 0.7 };
  return settingsOf(viewer.startsWith('bob') ? [text, image] : viewer.startsWith('carol') ? [image, text] : [text]);
};

let batch: TestEngine;
let single: TestEngine;
let batchVideo: VideoRecord;
let singleVideo: VideoRecord;
let batchIds: string[];
let singleIds: string[];

function meanAbsDiff(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

beforeAll(async () => {
  logo = gradedAlphaPng(path.join(tempDir('shared-decode'), 'logo.png'));
  const source = await natural(12);
  batch = await testEngine({ workers: 2 });
  single = await testEngine({ workers: 2 });
  batchVideo = (await ingestVideo(batch, { source, key: 'clip' })).video;
  singleVideo = (await ingestVideo(single, { source, key: 'clip' })).video;
  const request = async (engine: TestEngine, viewer: string) =>
    (await requestWatermark(engine, { video: { key: 'clip' }, settings: settingsFor(viewer), containers: ['m3u8'] })).watermark.id;
  // Three viewers at once (as a --batch or three requests queued together), and each alone, one after the other.
  batchIds = await Promise.all(VIEWERS.map((v) => request(batch, v)));
  await Promise.all(batchIds.map((id) => runWatermarkJob(batch, id)));
  singleIds = [];
  for (const v of VIEWERS) {
    const id = await request(single, v);
    await runWatermarkJob(single, id);
    singleIds.push(id);
  }
}, 240_000);

afterAll(async () => {
  await batch?.dispose();
  await single?.dispose();
});

describe('watermarks of one video rendered together', () => {
  it('decode each shared segment once for every viewer', () => {
    const shared = batch.runner.calls.filter((c) => c.tool === 'ffmpeg' && c.args.includes('-filter_complex_script'));
    expect(shared.length).toBeGreaterThan(0);
    for (const call of shared) {
      // One input, one encode per viewer that joined.
      expect(call.args.filter((a) => a === '-i')).toHaveLength(1);
      expect(call.args.filter((a) => a === 'libx264').length).toBeGreaterThan(1);
    }
    // Encodes: one process per shared segment instead of one per viewer and segment.
    const processes = batch.runner.calls.filter((c) => c.tool === 'ffmpeg' && c.args.includes('libx264') && !c.args.includes('-segment_format'));
    const outputs = processes.reduce((n, c) => n + c.args.filter((a) => a === 'libx264').length, 0);
    expect(outputs).toBe(VIEWERS.length * batchVideo.segments.length);
    expect(processes.length).toBeLessThan(outputs);
    expect(batch.renderer.stats().joined).toBe(outputs - processes.length);
  });

  it.each(VIEWERS.map((v, i) => [v, i]))('gives %s the picture a render of its own gives, text included', async (_viewer, i) => {
    for (const index of [0, 3, 4]) {
      const mine = await decodeFrame(path.join(watermarkDir(batch, batchVideo.id, batchIds[i]!), segmentFileName(index)), 0.25, SIZE);
      const alone = await decodeFrame(path.join(watermarkDir(single, singleVideo.id, singleIds[i]!), segmentFileName(index)), 0.25, SIZE);
      expect(meanAbsDiff(mine.data, alone.data), `segment ${index}`).toBeLessThan(0.5);
      // And not another viewer's text: the text area differs from the next viewer's own render.
      const other = await decodeFrame(
        path.join(watermarkDir(single, singleVideo.id, singleIds[(i + 1) % VIEWERS.length]!), segmentFileName(index)),
        0.25,
        SIZE,
      );
      expect(meanAbsDiff(mine.data, other.data), `segment ${index} vs another viewer`).toBeGreaterThan(0.5);
    }
  });

  it('finish every watermark READY with a complete, ended playlist', async () => {
    for (const id of batchIds) expect((await batch.store.getWatermark(id))!.status).toBe('READY');
  });
});
