// Watching a store reached over the network (a bucket, a database server): what its real calls report, a cheap probe
// now and then while someone watches, and probes with backoff while it does not answer, so "down since" is known
// without a request waiting on a dead socket, and "back" is noticed without one either.
import { type Dependency, type DependencyListener, type DependencyName, type DependencyStatus, DependencyTracker } from '../core/dependency.js';
import { isUnavailable, WmarkError } from '../core/errors.js';
import type { MediaStore } from './media-store.js';

export interface ProbeMonitorOptions {
  name: DependencyName;
  location: string;
  /** A cheap call with a short deadline; rejects when the store does not answer. */
  probe: () => Promise<void>;
  /** Between probes while it answers and someone watches (default 5 s). */
  everyMs?: number;
  /** Between probes while it does not: from `firstMs`, doubling up to `maxMs` (default 250 ms to 5 s). */
  backoff?: { firstMs: number; maxMs: number };
  now?: () => number;
}

export class ProbeMonitor implements Dependency {
  private readonly tracker: DependencyTracker;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private watched = false;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: ProbeMonitorOptions) {
    this.tracker = new DependencyTracker(options.name, options.location);
  }

  get name(): DependencyName {
    return this.tracker.name;
  }

  get isUp(): boolean {
    return this.tracker.isUp;
  }

  status(): DependencyStatus {
    return this.tracker.status();
  }

  /** Watching starts the periodic probe (a store nobody watches is only judged by its calls). */
  subscribe(listener: DependencyListener): () => void {
    const off = this.tracker.subscribe(listener);
    this.watched = true;
    this.schedule();
    return off;
  }

  /** A real call got no answer: down from now, and probed with backoff until it answers. */
  failed(reason: string): void {
    this.tracker.lost(this.now(), reason);
    this.failures = Math.max(1, this.failures);
    // A heartbeat due in a while gives way to the first probe of the backoff.
    if (this.timer && !this.probing) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
  }

  /** A real call was answered (whatever the answer): the store is there. */
  answered(): void {
    this.failures = 0;
    this.tracker.back();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.closed || this.timer || this.probing) return;
    if (this.tracker.isUp && !this.watched) return;
    const { firstMs, maxMs } = this.options.backoff ?? { firstMs: 250, maxMs: 5_000 };
    const delay = this.tracker.isUp ? (this.options.everyMs ?? 5_000) : Math.min(maxMs, firstMs * 2 ** Math.max(0, this.failures - 1));
    this.timer = setTimeout(() => void this.probe(), delay);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    this.timer = undefined;
    this.probing = true;
    try {
      await this.options.probe();
      this.answered();
    } catch (error) {
      this.failures++;
      this.tracker.lost(this.now(), firstLine(error));
    } finally {
      this.probing = false;
      this.schedule();
    }
  }
}

export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/**
 * `error` as a command that is starting (serve's check of its store, `wmark doctor`) reports it: a store that gives no
 * answer is MEDIA_STORE_FAILED naming where and why, a setting to check, not the 503 a request gets while it waits.
 */
export function unreachableAtStart(store: MediaStore, error: unknown): unknown {
  const reason = store.dependencies.map((d) => d.status().reason).find((r) => r !== undefined);
  if (!isUnavailable(error) || reason === undefined) return error;
  return new WmarkError('MEDIA_STORE_FAILED', `cannot reach the media store ${store.location}: ${reason}`, { cause: error });
}
