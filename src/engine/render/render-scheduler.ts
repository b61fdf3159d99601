// One budget of encoder threads for every segment render of a process, spent by urgency: a segment somebody is
// waiting for (a player's request, a new watermark's opening) first, then render-ahead for viewers, round robin over
// watermarks so that one viewer's window cannot starve another's, then full renders in the background. A waiting
// urgent render takes the threads of running ahead or background renders: those are stopped and queued again.
import { WmarkError } from '../../core/errors.js';
import { MAX_SHARED_RENDERS } from '../../core/plan/render-args.js';

/** `now`: somebody waits for it; `ahead`: a viewer will probably ask for it soon; `background`: a full render. */
export type RenderUrgency = 'now' | 'ahead' | 'background';

const RANK: Record<RenderUrgency, number> = { now: 0, ahead: 1, background: 2 };

/** Renders one segment with this many threads, as urgent as `urgency`; must stop (reject) when the signal aborts. */
export type RenderWork = (threads: number, signal: AbortSignal, urgency: RenderUrgency) => Promise<void>;

/**
 * A render that can run together with others of the same `key` (the same source segment, for several viewers): when
 * one starts, the others queued at that moment join it, and `runMany` does them all in one go (one decode).
 */
export interface SharedRender {
  key: string;
  runMany(members: SharedRender[], threads: number, signal: AbortSignal): Promise<void>;
}

/** How a render runs beside others. */
export interface RenderOptions {
  /** Renders of the same source that may run as one (several viewers of a clean segment). */
  share?: SharedRender;
  /**
   * The most threads it can use (a band render runs one ffmpeg and one x264 thread in turn): an urgent render gets
   * no more than this, and the rest of the budget goes to the next render in the queue.
   */
  maxThreads?: number;
  /**
   * It ends in a fraction of a second (a band render): never stopped to make room for an urgent render, which waits
   * for the next thread to free instead. Stopping it would throw its work away to gain less than its run.
   */
  quick?: boolean;
}

/** A background render younger than this is stopped for an urgent one; an older one is left to finish. */
export const PREEMPT_BACKGROUND_MS = 300;

export interface QueuedRender {
  urgency: RenderUrgency;
  /** Arrival order; a render stopped to make room keeps its place. */
  seq: number;
  /** The watermark it belongs to (ahead renders take turns by group). */
  group: string;
}

/**
 * Which queued render starts next: the most urgent; among `now` and `background` the oldest; among `ahead` the oldest
 * of the group that follows `lastAheadGroup` in first-arrival order, so that every viewer's window advances in turn.
 */
export function pickNext(queue: readonly QueuedRender[], lastAheadGroup?: string): number {
  if (queue.length === 0) return -1;
  const best = Math.min(...queue.map((q) => RANK[q.urgency]));
  const candidates = queue.map((q, i) => ({ q, i })).filter(({ q }) => RANK[q.urgency] === best);
  const oldest = (list: typeof candidates) => list.reduce((a, b) => (b.q.seq < a.q.seq ? b : a));
  if (candidates[0]!.q.urgency !== 'ahead') return oldest(candidates).i;
  const groups = [...new Set(candidates.sort((a, b) => a.q.seq - b.q.seq).map(({ q }) => q.group))];
  const next = groups[(groups.indexOf(lastAheadGroup ?? '') + 1) % groups.length]!;
  return oldest(candidates.filter(({ q }) => q.group === next)).i;
}

interface Task extends QueuedRender {
  key: string;
  work: RenderWork;
  promise: Promise<void>;
  settle: { resolve: () => void; reject: (e: unknown) => void };
  /** While running: its threads and how to stop it; `preempted` when stopped to make room (it is queued again). */
  run?: { threads: number; controller: AbortController; preempted: boolean; members: Task[]; startedAt: number };
  signal?: AbortSignal;
  share?: SharedRender;
  maxThreads?: number;
  quick?: boolean;
}

/** A render that finished and put its output: how long it ran (from its last start), and how urgent it was. */
export type RenderListener = (render: { seconds: number; urgency: RenderUrgency }) => void;

export interface RenderStats {
  /** Renders started (a preempted one counts again when it restarts). */
  started: number;
  preempted: number;
}

export class RenderScheduler {
  private readonly queue: Task[] = [];
  private readonly running = new Set<Task>();
  private readonly byKey = new Map<string, Task>();
  /** One abort listener per signal (a job passes its own to every segment it asks for), not one per render. */
  private readonly bySignal = new WeakMap<AbortSignal, Set<Task>>();
  private seq = 0;
  private lastAheadGroup?: string;
  readonly stats: RenderStats = { started: 0, preempted: 0 };
  private readonly listeners = new Set<RenderListener>();

  /**
   * `threads`: the encoder threads the process may use at once (its cores). With `remote`, renders run elsewhere (a
   * render farm's workers): `threads` counts renders waiting at once, each takes one, and none is stopped for a more
   * urgent one, since stopping a wait frees no machine (the farm's queue orders the work). `now` is the engine's
   * clock (how long a render has run: whether it may still be stopped, and its seconds for the metrics).
   */
  constructor(
    private readonly threads: number,
    private readonly options: { remote?: boolean; now?: () => number } = {},
  ) {
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, got ${threads}`);
  }

  /**
   * Runs `work` for `key` once: a render already queued or running under that key is shared (and made more urgent if
   * this caller is more urgent). `now` renders get every free thread (up to their `maxThreads`), the others one.
   * `signal` cancels it for the caller that created it.
   */
  render(key: string, urgency: RenderUrgency, group: string, work: RenderWork, signal?: AbortSignal, options: RenderOptions = {}): Promise<void> {
    const { share, maxThreads, quick } = options;
    const existing = this.byKey.get(key);
    if (existing) {
      if (RANK[urgency] < RANK[existing.urgency]) {
        existing.urgency = urgency;
        // A remote render waits at its old urgency: it is restarted, which asks the farm again, more urgently.
        if (this.options.remote && existing.run && !existing.run.preempted) {
          existing.run.preempted = true;
          existing.run.controller.abort();
        }
        this.pump();
      }
      return existing.promise;
    }
    if (signal?.aborted) return Promise.reject(new WmarkError('CANCELLED', 'render cancelled'));
    let settle!: Task['settle'];
    const promise = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const task: Task = {
      key,
      urgency,
      group,
      seq: this.seq++,
      work,
      promise,
      settle,
      ...(signal ? { signal } : {}),
      ...(share ? { share } : {}),
      ...(maxThreads ? { maxThreads } : {}),
      ...(quick ? { quick } : {}),
    };
    if (signal) this.watch(signal, task);
    this.byKey.set(key, task);
    this.queue.push(task);
    this.pump();
    return promise;
  }

  /** Renders started, and how many of them ran as part of a shared render (joined another). */
  readonly shared = { joined: 0 };

  /** Hears every render that finishes with its output (metrics); returns what unsubscribes. */
  onRendered(listener: RenderListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Renders queued or running, by urgency (for status pages and tests). */
  depth(): Record<RenderUrgency | 'running', number> {
    const count = (u: RenderUrgency) => this.queue.filter((t) => t.urgency === u).length;
    return { now: count('now'), ahead: count('ahead'), background: count('background'), running: this.running.size };
  }

  private free(): number {
    let used = 0;
    for (const t of this.running) used += t.run!.threads;
    return this.threads - used;
  }

  private pump(): void {
    this.makeRoom();
    // Stopped renders are still winding down: an urgent render waits for all of their threads, not just the first.
    if (this.urgentWaiting() && [...this.running].some((t) => t.run!.preempted)) return;
    while (this.free() > 0 && this.queue.length) {
      const i = pickNext(this.queue, this.lastAheadGroup);
      const task = this.queue.splice(i, 1)[0]!;
      if (task.urgency === 'ahead') this.lastAheadGroup = task.group;
      this.start(task, task.urgency === 'now' && !this.options.remote ? Math.min(this.free(), task.maxThreads ?? Infinity) : 1);
    }
    this.makeRoom();
  }

  private urgentWaiting(): boolean {
    return this.queue.some((t) => t.urgency === 'now');
  }

  /**
   * An urgent render still waiting takes the threads of the less urgent ones: render-ahead always (it is a guess),
   * a background render only in its first moments (stopping one that is well under way throws its work away, and
   * when many viewers start at once, as in a batch, that adds up to more than the wait it saves), a quick one never.
   */
  private makeRoom(): void {
    if (this.options.remote || !this.urgentWaiting()) return;
    const now = this.now();
    for (const t of this.running) {
      const stoppable = !t.quick && (t.urgency === 'ahead' || (t.urgency === 'background' && now - t.run!.startedAt < PREEMPT_BACKGROUND_MS));
      if (stoppable && !t.run!.preempted) {
        t.run!.preempted = true;
        this.stats.preempted++;
        t.run!.controller.abort();
      }
    }
  }

  private start(task: Task, threads: number): void {
    const controller = new AbortController();
    // Renders of the same source queued right now join this one (its urgency and threads; one decode for all).
    const members = task.share ? this.queue.filter((t) => t.share?.key === task.share!.key).slice(0, MAX_SHARED_RENDERS - 1) : [];
    for (const m of members) this.queue.splice(this.queue.indexOf(m), 1);
    this.shared.joined += members.length;
    task.run = { threads, controller, preempted: false, members, startedAt: this.now() };
    this.running.add(task);
    this.stats.started++;
    const run = members.length
      ? task.share!.runMany([task.share!, ...members.map((m) => m.share!)], threads, controller.signal)
      : task.work(threads, controller.signal, task.urgency);
    run.then(
      () => {
        this.rendered(task);
        this.finish(task, (t) => t.settle.resolve());
      },
      (error: unknown) => {
        if (task.run!.preempted && !task.signal?.aborted) {
          // Stopped to make room: back in the queue at their old places, their waiters still waiting.
          this.running.delete(task);
          delete task.run;
          this.queue.push(task, ...members);
          this.pump();
          return;
        }
        this.finish(task, (t) => t.settle.reject(error));
      },
    );
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Tells the listeners of a render that finished, and of every render that shared its decode. */
  private rendered(task: Task): void {
    if (this.listeners.size === 0) return;
    const seconds = (this.now() - task.run!.startedAt) / 1000;
    for (const t of [task, ...task.run!.members]) for (const listener of this.listeners) listener({ seconds, urgency: t.urgency });
  }

  private finish(task: Task, settle: (t: Task) => void): void {
    this.running.delete(task);
    for (const t of [task, ...task.run!.members]) {
      this.byKey.delete(t.key);
      if (t.signal) this.bySignal.get(t.signal)?.delete(t);
      settle(t);
    }
    this.pump();
  }

  private watch(signal: AbortSignal, task: Task): void {
    let tasks = this.bySignal.get(signal);
    if (!tasks) {
      const set = new Set<Task>();
      tasks = set;
      this.bySignal.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          for (const t of [...set]) this.cancel(t);
        },
        { once: true },
      );
    }
    tasks.add(task);
  }

  private cancel(task: Task): void {
    const queued = this.queue.indexOf(task);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.byKey.delete(task.key);
      task.settle.reject(new WmarkError('CANCELLED', 'render cancelled'));
    } else task.run?.controller.abort();
  }
}
