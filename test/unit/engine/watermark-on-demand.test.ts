// Segments rendered as a player asks for them: the asked one now, a few after it ahead, none past the end or for a failed watermark.
import { describe, expect, it, vi } from 'vitest';
import { mediaKeys } from '../../../src/engine/data-folder/layout.js';
import type { RenderMode, VideoRecord, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { ensureSegment, RENDER_AHEAD_SEGMENTS } from '../../../src/engine/watermark/on-demand.js';
import { requestWatermark } from '../../../src/engine/watermark/request.js';
import { addVideo, settingsOf, text, type UnitEngine, unitEnginePerTest } from '../../helpers/unit-engine.js';

let unit: UnitEngine;
unitEnginePerTest((u) => (unit = u));

async function watermarkOn(video: VideoRecord, render: RenderMode): Promise<WatermarkRecord> {
  return (await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf([text('Alice')]), containers: ['m3u8'], render })).watermark;
}

const asked = () => unit.renders.map((r) => [Number(/seg_(\d+)\.ts$/.exec(r.output)![1]), r.urgency] as const);
const present = (video: VideoRecord, w: WatermarkRecord, i: number) => unit.engine.media.exists(mediaKeys.segment(video.id, w.id, i));

describe('ensureSegment', () => {
  it('renders the asked segment now and the next ones ahead', async () => {
    expect(RENDER_AHEAD_SEGMENTS).toBe(2);
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    expect(await ensureSegment(unit.engine, w, 1)).toBe(true);
    // Resolved once the asked segment is in place; the ones ahead may still be under way.
    expect(await present(video, w, 1)).toBe(true);
    expect(unit.renders[0]).toMatchObject({
      output: mediaKeys.segment(video.id, w.id, 1),
      input: mediaKeys.workingSegment(video.id, 1),
      urgency: 'now',
      group: w.id,
    });
    await vi.waitFor(() => expect(unit.renders).toHaveLength(3));
    // The asked one is asked for first; the ones ahead follow in no fixed order.
    expect([
      asked()[0],
      ...asked()
        .slice(1)
        .sort((a, b) => a[0] - b[0]),
    ]).toEqual([
      [1, 'now'],
      [2, 'ahead'],
      [3, 'ahead'],
    ]);
    await vi.waitFor(async () => expect([await present(video, w, 2), await present(video, w, 3)]).toEqual([true, true]));
    expect(await present(video, w, 0)).toBe(false);
    expect(await present(video, w, 4)).toBe(false);
  });

  it('renders nothing ahead past the last segment', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    expect(await ensureSegment(unit.engine, w, 4)).toBe(true);
    await vi.waitFor(async () => expect(await present(video, w, 5)).toBe(true));
    expect(await ensureSegment(unit.engine, w, 5)).toBe(true);
    expect(asked()).toEqual([
      [4, 'now'],
      [5, 'ahead'],
    ]);
  });

  it('renders nothing ahead for a full watermark (its job renders the rest)', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'full');
    expect(await ensureSegment(unit.engine, w, 2)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked()).toEqual([[2, 'now']]);
  });

  it('is false past the last segment, rendering nothing', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    expect(await ensureSegment(unit.engine, w, video.segments.length)).toBe(false);
    expect(await ensureSegment(unit.engine, w, 99)).toBe(false);
    expect(unit.renders).toEqual([]);
  });

  it('is false for a FAILED watermark, rendering nothing', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    expect(await ensureSegment(unit.engine, { ...w, status: 'FAILED', error: 'disk full' }, 0)).toBe(false);
    expect(unit.renders).toEqual([]);
  });

  it('is true without rendering for a segment already there', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    await unit.engine.media.put(mediaKeys.segment(video.id, w.id, 5), 'rendered before');
    expect(await ensureSegment(unit.engine, w, 5)).toBe(true);
    expect(unit.renders).toEqual([]);
    expect((await unit.engine.media.read(mediaKeys.segment(video.id, w.id, 5))).toString()).toBe('rendered before');
  });

  it('marks an on-demand watermark READY once players have asked for every segment', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, 'on-demand');
    expect(await ensureSegment(unit.engine, w, 0)).toBe(true);
    expect(await ensureSegment(unit.engine, w, 3)).toBe(true);
    await vi.waitFor(async () => expect((await unit.engine.store.getWatermark(w.id))!.status).toBe('READY'));
    expect(asked().sort((a, b) => a[0] - b[0])).toEqual([
      [0, 'now'],
      [1, 'ahead'],
      [2, 'ahead'],
      [3, 'now'],
      [4, 'ahead'],
      [5, 'ahead'],
    ]);
  });
});
