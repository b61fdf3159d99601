// The service's job queue: bounded concurrency for renders, and immediate start for jobs that cost no encode.
import { afterEach, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { inProcessJobQueue } from '../../src/engine/app/job-runs.js';
import { LocalService } from '../../src/engine/app/local-service.js';
import { requestWatermark } from '../../src/engine/watermark/request.js';
import { lastOf } from '../../src/service/watch.js';
import { ingestFixture, settingsOf } from '../helpers/watermark-helpers.js';

let engine: TestEngine | undefined;
afterEach(async () => await engine?.dispose());

describe('InProcessJobQueue', () => {
  it('runs at most `watermarkConcurrency` watermark jobs, but an immediate job starts at once beside them', async () => {
    engine = await testEngine();
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
    const make = async (text: string) =>
      (await requestWatermark(engine!, { video: { videoId: video.id }, settings: settingsOf([{ content: text }]), containers: ['m3u8'] })).watermark.id;
    const [a, b, c] = [await make('first'), await make('second'), await make('third')];
    const jobStatus = async (id: string) => (await engine!.store.getJob(`watermark:${id}`))?.status;
    const queue = inProcessJobQueue(engine, { concurrency: 1, watermarkConcurrency: 1 });
    queue.enqueue({ kind: 'watermark', id: a });
    queue.enqueue({ kind: 'watermark', id: b });
    await new Promise((r) => setTimeout(r, 300));
    expect([await jobStatus(a), await jobStatus(b)]).toEqual(['running', 'queued']);
    expect(started.filter((d) => d.includes(a))).toHaveLength(1);
    expect(started.some((d) => d.includes(b))).toBe(false);
    queue.enqueue({ kind: 'watermark', id: c }, { immediate: true });
    await new Promise((r) => setTimeout(r, 300));
    // The immediate job runs beside the full queue, while b still waits for its turn.
    expect([await jobStatus(a), await jobStatus(b), await jobStatus(c)]).toEqual(['running', 'queued', 'running']);
    expect(started.some((d) => d.includes(b))).toBe(false);
    // Its segment render, though, waits for encoder threads: every render of the process shares one budget, and a's
    // opening segment holds all of it (an immediate job that really costs no encode, a forensic-only one, needs none).
    expect(engine.renderer.depth()).toMatchObject({ now: 1, running: 1 });
    expect(started.some((d) => d.includes(c))).toBe(false);
    release();
    // Watched the way every caller watches a job: its progress stream, until playable.
    const service = new LocalService(engine, { queue, baseUrl: 'http://127.0.0.1:8080' });
    const done = await Promise.all(
      [a, b, c].map((id) => lastOf(service.watermarks.watch({ status: 'PENDING', id }, 'playable', { deadline: Date.now() + 60_000 }))),
    );
    expect(done.map((p) => p.status)).toEqual(['READY', 'READY', 'READY']);
    await queue.close();
  });
});
