// Reads an instance keeps for a while, dropped at once when a notice says their rows changed. The discipline of every
// such cache in the store: a read is kept only when nothing could have been missed while it ran (the notices were
// heard before and after, none of them dropped anything meanwhile, and the source's stamp did not move), a kept read
// lives at most its lifetime, and the source going deaf (the LISTEN connection dropping) empties the cache.

/** Something that must know of every notice, or else that it may have missed some (a cache). */
export interface BusWatcher {
  message(message: string): void;
  /** The LISTEN connection dropped: notices sent from now until it is back are lost to this process. */
  lost(): void;
}

/** Where a cache hears of changes: a database server's notices (PostgreSQL), or nothing but a stamp (SQLite). */
export interface NoticeSource {
  watch(watcher: BusWatcher): void;
  /** True while this process hears every notice sent now. */
  readonly listening: boolean;
  /**
   * A number that moves whenever another process may have written without a notice (SQLite's data_version): a read
   * is kept only while it stands still, and a kept read is good only while it still equals the one it was kept at. A
   * source whose every change comes with a notice (a database server's) answers a constant.
   */
  stamp(): number;
}

export interface KeptReadsOptions {
  /** How long a read is trusted at most: what a notice lost without the connection dropping can cost. */
  lifetimeMs: number;
  /** Entries kept at most (the oldest go first). */
  max: number;
  /** Every notice heard (the cache's owner drops what it names). */
  heard: (message: string) => void;
}

/** Whether a kept entry may answer at `now`: younger than the lifetime, and the source's stamp where it was. */
export function isFresh(entry: { at: number; stamp: number }, now: number, lifetimeMs: number, stamp: number): boolean {
  return now >= entry.at && now - entry.at < lifetimeMs && entry.stamp === stamp;
}

export class KeptReads<V> {
  private readonly kept = new Map<string, { value: V; at: number; stamp: number }>();
  /** Moves on with every drop (a notice, a write here) and every time the source goes deaf. */
  private epoch = 0;
  private source: NoticeSource | undefined;

  constructor(
    private readonly sourceOf: () => NoticeSource,
    private readonly options: KeptReadsOptions,
  ) {}

  /**
   * The value kept under `key`, or `read` now; a value read is kept when `keep` says it may be and nothing could have
   * been missed while it was read. `good` is asked of a kept value on every hit (its own expiry, say).
   */
  async read(key: string, now: number, read: () => Promise<V>, keep: (value: V) => boolean, good: (value: V) => boolean = () => true): Promise<V> {
    const source = this.listen();
    const stamp = source.stamp();
    const hit = this.kept.get(key);
    if (hit && isFresh(hit, now, this.options.lifetimeMs, stamp) && good(hit.value)) return hit.value;
    const [epoch, listening] = [this.epoch, source.listening];
    const value = await read();
    this.kept.delete(key);
    if (this.options.lifetimeMs > 0 && keep(value) && listening && source.listening && epoch === this.epoch && source.stamp() === stamp) {
      if (this.kept.size >= this.options.max) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, { value, at: now, stamp });
    }
    return value;
  }

  /** Forgets every entry `matches` names, and any read under way (it may have seen the change half done). */
  drop(matches: (key: string, value: V) => boolean): void {
    this.epoch++;
    for (const [key, { value }] of this.kept) if (matches(key, value)) this.kept.delete(key);
  }

  /** How long a read is trusted at most (0: never kept). */
  get lifetimeMs(): number {
    return this.options.lifetimeMs;
  }

  /** Entries kept now. */
  get size(): number {
    return this.kept.size;
  }

  private listen(): NoticeSource {
    if (this.source) return this.source;
    const source = this.sourceOf();
    source.watch({
      message: (message) => this.options.heard(message),
      lost: () => {
        this.epoch++;
        this.kept.clear();
      },
    });
    this.source = source;
    return source;
  }
}
