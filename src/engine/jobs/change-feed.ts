// Change notices ("watermark X moved on"), so a watcher wakes at once instead of on its next poll of the store: within
// this process always, and from the other processes on the same database when its server carries messages (the bus).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChangeBus } from '../state/state-store.js';

export type Topic = `watermark:${string}` | `video:${string}`;

const TOPIC = /^(watermark|video):[^\s]+$/;

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
    this.bus?.publish(`${this.origin} ${topic}`);
  }

  /**
   * Wakes this process's watchers only: for a change others find on their next poll of the store (a job's progress),
   * which is not worth a message (a transaction on a database server) each time.
   */
  notifyHere(topic: Topic): void {
    this.emitter.emit(topic);
  }

  /** Calls `listener` on every notice for `topic`; returns the unsubscribe. */
  subscribe(topic: Topic, listener: () => void): () => void {
    this.bus?.listen((message) => this.received(message));
    this.emitter.on(topic, listener);
    return () => this.emitter.off(topic, listener);
  }

  private received(message: string): void {
    const [origin, topic] = message.split(' ', 2);
    if (origin !== this.origin && topic && TOPIC.test(topic)) this.emitter.emit(topic);
  }
}
