// The rules of what an instance keeps of a repeated watermark request: which answers may be kept (a READY watermark
// of an INGESTED video, the one the settings make of it), what they are kept under, when a kept one stands, which
// notices drop it, and the epoch rule: nothing read while a notice could have been missed is kept.
import { describe, expect, it } from 'vitest';
import { type BusWatcher, isFresh, KeptReads, type NoticeSource } from '../../../src/engine/state/kept-reads.js';
import { changeNotice, concerns, isSettled, isUnexpired, noticedRow, requestKey, WatermarkRequestCache } from '../../../src/engine/state/request-cache.js';
import type { VideoRecord, WatermarkAndVideo, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { ingestedVideoRow } from '../../helpers/video-record.js';

const identify = (videoId: string) => `${videoId}|alice`;
const video = (over: Partial<VideoRecord> = {}) => ingestedVideoRow('v1', 'clip', over);
const watermark = (over: Partial<WatermarkRecord> = {}): WatermarkRecord => ({
  id: 'v1|alice',
  videoId: 'v1',
  settings: [],
  containers: ['m3u8'],
  expiration: null,
  status: 'READY',
  error: null,
  createdOn: 0,
  readyOn: 10,
  forensicPayload: null,
  render: 'full',
  ...over,
});
const ready: WatermarkAndVideo = { video: video(), watermark: watermark() };

/** A change bus in a test: notices and drops delivered by hand, listening or not. */
class FakeBus implements NoticeSource {
  listening = true;
  private watcher: BusWatcher | undefined;
  watch(watcher: BusWatcher): void {
    this.watcher = watcher;
  }
  stamp(): number {
    return 0;
  }
  send(message: string): void {
    this.watcher?.message(message);
  }
  drop(): void {
    this.listening = false;
    this.watcher?.lost();
  }
}

describe('what may be kept', () => {
  it('keeps only a settled watermark of an INGESTED video, the very one these settings make of it', () => {
    expect(isSettled(ready, identify)).toBe(true);
    for (const status of ['PENDING', 'PLAYABLE', 'FAILED'] as const) expect(isSettled({ ...ready, watermark: watermark({ status }) }, identify)).toBe(false);
    // PLAYABLE on demand is settled while no job works on it: no mp4 to join.
    const onDemand = (containers: WatermarkRecord['containers']) => ({
      ...ready,
      watermark: watermark({ status: 'PLAYABLE', render: 'on-demand', containers }),
    });
    expect([isSettled(onDemand(['m3u8']), identify), isSettled(onDemand(['m3u8', 'mp4']), identify)]).toEqual([true, false]);
    expect(isSettled({ ...ready, video: video({ status: 'PENDING' }) }, identify)).toBe(false);
    expect(isSettled({ video: video() }, identify)).toBe(false);
    expect(isSettled({}, identify)).toBe(false);
    // Another video's watermark, or another identity, is never the answer to this request.
    expect(isSettled({ video: video({ id: 'v2' }), watermark: watermark() }, identify)).toBe(false);
    expect(isSettled({ ...ready, watermark: watermark({ id: 'v1|bob' }) }, identify)).toBe(false);
  });

  it('keys a request by how it names its video and by its settings, never by one alone', () => {
    const bob = (videoId: string) => `${videoId}|bob`;
    expect(requestKey({ key: 'clip' }, identify)).not.toBe(requestKey({ key: 'clip' }, bob));
    expect(requestKey({ key: 'clip' }, identify)).not.toBe(requestKey({ key: 'other' }, identify));
    expect(requestKey({ videoId: 'clip' }, identify)).not.toBe(requestKey({ key: 'clip' }, identify));
    expect(requestKey({ key: 'clip' }, identify)).toBe(requestKey({ key: 'clip' }, identify));
    expect(requestKey({}, identify)).toBeUndefined();
  });

  it('lets a kept answer stand until its watermark expires, and within its lifetime and stamp only', () => {
    const expiring = { ...ready, watermark: watermark({ expiration: 1_000 }) };
    expect([isUnexpired(expiring, 1_000), isUnexpired(expiring, 1_001), isUnexpired(ready, 1e15)]).toEqual([true, false, true]);
    expect(isFresh({ at: 100, stamp: 3 }, 100 + 29_999, 30_000, 3)).toBe(true);
    expect(isFresh({ at: 100, stamp: 3 }, 100 + 30_000, 30_000, 3)).toBe(false);
    expect(isFresh({ at: 100, stamp: 3 }, 150, 30_000, 4)).toBe(false);
    // A clock that went back is not trusted to measure the age.
    expect(isFresh({ at: 100, stamp: 0 }, 99, 30_000, 0)).toBe(false);
  });

  it('reads the row a notice names, from the store or from the change feed, and what it concerns', () => {
    expect(noticedRow(changeNotice('watermark:w1'))).toEqual({ kind: 'watermark', id: 'w1' });
    expect(noticedRow('1b9d6bcd-bbfd-4b2d video:v1')).toEqual({ kind: 'video', id: 'v1' });
    expect(noticedRow('credential-revoked wmc_1')).toBeUndefined();
    expect(concerns({ kind: 'watermark', id: 'v1|alice' }, ready)).toBe(true);
    expect(concerns({ kind: 'video', id: 'v1' }, ready)).toBe(true);
    expect(concerns({ kind: 'video', id: 'v2' }, ready)).toBe(false);
  });
});

describe('the cache', () => {
  const counting = (answer: () => WatermarkAndVideo) => {
    const reads = { n: 0 };
    const read = async () => {
      reads.n++;
      return answer();
    };
    return { reads, read };
  };

  it('answers a repeated settled request without reading, until a notice names its watermark or its video', async () => {
    const bus = new FakeBus();
    const cache = new WatermarkRequestCache(() => bus, 30_000);
    const { reads, read } = counting(() => ready);
    for (let i = 0; i < 3; i++) expect(await cache.find({ key: 'clip' }, identify, 1_000 + i, read)).toEqual(ready);
    expect(reads.n).toBe(1);
    bus.send(changeNotice('watermark:v1|alice'));
    await cache.find({ key: 'clip' }, identify, 2_000, read);
    expect(reads.n).toBe(2);
    bus.send('some-process video:v1');
    await cache.find({ key: 'clip' }, identify, 2_001, read);
    expect(reads.n).toBe(3);
    // Another row's notice leaves it.
    bus.send(changeNotice('watermark:v9|bob'));
    await cache.find({ key: 'clip' }, identify, 2_002, read);
    expect(reads.n).toBe(3);
    // Past its lifetime it is read again.
    await cache.find({ key: 'clip' }, identify, 2_001 + 30_000, read);
    expect(reads.n).toBe(4);
  });

  it('reads an unsettled or expired answer every time', async () => {
    const bus = new FakeBus();
    const cache = new WatermarkRequestCache(() => bus, 30_000);
    const pending = counting(() => ({ ...ready, watermark: watermark({ status: 'PLAYABLE' }) }));
    for (let i = 0; i < 3; i++) await cache.find({ key: 'clip' }, identify, 1_000, pending.read);
    expect(pending.reads.n).toBe(3);
    const expiring = counting(() => ({ ...ready, watermark: watermark({ expiration: 1_500 }) }));
    await cache.find({ videoId: 'v1' }, identify, 1_000, expiring.read);
    await cache.find({ videoId: 'v1' }, identify, 1_400, expiring.read);
    expect(expiring.reads.n).toBe(1);
    await cache.find({ videoId: 'v1' }, identify, 1_501, expiring.read);
    expect(expiring.reads.n).toBe(2);
  });

  it('keeps nothing read while a notice came, while deaf, or with the lifetime 0; a drop empties it', async () => {
    const bus = new FakeBus();
    const cache = new WatermarkRequestCache(() => bus, 30_000);
    // A notice (any row's) during the read: what it read may be half of a change, so it is not kept.
    const racing = counting(() => ready);
    await cache.find({ key: 'clip' }, identify, 1_000, async () => {
      bus.send(changeNotice('video:v7'));
      return racing.read();
    });
    expect(cache.size).toBe(0);
    await cache.find({ key: 'clip' }, identify, 1_000, racing.read);
    expect(cache.size).toBe(1);
    bus.drop();
    expect(cache.size).toBe(0);
    await cache.find({ key: 'clip' }, identify, 1_000, racing.read);
    expect(cache.size).toBe(0);
    const off = new WatermarkRequestCache(() => new FakeBus(), 0);
    await off.find({ key: 'clip' }, identify, 1_000, racing.read);
    expect(off.size).toBe(0);
  });

  it('drops a kept read when the source’s stamp moves (another process wrote the file)', async () => {
    let stamp = 1;
    const reads = new KeptReads<number>(() => ({ watch: () => undefined, listening: true, stamp: () => stamp }), {
      lifetimeMs: 10_000,
      max: 2,
      heard: () => {},
    });
    let n = 0;
    const read = async () => ++n;
    expect(await reads.read('a', 0, read, () => true)).toBe(1);
    expect(await reads.read('a', 1, read, () => true)).toBe(1);
    stamp = 2;
    expect(await reads.read('a', 2, read, () => true)).toBe(2);
    // At most `max` entries: the oldest goes.
    await reads.read('b', 3, read, () => true);
    await reads.read('c', 4, read, () => true);
    expect(reads.size).toBe(2);
    expect(await reads.read('a', 5, read, () => true)).toBe(5);
  });
});
