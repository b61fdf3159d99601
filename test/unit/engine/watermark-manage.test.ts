// Managing a made watermark: deleting it (refused while a live lease is held), where its files are, and exporting a copy of them.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MP4_NAME, mediaFile, mediaKeys, PLAYLIST_NAME } from '../../../src/engine/data-folder/layout.js';
import { jobId, LEASE_STALE_MS } from '../../../src/engine/jobs/job-lease.js';
import type { Container, VideoRecord, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { deleteWatermark, exportWatermark, watermarkFiles } from '../../../src/engine/watermark/manage.js';
import { requestWatermark } from '../../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../../src/engine/watermark/watermark-job.js';
import { addVideo, settingsOf, testClock, text, type UnitEngine, unitEnginePerTest } from '../../helpers/unit-engine.js';

const clock = testClock();
let unit: UnitEngine;
unitEnginePerTest((u) => (unit = u), clock);

async function watermarkOn(video: VideoRecord, raw: unknown[] = [text('Alice')], containers: Container[] = ['m3u8']): Promise<WatermarkRecord> {
  return (await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf(raw), containers })).watermark;
}

const segmentKeys = (video: VideoRecord, w: WatermarkRecord) => video.segments.map((_, i) => mediaKeys.segment(video.id, w.id, i));

describe('deleteWatermark', () => {
  it('refuses with WATERMARK_BUSY while another process holds a live lease, and removes nothing', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    await unit.engine.media.put(mediaKeys.segment(video.id, w.id, 0), 'segment 0');
    expect(await unit.engine.store.acquireJob(jobId('watermark', w.id), 'another-process', clock.now(), LEASE_STALE_MS)).toBe(true);
    clock.advance(LEASE_STALE_MS - 1);

    await expect(deleteWatermark(unit.engine, w)).rejects.toMatchObject({ code: 'WATERMARK_BUSY' });
    expect(await unit.engine.store.getWatermark(w.id)).toBeDefined();
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toMatchObject({ status: 'running', owner: 'another-process' });
    expect(await unit.engine.media.exists(mediaKeys.segment(video.id, w.id, 0))).toBe(true);
    expect(unit.renderer.discarded).toEqual([]);
  });

  it('goes ahead once that lease has gone stale', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    expect(await unit.engine.store.acquireJob(jobId('watermark', w.id), 'dead-process', clock.now(), LEASE_STALE_MS)).toBe(true);
    clock.advance(LEASE_STALE_MS + 1);
    await deleteWatermark(unit.engine, w);
    expect(await unit.engine.store.getWatermark(w.id)).toBeUndefined();
  });

  it('removes the row, the job row and the folder, and tells the renderer to forget its segments', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    const other = await watermarkOn(video, [text('Bob')]);
    await runWatermarkJob(unit.engine, w.id);
    await runWatermarkJob(unit.engine, other.id);
    const folder = mediaKeys.watermark(video.id, w.id);
    expect(await unit.engine.media.list(`${folder}/`)).toHaveLength(7);
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toBeDefined();

    await deleteWatermark(unit.engine, w);
    expect(await unit.engine.store.getWatermark(w.id)).toBeUndefined();
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toBeUndefined();
    expect(await unit.engine.media.list(`${folder}/`)).toEqual([]);
    expect(readdirSync(mediaFile(unit.engine.paths, mediaKeys.videoWatermarks(video.id)))).toEqual([other.id]);
    expect(unit.renderer.discarded).toEqual(segmentKeys(video, w));
    // Another watermark of the video and the video's own media are untouched.
    expect(await unit.engine.store.getWatermark(other.id)).toMatchObject({ status: 'READY' });
    expect(await unit.engine.media.list(`${mediaKeys.watermark(video.id, other.id)}/`)).toHaveLength(7);
    expect(await unit.engine.media.exists(mediaKeys.workingSegment(video.id, 0))).toBe(true);
  });

  it('lets the same settings make the watermark anew after it is deleted', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    await runWatermarkJob(unit.engine, w.id);
    await deleteWatermark(unit.engine, w);
    const again = await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf([text('Alice')]), containers: ['m3u8'] });
    expect(again.created).toBe(true);
    expect(again.watermark.id).toBe(w.id);
    const done = await runWatermarkJob(unit.engine, w.id);
    expect(done?.status).toBe('READY');
    expect(unit.renders).toHaveLength(12);
  });
});

describe('watermarkFiles', () => {
  it('names the folder, and the playlist only once it is written', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    const dir = mediaFile(unit.engine.paths, mediaKeys.watermark(video.id, w.id));
    expect(await watermarkFiles(unit.engine, w)).toEqual({ dir, complete: false });

    const ready = (await runWatermarkJob(unit.engine, w.id))!;
    expect(await watermarkFiles(unit.engine, ready)).toEqual({ dir, m3u8: path.join(dir, PLAYLIST_NAME), complete: true });
  });

  it('names the mp4 for a watermark with the mp4 container once it is there', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')], ['m3u8', 'mp4']);
    const dir = mediaFile(unit.engine.paths, mediaKeys.watermark(video.id, w.id));
    expect(await watermarkFiles(unit.engine, w)).toEqual({ dir, complete: false });
    await unit.engine.media.put(mediaKeys.watermarkFile(video.id, w.id, PLAYLIST_NAME), '#EXTM3U\n');
    await unit.engine.media.put(mediaKeys.watermarkFile(video.id, w.id, MP4_NAME), 'mp4 bytes');
    expect(await watermarkFiles(unit.engine, w)).toEqual({ dir, m3u8: path.join(dir, PLAYLIST_NAME), mp4: path.join(dir, MP4_NAME), complete: false });
  });

  it('never names an mp4 for a watermark without the mp4 container', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    await unit.engine.media.put(mediaKeys.watermarkFile(video.id, w.id, MP4_NAME), 'stray mp4');
    expect((await watermarkFiles(unit.engine, w)).mp4).toBeUndefined();
  });
});

describe('exportWatermark', () => {
  let dest: string;
  beforeEach(() => {
    dest = mkdtempSync(path.join(os.tmpdir(), 'wmark-export-'));
  });
  afterEach(() => rmSync(dest, { recursive: true, force: true }));

  it('copies the visible files of the folder to <dest>/<id>/, leaving the hidden ones behind', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    await runWatermarkJob(unit.engine, w.id);
    const dir = mediaFile(unit.engine.paths, mediaKeys.watermark(video.id, w.id));
    // What a local renderer keeps beside the segments: its drawing and a part file in flight.
    mkdirSync(path.join(dir, '.draw'), { recursive: true });
    writeFileSync(path.join(dir, '.draw', 'filter.txt'), 'null');
    writeFileSync(path.join(dir, '.seg_00009.ts.abc.part'), 'half');

    const target = await exportWatermark(unit.engine, w, dest);
    expect(target).toBe(path.join(dest, w.id));
    expect(readdirSync(dest)).toEqual([w.id]);
    const names = video.segments.map((_, i) => `seg_0000${i}.ts`);
    expect(readdirSync(target).sort()).toEqual([...names, PLAYLIST_NAME].sort());
    for (const name of [...names, PLAYLIST_NAME]) expect(readFileSync(path.join(target, name))).toEqual(readFileSync(path.join(dir, name)));
  });

  it('replaces an earlier export of the same watermark', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video);
    await runWatermarkJob(unit.engine, w.id);
    mkdirSync(path.join(dest, w.id), { recursive: true });
    writeFileSync(path.join(dest, w.id, 'old.txt'), 'from an earlier export');
    const target = await exportWatermark(unit.engine, w, dest);
    expect(readdirSync(target)).not.toContain('old.txt');
    expect(readdirSync(target)).toContain(PLAYLIST_NAME);
    expect(readdirSync(dest)).toEqual([w.id]);
  });
});
