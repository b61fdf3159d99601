// In-process change notices ("watermark X moved on"), so a watcher in the same process wakes at once instead of on
// its next poll of the store. Other processes are seen through the store alone.
import { EventEmitter } from 'node:events';

export type Topic = `watermark:${string}` | `video:${string}`;

export class ChangeFeed {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  notify(topic: Topic): void {
    this.emitter.emit(topic);
  }

  /** Calls `listener` on every notice for `topic`; returns the unsubscribe. */
  subscribe(topic: Topic, listener: () => void): () => void {
    this.emitter.on(topic, listener);
    return () => this.emitter.off(topic, listener);
  }
}
