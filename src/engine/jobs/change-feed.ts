// Change notices ("watermark X moved on"), so a watcher wakes at once instead of on its next poll of the store: within
// this process always, and from the other processes on the same database when its server carries messages (the bus).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChangeBus } from '../state/state-store.js';

export type Topic = `watermark:${string}` | `video:${string}`;

const TOPIC = /^(watermark|video):[^\s]+$/;
/** What a progress notice carries, to tell it from a change. */
const PROGRESS = 'progress';

export class ChangeFeed {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  /** Tells this process's own messages from the others' when the bus echoes them back. */
  private readonly origin = randomUUID();

  constructor(private readonly bus?: ChangeBus) {}

  /** Whether other processes' changes arrive here too: watchers can then poll the store seldom. */
  get crossProcess(): boolean {
    return this.bus !== undefined;
  }

  notify(topic: Topic): void {
    this.emitter.emit(topic);
    const message = this.busMessage(topic);
    if (message) this.bus?.publish(message);
  }

  /**
   * The message that tells the other processes of `topic`, for a store to send with the write it announces (one
   * statement, not two); undefined without a bus. The caller still wakes this process's watchers (notifyHere).
   */
  busMessage(topic: Topic): string | undefined {
    return this.bus ? `${this.origin} ${topic}` : undefined;
  }

  /**
   * Wakes this process's watchers only: for a change others find on their next poll of the store (a job's progress),
   * which is not worth a message (a transaction on a database server) each time.
   */
  notifyHere(topic: Topic): void {
    this.emitter.emit(topic);
  }

  /** Wakes this process's watchers of progress (a job's count of work done), not those of changes only. */
  progressed(topic: Topic): void {
    this.emitter.emit(topic, PROGRESS);
  }

  /**
   * Calls `listener` on every notice for `topic`, and on progress too unless `progress` is false (a watcher that
   * waits for a status); returns the unsubscribe.
   */
  subscribe(topic: Topic, listener: () => void, options: { progress?: boolean } = {}): () => void {
    this.bus?.listen((message) => this.received(message));
    const heard = (kind?: string) => {
      if (options.progress !== false || kind !== PROGRESS) listener();
    };
    this.emitter.on(topic, heard);
    return () => this.emitter.off(topic, heard);
  }

  private received(message: string): void {
    const [origin, topic] = message.split(' ', 2);
    if (origin !== this.origin && topic && TOPIC.test(topic)) this.emitter.emit(topic);
  }
}
