// A watermark's job run to its end: which segments it renders and how urgently, the playlist it publishes, the status it leaves, and a failure.
import { describe, expect, it } from 'vitest';
import { WmarkError } from '../../../src/core/errors.js';
import { parseMediaPlaylist } from '../../../src/core/playlist.js';
import { mediaKeys, PLAYLIST_NAME } from '../../../src/engine/data-folder/layout.js';
import { jobId, LEASE_STALE_MS } from '../../../src/engine/jobs/job-lease.js';
import type { RenderMode, VideoRecord, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { requestWatermark } from '../../../src/engine/watermark/request.js';
import { openingSegments, runWatermarkJob } from '../../../src/engine/watermark/watermark-job.js';
import { addVideo, forensic, settingsOf, testClock, text, UNIT_SEGMENTS, type UnitEngine, unitEnginePerTest } from '../../helpers/unit-engine.js';

const clock = testClock();
let unit: UnitEngine;
unitEnginePerTest((u) => (unit = u), clock);

async function watermarkOn(video: VideoRecord, raw: unknown[], render: RenderMode = 'full'): Promise<WatermarkRecord> {
  return (await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf(raw), containers: ['m3u8'], render })).watermark;
}

const playlistOf = async (video: VideoRecord, w: WatermarkRecord) =>
  (await unit.engine.media.read(mediaKeys.watermarkFile(video.id, w.id, PLAYLIST_NAME))).toString('utf8');
const allSegmentNames = UNIT_SEGMENTS.map((_, i) => `seg_0000${i}.ts`);
/** Recorded renders as (segment index, urgency), sorted by index: concurrent renders are asked for in no fixed order. */
const byIndex = () => unit.renders.map((r) => [Number(/seg_(\d+)\.ts$/.exec(r.output)![1]), r.urgency] as const).sort((a, b) => a[0] - b[0]);

describe('runWatermarkJob: a full watermark', () => {
  it('renders every segment, the opening now and the rest in the background', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    await runWatermarkJob(unit.engine, w.id);
    expect(byIndex()).toEqual([
      [0, 'now'],
      [1, 'background'],
      [2, 'background'],
      [3, 'background'],
      [4, 'background'],
      [5, 'background'],
    ]);
    expect(unit.renders.every((r) => r.group === w.id && r.input === r.output.replace(`watermarks/${video.id}/${w.id}/`, `videos/${video.id}/`))).toBe(true);
    for (let i = 0; i < video.segments.length; i++) expect(await unit.engine.media.exists(mediaKeys.segment(video.id, w.id, i))).toBe(true);
  });

  it('publishes an ended playlist of every segment and marks it READY with readyOn', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    clock.advance(5_000);
    const done = await runWatermarkJob(unit.engine, w.id);
    expect(done).toMatchObject({ id: w.id, status: 'READY', readyOn: clock.now(), error: null });
    expect(await unit.engine.store.getWatermark(w.id)).toEqual(done);

    const playlist = await playlistOf(video, w);
    expect(playlist).toContain('#EXT-X-ENDLIST');
    const parsed = parseMediaPlaylist(playlist);
    expect(parsed.ended).toBe(true);
    expect(parsed.targetDuration).toBe(4);
    expect(parsed.segments).toEqual(UNIT_SEGMENTS.map((duration, i) => ({ uri: allSegmentNames[i], duration })));
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toMatchObject({ status: 'done', owner: null, done: 6, total: 6 });
    // Once complete, whatever renders left in its folder goes.
    expect(unit.renderer.tidied).toContainEqual({ folder: mediaKeys.watermark(video.id, w.id) });
  });

  it('renders nothing when run again once READY', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    await runWatermarkJob(unit.engine, w.id);
    const before = await playlistOf(video, w);
    const again = await runWatermarkJob(unit.engine, w.id);
    expect(again?.status).toBe('READY');
    expect(unit.renders).toHaveLength(6);
    expect(await playlistOf(video, w)).toBe(before);
  });

  it('renders only the segments a killed run left missing', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    for (const i of [0, 1, 4]) await unit.engine.media.put(mediaKeys.segment(video.id, w.id, i), `left by an earlier run ${i}`);
    const done = await runWatermarkJob(unit.engine, w.id);
    expect(done?.status).toBe('READY');
    expect(byIndex()).toEqual([
      [2, 'background'],
      [3, 'background'],
      [5, 'background'],
    ]);
    expect((await unit.engine.media.read(mediaKeys.segment(video.id, w.id, 4))).toString()).toBe('left by an earlier run 4');
  });

  it('copies every segment of a forensic viewer without text, rendering none', async () => {
    const video = await addVideo(unit.engine, { enableForensic: true });
    const w = await watermarkOn(video, [forensic(77)]);
    const done = await runWatermarkJob(unit.engine, w.id);
    expect(done?.status).toBe('READY');
    expect(unit.renders).toEqual([]);
    expect(parseMediaPlaylist(await playlistOf(video, w)).segments).toHaveLength(6);
  });

  it('leaves the job to the process that holds its lease', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    expect(await unit.engine.store.acquireJob(jobId('watermark', w.id), 'another-process', clock.now(), LEASE_STALE_MS)).toBe(true);
    expect(await runWatermarkJob(unit.engine, w.id)).toBeUndefined();
    expect(unit.renders).toEqual([]);
    expect((await unit.engine.store.getWatermark(w.id))!.status).toBe('PENDING');
  });

  it('refuses an unknown watermark with WATERMARK_NOT_FOUND', async () => {
    await expect(runWatermarkJob(unit.engine, 'no-such-watermark')).rejects.toMatchObject({ code: 'WATERMARK_NOT_FOUND' });
  });
});

describe('runWatermarkJob: an on-demand watermark', () => {
  it('renders only its opening, urgently, lists every segment, and stays PLAYABLE', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')], 'on-demand');
    expect(w.render).toBe('on-demand');
    const opening = openingSegments(UNIT_SEGMENTS, 4);
    expect(opening).toBe(3);

    const done = await runWatermarkJob(unit.engine, w.id);
    expect(byIndex()).toEqual(Array.from({ length: opening }, (_, i) => [i, 'now']));
    expect(done).toMatchObject({ status: 'PLAYABLE', readyOn: null });
    const parsed = parseMediaPlaylist(await playlistOf(video, w));
    expect(parsed.ended).toBe(true);
    expect(parsed.segments.map((s) => s.uri)).toEqual(allSegmentNames);
    expect(await unit.engine.media.exists(mediaKeys.segment(video.id, w.id, opening))).toBe(false);
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toMatchObject({ status: 'done' });
  });
});

describe('openingSegments', () => {
  it('counts the segments from the start that cover the given seconds, at least one', () => {
    expect(openingSegments([1, 1, 2, 4], 4)).toBe(3);
    expect(openingSegments([1, 1, 2, 4], 4.5)).toBe(4);
    expect(openingSegments([4, 4], 4)).toBe(1);
    expect(openingSegments([6], 4)).toBe(1);
    expect(openingSegments([1, 1], 10)).toBe(2);
    expect(openingSegments([2, 2], 0)).toBe(1);
  });
});

describe('runWatermarkJob: a failed render', () => {
  it('marks the watermark FAILED with the ffmpeg reason and the job failed', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const broken = mediaKeys.segment(video.id, w.id, 3);
    unit.renderer.failWith = (job) =>
      job.output === broken ? new WmarkError('FFMPEG_FAILED', 'ffmpeg exited with code 1', { details: ['[libx264] error: out of memory'] }) : undefined;

    await expect(runWatermarkJob(unit.engine, w.id)).rejects.toMatchObject({ code: 'FFMPEG_FAILED' });
    expect(await unit.engine.store.getWatermark(w.id)).toMatchObject({ status: 'FAILED', error: '[libx264] error: out of memory', readyOn: null });
    expect(await unit.engine.store.getJob(jobId('watermark', w.id))).toMatchObject({ status: 'failed', error: 'ffmpeg exited with code 1', owner: null });
    expect(await unit.engine.media.exists(broken)).toBe(false);
  });

  it('gives the message of an error without details, and is retried to READY by the next identical request', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    unit.renderer.failWith = (job) => (job.output.endsWith('seg_00000.ts') ? new Error('disk full') : undefined);
    await expect(runWatermarkJob(unit.engine, w.id)).rejects.toThrow('disk full');
    expect((await unit.engine.store.getWatermark(w.id))!).toMatchObject({ status: 'FAILED', error: 'Error: disk full' });

    unit.renderer.failWith = undefined;
    const before = unit.renders.length;
    const again = await watermarkOn(video, [text('Alice')]);
    expect(again).toMatchObject({ id: w.id, status: 'PENDING', error: null });
    expect((await runWatermarkJob(unit.engine, w.id))?.status).toBe('READY');
    // Segments that were rendered before the failure are not rendered again.
    const rendered = new Set(
      unit.renders
        .slice(0, before)
        .filter((r) => !r.output.endsWith('seg_00000.ts'))
        .map((r) => r.output),
    );
    expect(unit.renders.slice(before).filter((r) => rendered.has(r.output))).toEqual([]);
  });
});
