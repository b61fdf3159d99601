// The parts an engine depends on beyond this machine (the PostgreSQL state database, a render farm's queue and shared
// store), taken together: which are down, the 503 that a request needing them gets at once, and waits that end with
// that 503 when one goes down meanwhile, instead of holding the request until it is back.
import { type Dependency, type DependencyListener, type DependencyStatus, unavailableError } from '../core/dependency.js';
import type { WmarkError } from '../core/errors.js';

export class Dependencies {
  constructor(
    private readonly list: readonly Dependency[],
    private readonly now: () => number = Date.now,
  ) {}

  statuses(): DependencyStatus[] {
    return this.list.map((d) => d.status());
  }

  get allUp(): boolean {
    return this.list.every((d) => d.status().up);
  }

  /** The catalogued 503 of the first dependency that is down, or undefined. */
  private downError(): WmarkError | undefined {
    const down = this.statuses().find((s) => !s.up);
    return down && unavailableError(down, this.now());
  }

  /** Throws DATABASE_UNAVAILABLE, QUEUE_UNAVAILABLE, ... when one is down: for requests that start work. */
  require(): void {
    const error = this.downError();
    if (error) throw error;
  }

  /**
   * `work`'s outcome, unless a dependency is down or goes down first: then its 503. The work itself goes on (a job
   * waits for the dependency to come back); only the wait for it ends.
   */
  whileUp<T>(work: Promise<T>): Promise<T> {
    if (this.list.length === 0) return work;
    const error = this.downError();
    if (error) {
      work.catch(() => undefined);
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      const off = this.subscribe((status) => {
        if (status.up) return;
        off();
        reject(unavailableError(status, this.now()));
      });
      work.then(
        (value) => {
          off();
          resolve(value);
        },
        (reason: unknown) => {
          off();
          reject(reason);
        },
      );
    });
  }

  /** Hears every change of any of them; returns what unsubscribes. */
  subscribe(listener: DependencyListener): () => void {
    const offs = this.list.map((d) => d.subscribe(listener));
    return () => {
      for (const off of offs) off();
    };
  }
}
