// A watermark request against the engine's state: identity, containers, expiration, retry of a failed one, refusals and render mode.
import { describe, expect, it } from 'vitest';
import { watermarkIdentity } from '../../../src/core/watermark-identity.js';
import { jobId } from '../../../src/engine/jobs/job-lease.js';
import type { Container, RenderMode, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { rendersEverySegment, requestWatermark } from '../../../src/engine/watermark/request.js';
import { forensic, insertVideo, settingsOf, testClock, text, type UnitEngine, unitEnginePerTest } from '../../helpers/unit-engine.js';

const clock = testClock();
let unit: UnitEngine;
unitEnginePerTest((u) => (unit = u), clock);

/** A watermark row put straight into the store (no job row), as a past run would have left it. */
async function seedWatermark(videoId: string, raw: unknown[], patch: Partial<WatermarkRecord>): Promise<string> {
  const settings = settingsOf(raw);
  const id = watermarkIdentity(videoId, settings);
  const record: WatermarkRecord = {
    id,
    videoId,
    settings,
    containers: ['m3u8'],
    expiration: null,
    status: 'PENDING',
    error: null,
    createdOn: clock.now(),
    readyOn: null,
    forensicPayload: null,
    render: 'full',
    ...patch,
  };
  await unit.engine.store.insertWatermarkIfAbsent(record);
  return id;
}

const ask = (key: string, raw: unknown[], extra: { containers?: Container[]; expirationSeconds?: number; render?: RenderMode } = {}) =>
  requestWatermark(unit.engine, { video: { key }, settings: settingsOf(raw), containers: extra.containers ?? ['m3u8'], ...extra });

describe('requestWatermark: identity', () => {
  it('finds the same watermark for the same request, created once, with one queued job', async () => {
    const video = await insertVideo(unit.engine, { key: 'talk' });
    const first = await ask('talk', [text('Alice')]);
    const second = await ask('talk', [text('Alice')]);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.watermark.id).toBe(first.watermark.id);
    expect(first.watermark.id).toBe(watermarkIdentity(video.id, settingsOf([text('Alice')])));
    expect(first.watermark).toMatchObject({
      videoId: video.id,
      status: 'PENDING',
      containers: ['m3u8'],
      render: 'full',
      forensicPayload: null,
      createdOn: clock.now(),
    });
    expect(first.video.id).toBe(video.id);
    expect(await unit.engine.store.listWatermarks(video.id)).toHaveLength(1);
    expect(await unit.engine.store.getJob(jobId('watermark', first.watermark.id))).toMatchObject({
      kind: 'watermark',
      targetId: first.watermark.id,
      status: 'queued',
    });
  });

  it('finds the video by id as well as by key', async () => {
    const video = await insertVideo(unit.engine, { key: 'talk' });
    const byKey = await ask('talk', [text('Alice')]);
    const byId = await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf([text('Alice')]), containers: ['m3u8'] });
    expect(byId.created).toBe(false);
    expect(byId.watermark.id).toBe(byKey.watermark.id);
  });

  it('makes another watermark when any setting, or the video, changes', async () => {
    await insertVideo(unit.engine, { key: 'talk', enableForensic: true });
    await insertVideo(unit.engine, { key: 'other' });
    const variants: unknown[][] = [
      [text('Alice')],
      [text('Bob')],
      [text('Alice', { fontSize: 0.06 })],
      [text('Alice', { x: 0.4 })],
      [text('Alice', { fontColor: 'FF0000' })],
      [text('Alice', { align: 'LEFT' })],
      [text('Alice'), text('Bob')],
      [text('Bob'), text('Alice')],
      [text('Alice'), forensic(7)],
      [text('Alice'), forensic(8)],
    ];
    const ids = [];
    for (const raw of variants) {
      const result = await ask('talk', raw);
      expect(result.created).toBe(true);
      ids.push(result.watermark.id);
    }
    const elsewhere = await ask('other', [text('Alice')]);
    expect(elsewhere.created).toBe(true);
    ids.push(elsewhere.watermark.id);
    expect(new Set(ids).size).toBe(variants.length + 1);
  });

  it('keeps the forensic payload of a FORENSIC setting on the record', async () => {
    await insertVideo(unit.engine, { key: 'talk', enableForensic: true });
    const { watermark } = await ask('talk', [forensic(0x1234)]);
    expect(watermark.forensicPayload).toBe(0x1234);
  });
});

describe('requestWatermark: containers', () => {
  it('extends the watermark with a container a later request asks for, and sorts and dedupes them', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const first = await ask('talk', [text('Alice')], { containers: ['m3u8', 'm3u8'] });
    expect(first.watermark.containers).toEqual(['m3u8']);
    const later = await ask('talk', [text('Alice')], { containers: ['mp4'] });
    expect(later.created).toBe(false);
    expect(later.watermark.id).toBe(first.watermark.id);
    expect(later.watermark.containers).toEqual(['m3u8', 'mp4']);
    expect((await unit.engine.store.getWatermark(first.watermark.id))!.containers).toEqual(['m3u8', 'mp4']);
  });

  it('drops a READY watermark back to PLAYABLE when a container is added', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const { watermark } = await ask('talk', [text('Alice')]);
    await unit.engine.store.updateWatermark(watermark.id, { status: 'READY', readyOn: clock.now() });
    const later = await ask('talk', [text('Alice')], { containers: ['mp4'] });
    expect(later.watermark).toMatchObject({ id: watermark.id, status: 'PLAYABLE', containers: ['m3u8', 'mp4'], readyOn: clock.now() });
    expect((await unit.engine.store.getWatermark(watermark.id))!.status).toBe('PLAYABLE');
  });

  it('queues a job for a READY watermark that had none when a container is added', async () => {
    const video = await insertVideo(unit.engine, { key: 'talk' });
    const id = await seedWatermark(video.id, [text('Alice')], { status: 'READY', readyOn: clock.now() });
    await ask('talk', [text('Alice')], { containers: ['mp4'] });
    expect(await unit.engine.store.getJob(jobId('watermark', id))).toMatchObject({ status: 'queued' });
  });

  it('leaves a READY watermark alone when a later request asks for nothing new', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const { watermark } = await ask('talk', [text('Alice')], { containers: ['m3u8', 'mp4'] });
    await unit.engine.store.updateWatermark(watermark.id, { status: 'READY', readyOn: clock.now() });
    const later = await ask('talk', [text('Alice')], { containers: ['mp4'] });
    expect(later.watermark.status).toBe('READY');
    expect(later.watermark.containers).toEqual(['m3u8', 'mp4']);
  });
});

describe('requestWatermark: expiration', () => {
  it('is set when the watermark is created and never changed after; expirationIgnored says so', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const first = await ask('talk', [text('Alice')], { expirationSeconds: 1_800_000_000.4 });
    expect(first.watermark.expiration).toBe(1_800_000_000_400);
    expect(first.expirationIgnored).toBe(false);

    const other = await ask('talk', [text('Alice')], { expirationSeconds: 1_900_000_000 });
    expect(other.expirationIgnored).toBe(true);
    expect(other.watermark.expiration).toBe(1_800_000_000_400);
    expect((await unit.engine.store.getWatermark(first.watermark.id))!.expiration).toBe(1_800_000_000_400);

    const same = await ask('talk', [text('Alice')], { expirationSeconds: 1_800_000_000.4 });
    expect(same.expirationIgnored).toBe(false);
    const none = await ask('talk', [text('Alice')]);
    expect(none.expirationIgnored).toBe(false);
    expect(none.watermark.expiration).toBe(1_800_000_000_400);
  });

  it('stays null when the creating request has none, and a later one cannot add it', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const first = await ask('talk', [text('Alice')]);
    expect(first.watermark.expiration).toBeNull();
    const later = await ask('talk', [text('Alice')], { expirationSeconds: 1_800_000_000 });
    expect(later.expirationIgnored).toBe(true);
    expect(later.watermark.expiration).toBeNull();
  });

  it('refuses an expired watermark with WATERMARK_EXPIRED', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const expiresAt = clock.now() / 1000 + 60;
    await ask('talk', [text('Alice')], { expirationSeconds: expiresAt });
    clock.advance(61_000);
    await expect(ask('talk', [text('Alice')])).rejects.toMatchObject({ code: 'WATERMARK_EXPIRED' });
  });
});

describe('requestWatermark: retry', () => {
  it('resets a FAILED watermark to PENDING and queues its job again', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const { watermark } = await ask('talk', [text('Alice')]);
    const id = jobId('watermark', watermark.id);
    expect(await unit.engine.store.acquireJob(id, 'worker-1', clock.now(), 20_000)).toBe(true);
    await unit.engine.store.finishJob(id, 'worker-1', clock.now(), { status: 'failed', error: 'disk full' });
    await unit.engine.store.updateWatermark(watermark.id, { status: 'FAILED', error: 'disk full' });

    const again = await ask('talk', [text('Alice')]);
    expect(again.created).toBe(false);
    expect(again.watermark).toMatchObject({ id: watermark.id, status: 'PENDING', error: null });
    expect(await unit.engine.store.getWatermark(watermark.id)).toMatchObject({ status: 'PENDING', error: null });
    expect(await unit.engine.store.getJob(id)).toMatchObject({ status: 'queued', error: null, owner: null });
  });
});

describe('requestWatermark: refusals', () => {
  it('VIDEO_NOT_FOUND for an unknown key or id', async () => {
    await expect(ask('nope', [text('Alice')])).rejects.toMatchObject({ code: 'VIDEO_NOT_FOUND', message: 'no video with key "nope"' });
    await expect(
      requestWatermark(unit.engine, { video: { videoId: 'v-missing' }, settings: settingsOf([text('Alice')]), containers: ['m3u8'] }),
    ).rejects.toMatchObject({
      code: 'VIDEO_NOT_FOUND',
      message: 'no video with id "v-missing"',
    });
  });

  it('VIDEO_REQUIRED when neither key nor id is given', async () => {
    await expect(requestWatermark(unit.engine, { video: {}, settings: settingsOf([text('Alice')]), containers: ['m3u8'] })).rejects.toMatchObject({
      code: 'VIDEO_REQUIRED',
    });
  });

  it('VIDEO_NOT_READY while the video is being ingested, VIDEO_FAILED when its ingest failed', async () => {
    await insertVideo(unit.engine, { key: 'pending', status: 'PENDING' });
    await insertVideo(unit.engine, { key: 'broken', status: 'FAILED_ENCODING' });
    await expect(ask('pending', [text('Alice')])).rejects.toMatchObject({ code: 'VIDEO_NOT_READY' });
    await expect(ask('broken', [text('Alice')])).rejects.toMatchObject({ code: 'VIDEO_FAILED' });
    expect(await unit.engine.store.listWatermarks()).toEqual([]);
  });

  it('FORENSIC_NOT_ENABLED for a FORENSIC setting on a video ingested without forensic preparation', async () => {
    await insertVideo(unit.engine, { key: 'plain' });
    await expect(ask('plain', [text('Alice'), forensic(5)])).rejects.toMatchObject({ code: 'FORENSIC_NOT_ENABLED' });
    expect(await unit.engine.store.listWatermarks()).toEqual([]);
  });

  it('VALIDATION_FAILED for text wholly off the frame, naming the setting', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const error = await ask('talk', [text('Alice'), text('Bob', { x: 9 })]).then(
      () => undefined,
      (e: unknown) => e as { code: string; details: string[] },
    );
    expect(error?.code).toBe('VALIDATION_FAILED');
    expect(error?.details).toHaveLength(1);
    expect(error?.details[0]).toMatch(/^settings\[1\]\.x: the text at x 9, y 0\.5 lies wholly outside the frame/);
    expect(await unit.engine.store.listWatermarks()).toEqual([]);
  });
});

describe('requestWatermark: render mode', () => {
  it('is on-demand when asked for with TEXT and m3u8 only', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const { watermark } = await ask('talk', [text('Alice')], { render: 'on-demand' });
    expect(watermark.render).toBe('on-demand');
  });

  it('stays on demand with an mp4 (its job renders every segment for the join), and is full with no TEXT to draw', async () => {
    await insertVideo(unit.engine, { key: 'talk', enableForensic: true });
    const withMp4 = (await ask('talk', [text('Alice')], { render: 'on-demand', containers: ['m3u8', 'mp4'] })).watermark;
    expect(withMp4.render).toBe('on-demand');
    expect(rendersEverySegment(withMp4)).toBe(true);
    expect((await ask('talk', [forensic(3)], { render: 'on-demand' })).watermark.render).toBe('full');
  });

  it('turns full when a later request is full', async () => {
    await insertVideo(unit.engine, { key: 'talk' });
    const first = await ask('talk', [text('Alice')], { render: 'on-demand' });
    const still = await ask('talk', [text('Alice')], { render: 'on-demand' });
    expect(still.watermark.render).toBe('on-demand');
    const full = await ask('talk', [text('Alice')]);
    expect(full.watermark.render).toBe('full');
    expect((await unit.engine.store.getWatermark(first.watermark.id))!.render).toBe('full');
  });

  it('stays on demand when a later on-demand request adds mp4, and queues a job for the rest of a PLAYABLE one', async () => {
    const video = await insertVideo(unit.engine, { key: 'talk' });
    const id = await seedWatermark(video.id, [text('Alice')], { status: 'PLAYABLE', render: 'on-demand' });
    const later = await ask('talk', [text('Alice')], { render: 'on-demand', containers: ['mp4'] });
    expect(later.watermark).toMatchObject({ id, render: 'on-demand', containers: ['m3u8', 'mp4'] });
    expect(await unit.engine.store.getJob(jobId('watermark', id))).toMatchObject({ status: 'queued' });
  });

  it('queues a job for a PLAYABLE watermark once it is full, not while it is on demand', async () => {
    const video = await insertVideo(unit.engine, { key: 'talk' });
    const id = await seedWatermark(video.id, [text('Alice')], { status: 'PLAYABLE', render: 'on-demand' });
    await ask('talk', [text('Alice')], { render: 'on-demand' });
    expect(await unit.engine.store.getJob(jobId('watermark', id))).toBeUndefined();
    await ask('talk', [text('Alice')]);
    expect(await unit.engine.store.getJob(jobId('watermark', id))).toMatchObject({ status: 'queued' });
  });
});
