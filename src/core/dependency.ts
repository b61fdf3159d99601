// A dependency's health as this process sees it (the farm's Redis, its shared media store, the PostgreSQL state
// database): up, or down since when and why, and each change heard once by whoever watches. Pure: callers say the time.
import { type ErrorCode, WmarkError } from './errors.js';

/** The parts a deployment may depend on, by the name /readyz shows. */
export type DependencyName = 'queue' | 'media' | 'database';

/** The catalogued 503 a request that needs the dependency gets while it is down. */
const UNAVAILABLE: Record<DependencyName, { code: ErrorCode; what: string }> = {
  queue: { code: 'QUEUE_UNAVAILABLE', what: "the render farm's queue" },
  media: { code: 'MEDIA_STORE_UNAVAILABLE', what: 'the shared media store' },
  database: { code: 'DATABASE_UNAVAILABLE', what: 'the state database' },
};

/** How the one log line of a change names it. */
const LABEL: Record<DependencyName, string> = { queue: 'queue', media: 'media store', database: 'database' };

export interface DependencyStatus {
  name: DependencyName;
  up: boolean;
  /** Where it is (a URL without its password, a bucket): for this machine's callers only. */
  location: string;
  /** While down: since when (ms since the epoch). */
  downSince?: number;
  /** While down: the last reason heard (it may name addresses: for this machine's callers only). */
  reason?: string;
}

export interface Dependency {
  readonly name: DependencyName;
  status(): DependencyStatus;
  /** Called once per change (lost, back); returns what unsubscribes. */
  subscribe(listener: DependencyListener): () => void;
}

/** Hears a change: the new status, and when it is back, since when it had been away. */
export type DependencyListener = (status: DependencyStatus, awaySince?: number) => void;

/** The state of one dependency, moved by what its monitor hears: a lost connection, a failed or answered call. */
export class DependencyTracker implements Dependency {
  private down: { since: number; reason: string } | undefined;
  private readonly listeners = new Set<DependencyListener>();

  constructor(
    readonly name: DependencyName,
    private readonly location: string,
  ) {}

  get isUp(): boolean {
    return this.down === undefined;
  }

  /** It does not answer (again): a change only the first time, later reasons just replace the shown one. */
  lost(now: number, reason: string): void {
    if (this.down) {
      this.down.reason = reason;
      return;
    }
    this.down = { since: now, reason };
    this.emit();
  }

  /** It answered: a change when it was down. */
  back(): void {
    if (!this.down) return;
    const since = this.down.since;
    this.down = undefined;
    this.emit(since);
  }

  status(): DependencyStatus {
    const base = { name: this.name, location: this.location };
    return this.down ? { ...base, up: false, downSince: this.down.since, reason: this.down.reason } : { ...base, up: true };
  }

  subscribe(listener: DependencyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(awaySince?: number): void {
    const status = this.status();
    for (const listener of [...this.listeners]) listener(status, awaySince);
  }
}

/** The 503 of a request that needs a dependency that is down: its catalogued code, a hint and Retry-After. */
export function unavailableError(status: DependencyStatus, now: number): WmarkError {
  const { code, what } = UNAVAILABLE[status.name];
  const seconds = status.downSince === undefined ? 0 : Math.max(0, Math.round((now - status.downSince) / 1000));
  return new WmarkError(code, `${what} does not answer (for ${seconds} s); this request needs it: send it again shortly`);
}

/** The one log line of a change: lost (with why) or back (with how long it was away). */
export function changeLine(status: DependencyStatus, now: number, awaySince?: number): string {
  const label = LABEL[status.name];
  if (!status.up) return `${label}: lost ${status.location} (${status.reason ?? 'no answer'}); retrying in the background, with backoff`;
  const away = awaySince === undefined ? '' : ` after ${Math.max(0, Math.round((now - awaySince) / 1000))} s`;
  return `${label}: ${status.location} answers again${away}`;
}
