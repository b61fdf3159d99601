// The service's job queue: bounded concurrency for renders, and immediate start for jobs that cost no encode.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalJobQueue } from '../../src/engine/job-queue.js';
import { requestWatermark } from '../../src/engine/watermark.js';
import { testEngine, type TestEngine } from '../helpers/engine.js';
import { flat } from '../helpers/fixtures.js';
import { ingestFixture, settingsOf } from '../helpers/watermark-helpers.js';

let engine: TestEngine | undefined;
afterEach(() => engine?.dispose());

describe('LocalJobQueue', () => {
  it('runs at most `concurrency` jobs, but an immediate job starts at once beside them', async () => {
    engine = testEngine();
    const video = await ingestFixture(engine, await flat('336699', 8), 'queue');
    // Hold every render until released, so the queue is observably full.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: string[] = [];
    const inner = engine.runner.ffmpeg;
    engine.runner.ffmpeg = async (args, options) => {
      if (args.includes('libx264')) {
        started.push(String(options?.cwd ?? ''));
        await gate;
      }
      return inner(args, options);
    };
    const make = (text: string) => requestWatermark(engine!, { video: { videoId: video.id }, settings: settingsOf([{ content: text }]), containers: ['m3u8'] }).watermark.id;
    const [a, b, c] = [make('first'), make('second'), make('third')];
    const queue = new LocalJobQueue(engine, 1);
    queue.enqueue(a);
    queue.enqueue(b);
    await new Promise((r) => setTimeout(r, 300));
    expect(started.filter((d) => d.includes(a))).toHaveLength(1);
    expect(started.some((d) => d.includes(b))).toBe(false);
    queue.enqueue(c, { immediate: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(started.some((d) => d.includes(c))).toBe(true);
    expect(started.some((d) => d.includes(b))).toBe(false);
    release();
    const done = await Promise.all([a, b, c].map((id) => queue.waitPlayable(id, 60_000)));
    expect(done.map((w) => w.status === 'PLAYABLE' || w.status === 'READY')).toEqual([true, true, true]);
    await queue.close();
  });
});
