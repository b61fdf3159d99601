// The render scheduler with fake renders that finish when the test says: urgency order, thread shares, sharing of one
// render between callers, preemption of background and ahead renders by a waiting request, round robin of ahead
// windows between viewers, failures and cancellation.
import { describe, expect, it } from 'vitest';
import { PREEMPT_BACKGROUND_MS, pickNext, type QueuedRender, RenderScheduler } from '../../../src/engine/render/render-scheduler.js';

interface FakeRender {
  key: string;
  threads: number;
  urgency: string;
  signal: AbortSignal;
  settled: boolean;
  finish: () => void;
  fail: (e: Error) => void;
}

/** A scheduler whose renders are recorded when they start and finish when the test calls finish(). */
function harness(threads: number, options: { now?: () => number } = {}) {
  const scheduler = new RenderScheduler(threads, options);
  const started: FakeRender[] = [];
  const work = (key: string) => (t: number, signal: AbortSignal, urgency: string) =>
    new Promise<void>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(new Error(`${key} stopped`)), { once: true });
      const r: FakeRender = {
        key,
        threads: t,
        urgency,
        signal,
        settled: false,
        finish: () => {
          r.settled = true;
          resolve();
        },
        fail: (e) => {
          r.settled = true;
          reject(e);
        },
      };
      started.push(r);
    });
  const running = () => started.filter((r) => !r.signal.aborted && !r.settled).map((r) => r.key);
  const finish = async (key: string) => {
    const r = started.filter((s) => s.key === key && !s.signal.aborted && !s.settled).at(-1);
    if (!r) throw new Error(`${key} is not running`);
    r.finish();
    await tick();
  };
  return { scheduler, started, work, running, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('pickNext', () => {
  const q = (urgency: QueuedRender['urgency'], seq: number, group = 'w'): QueuedRender => ({ urgency, seq, group });

  it('takes the most urgent first, the oldest among equals', () => {
    expect(pickNext([q('background', 0), q('ahead', 1), q('now', 3), q('now', 2)])).toBe(3);
    expect(pickNext([q('background', 5), q('background', 4)])).toBe(1);
    expect(pickNext([])).toBe(-1);
  });

  it('gives ahead renders to each watermark in turn', () => {
    const queue = [q('ahead', 0, 'a'), q('ahead', 1, 'a'), q('ahead', 2, 'b'), q('ahead', 3, 'c')];
    expect(pickNext(queue)).toBe(0);
    expect(pickNext(queue, 'a')).toBe(2);
    expect(pickNext(queue, 'b')).toBe(3);
    expect(pickNext(queue, 'c')).toBe(0);
  });
});

describe('RenderScheduler', () => {
  it('gives a render somebody waits for every free thread, others one each', async () => {
    const h = harness(2);
    void h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    expect(h.started.map((r) => [r.key, r.threads])).toEqual([['a/0', 2]]);
    void h.scheduler.render('a/1', 'background', 'a', h.work('a/1'));
    void h.scheduler.render('a/2', 'background', 'a', h.work('a/2'));
    expect(h.running()).toEqual(['a/0']);
    await h.finish('a/0');
    expect(h.started.slice(1).map((r) => [r.key, r.threads])).toEqual([
      ['a/1', 1],
      ['a/2', 1],
    ]);
  });

  it('gives an urgent render no more threads than it can use, and the rest to the next renders at once', async () => {
    const h = harness(2);
    void h.scheduler.render('a/0', 'now', 'a', h.work('a/0'), undefined, { maxThreads: 1 });
    void h.scheduler.render('b/0', 'now', 'b', h.work('b/0'), undefined, { maxThreads: 1 });
    void h.scheduler.render('c/0', 'now', 'c', h.work('c/0'), undefined, { maxThreads: 1 });
    expect(h.started.map((r) => [r.key, r.threads])).toEqual([
      ['a/0', 1],
      ['b/0', 1],
    ]);
    expect(h.scheduler.depth()).toMatchObject({ now: 1, running: 2 });
    await h.finish('a/0');
    expect(h.running()).toEqual(['b/0', 'c/0']);
    // One that can use every thread still gets them when they are free.
    await h.finish('b/0');
    await h.finish('c/0');
    void h.scheduler.render('d/0', 'now', 'd', h.work('d/0'));
    expect(h.started.at(-1)).toMatchObject({ key: 'd/0', threads: 2 });
  });

  it('shares one render between callers of the same key, and makes it more urgent', async () => {
    const h = harness(1);
    void h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    const background = h.scheduler.render('b/5', 'background', 'b', h.work('b/5'));
    void h.scheduler.render('c/0', 'ahead', 'c', h.work('c/0'));
    const player = h.scheduler.render('b/5', 'now', 'b', h.work('b/5 again'));
    expect(h.scheduler.depth()).toEqual({ now: 1, ahead: 1, background: 0, running: 1 });
    await h.finish('a/0');
    // b/5 went before the ahead render once a player asked for it, and ran once for both callers.
    expect(h.running()).toEqual(['b/5']);
    await h.finish('b/5');
    await expect(Promise.all([background, player])).resolves.toEqual([undefined, undefined]);
    expect(h.started.map((r) => r.key)).toEqual(['a/0', 'b/5', 'c/0']);
  });

  it('stops ahead and background renders for a waiting request, and runs them again afterwards', async () => {
    const h = harness(2);
    const ahead = h.scheduler.render('a/7', 'ahead', 'a', h.work('a/7'));
    void h.scheduler.render('b/3', 'background', 'b', h.work('b/3'));
    expect(h.running()).toEqual(['a/7', 'b/3']);
    const seek = h.scheduler.render('c/120', 'now', 'c', h.work('c/120'));
    await tick();
    // Both were stopped, so the request gets both threads.
    expect(h.running()).toEqual(['c/120']);
    expect(h.started.at(-1)!.threads).toBe(2);
    expect(h.scheduler.stats.preempted).toBe(2);
    await h.finish('c/120');
    await seek;
    expect(h.running()).toEqual(['a/7', 'b/3']);
    await h.finish('a/7');
    await expect(ahead).resolves.toBeUndefined();
  });

  it('never stops a quick render for a waiting request: the request takes the next thread that frees', async () => {
    const h = harness(2);
    const band = { maxThreads: 1, quick: true };
    const ahead = h.scheduler.render('a/7', 'ahead', 'a', h.work('a/7'), undefined, band);
    void h.scheduler.render('b/3', 'ahead', 'b', h.work('b/3'), undefined, band);
    const asked = h.scheduler.render('c/2', 'now', 'c', h.work('c/2'), undefined, band);
    await tick();
    expect(h.running()).toEqual(['a/7', 'b/3']);
    expect(h.scheduler.stats.preempted).toBe(0);
    await h.finish('b/3');
    expect(h.running()).toEqual(['a/7', 'c/2']);
    expect(h.started.at(-1)).toMatchObject({ key: 'c/2', threads: 1 });
    await h.finish('c/2');
    await h.finish('a/7');
    await expect(Promise.all([ahead, asked])).resolves.toEqual([undefined, undefined]);
    expect(h.started.map((r) => r.key)).toEqual(['a/7', 'b/3', 'c/2']);
  });

  it('leaves a background render that is well under way to finish, and starts the request on the next free thread', async () => {
    const h = harness(1);
    void h.scheduler.render('a/3', 'background', 'a', h.work('a/3'));
    await new Promise((resolve) => setTimeout(resolve, PREEMPT_BACKGROUND_MS + 50));
    const asked = h.scheduler.render('b/0', 'now', 'b', h.work('b/0'));
    await tick();
    expect(h.running()).toEqual(['a/3']);
    expect(h.scheduler.stats.preempted).toBe(0);
    await h.finish('a/3');
    expect(h.running()).toEqual(['b/0']);
    await h.finish('b/0');
    await expect(asked).resolves.toBeUndefined();
  });

  it('never stops a render another request waits for', async () => {
    const h = harness(1);
    void h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    void h.scheduler.render('b/0', 'now', 'b', h.work('b/0'));
    await tick();
    expect(h.running()).toEqual(['a/0']);
    expect(h.scheduler.stats.preempted).toBe(0);
    await h.finish('a/0');
    expect(h.running()).toEqual(['b/0']);
  });

  it("keeps one viewer's render-ahead from starving another viewer's", async () => {
    const h = harness(1);
    void h.scheduler.render('x', 'now', 'x', h.work('x'));
    for (const k of [1, 2, 3]) void h.scheduler.render(`a/${k}`, 'ahead', 'a', h.work(`a/${k}`));
    for (const k of [1, 2]) void h.scheduler.render(`b/${k}`, 'ahead', 'b', h.work(`b/${k}`));
    for (const key of ['x', 'a/1', 'b/1', 'a/2', 'b/2']) await h.finish(key);
    expect(h.started.map((r) => r.key)).toEqual(['x', 'a/1', 'b/1', 'a/2', 'b/2', 'a/3']);
  });

  it('rejects every caller when a render fails, and frees its threads', async () => {
    const h = harness(1);
    const first = h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    const second = h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    const next = h.scheduler.render('a/1', 'now', 'a', h.work('a/1'));
    h.started[0]!.fail(new Error('ffmpeg exited with 1'));
    await expect(first).rejects.toThrow('ffmpeg exited with 1');
    await expect(second).rejects.toThrow('ffmpeg exited with 1');
    await tick();
    expect(h.running()).toEqual(['a/1']);
    await h.finish('a/1');
    await expect(next).resolves.toBeUndefined();
  });

  it('cancels a queued render and stops a running one when its signal aborts', async () => {
    const h = harness(1);
    const job = new AbortController();
    const running = h.scheduler.render('a/0', 'background', 'a', h.work('a/0'), job.signal);
    const queued = h.scheduler.render('a/1', 'background', 'a', h.work('a/1'), job.signal);
    job.abort();
    await expect(queued).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(running).rejects.toThrow('a/0 stopped');
    expect(h.started.map((r) => r.key)).toEqual(['a/0']);
    expect(h.scheduler.depth()).toEqual({ now: 0, ahead: 0, background: 0, running: 0 });
  });

  it('tells its listeners of each render that lands, with its seconds by the clock it was given and urgency, and of no failed one', async () => {
    let clock = 1_000_000;
    const h = harness(2, { now: () => clock });
    const heard: { seconds: number; urgency: string }[] = [];
    const off = h.scheduler.onRendered((r) => heard.push(r));
    const failed = h.scheduler.render('a/1', 'background', 'a', h.work('a/1'));
    h.started[0]!.fail(new Error('ffmpeg exited with 1'));
    await expect(failed).rejects.toThrow();
    const done = h.scheduler.render('a/0', 'now', 'a', h.work('a/0'));
    clock += 2_500;
    await h.finish('a/0');
    await done;
    expect(heard).toEqual([{ seconds: 2.5, urgency: 'now' }]);
    off();
    const later = h.scheduler.render('a/2', 'ahead', 'a', h.work('a/2'));
    await h.finish('a/2');
    await later;
    expect(heard).toHaveLength(1);
  });
});

describe('RenderScheduler for a render farm (remote)', () => {
  /** Renders run on other machines: every render takes one slot and nothing is stopped for an urgent one. */
  function remoteHarness(slots: number) {
    const h = harness(1);
    return { ...h, scheduler: new RenderScheduler(slots, { remote: true }) };
  }

  it('gives an urgent render one slot and lets it wait beside the others', async () => {
    const h = remoteHarness(3);
    void h.scheduler.render('a/1', 'background', 'a', h.work('a/1'));
    void h.scheduler.render('a/2', 'background', 'a', h.work('a/2'));
    void h.scheduler.render('b/0', 'now', 'b', h.work('b/0'));
    expect(h.started.map((r) => [r.key, r.threads])).toEqual([
      ['a/1', 1],
      ['a/2', 1],
      ['b/0', 1],
    ]);
    expect(h.running()).toEqual(['a/1', 'a/2', 'b/0']);
    expect(h.scheduler.stats.preempted).toBe(0);
  });

  it('bounds the renders waiting at once, the most urgent next when a slot frees', async () => {
    const h = remoteHarness(1);
    const first = h.scheduler.render('a/1', 'background', 'a', h.work('a/1'));
    void h.scheduler.render('a/2', 'background', 'a', h.work('a/2'));
    void h.scheduler.render('b/0', 'now', 'b', h.work('b/0'));
    expect(h.running()).toEqual(['a/1']);
    await h.finish('a/1');
    await first;
    expect(h.running()).toEqual(['b/0']);
  });

  it('restarts a waiting render asked for more urgently, so that the farm hears the new urgency', async () => {
    const h = remoteHarness(4);
    const background = h.scheduler.render('a/3', 'background', 'a', h.work('a/3'));
    const now = h.scheduler.render('a/3', 'now', 'a', h.work('a/3'));
    await tick();
    expect(h.started.map((r) => [r.key, r.urgency, r.signal.aborted])).toEqual([
      ['a/3', 'background', true],
      ['a/3', 'now', false],
    ]);
    await h.finish('a/3');
    await Promise.all([background, now]);
  });
});
