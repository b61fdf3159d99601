// Change notices between processes that share a PostgreSQL database: NOTIFY on one channel, and one connection per
// process that LISTENs, opened when the first watcher subscribes and opened again after it drops. A notice lost while
// it is down costs a watcher no more than its fallback poll.
import type { Client, ClientConfig, Pool } from 'pg';
import type { ChangeBus } from './change-bus.js';
import type { BusWatcher, NoticeSource } from './kept-reads.js';

/** The channel every wmark on a database NOTIFYs and LISTENs on. */
export const CHANNEL = 'wmark_changes';
const RECONNECT_MS = 1000;

export class PostgresChangeBus implements ChangeBus, NoticeSource {
  private listener: ((message: string) => void) | undefined;
  private readonly watchers = new Set<BusWatcher>();
  private started = false;
  private client: Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly newClient: (config: ClientConfig) => Client,
    private readonly config: ClientConfig,
  ) {}

  publish(message: string): void {
    // Best effort: a watcher elsewhere that misses it finds the change on its next poll.
    this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, message]).catch(() => undefined);
  }

  listen(onMessage: (message: string) => void): void {
    if (this.listener) return;
    this.listener = onMessage;
    this.start();
  }

  /** Tells `watcher` of every notice, and of every drop of the LISTEN connection (it is opened again after). */
  watch(watcher: BusWatcher): void {
    this.watchers.add(watcher);
    this.start();
  }

  /** Resolves when `message` arrives here, the connection drops, or `waitMs` passes; at once while not listening. */
  heard(message: string, waitMs: number): Promise<void> {
    if (!this.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.watchers.delete(watcher);
        resolve();
      };
      const watcher: BusWatcher = { message: (m) => m === message && done(), lost: done };
      const timer = setTimeout(done, waitMs);
      this.watchers.add(watcher);
    });
  }

  /** A constant: every change on a database server comes with its notice, so nothing moves unheard but a drop (lost). */
  stamp(): number {
    return 0;
  }

  /** True while this process LISTENs: a notice sent now reaches it. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = this.newClient(this.config);
    const retry = () => {
      if (this.client === client) {
        this.client = undefined;
        for (const w of this.watchers) w.lost();
      }
      client.end().catch(() => undefined);
      if (this.closed || this.reconnect) return;
      this.reconnect = setTimeout(() => {
        this.reconnect = undefined;
        void this.connect();
      }, RECONNECT_MS).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      this.listener?.(n.payload);
      for (const w of this.watchers) w.message(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.closed) await client.end();
      else this.client = client;
    } catch {
      retry();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}
