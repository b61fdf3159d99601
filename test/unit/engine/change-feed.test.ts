import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../../src/engine/jobs/change-feed.js';
import type { ChangeBus } from '../../../src/engine/state/state-store.js';

describe('change feed', () => {
  it('wakes a watcher of changes only on changes, and a watcher of progress on both', () => {
    const feed = new ChangeFeed();
    const heard: string[] = [];
    const stopAll = feed.subscribe('watermark:w1', () => heard.push('all'));
    const stopChanges = feed.subscribe('watermark:w1', () => heard.push('changes'), { progress: false });
    feed.progressed('watermark:w1');
    feed.notifyHere('watermark:w1');
    feed.notify('watermark:w1');
    feed.progressed('watermark:w2');
    expect(heard).toEqual(['all', 'all', 'changes', 'all', 'changes']);
    stopAll();
    stopChanges();
    feed.notify('watermark:w1');
    expect(heard).toHaveLength(5);
  });

  it('gives a store the bus message to send with a write, and this process does not wake twice when it comes back', () => {
    expect(new ChangeFeed().busMessage('watermark:w1')).toBeUndefined();
    let onMessage: (message: string) => void = () => undefined;
    const published: string[] = [];
    const bus: ChangeBus = {
      publish: (m) => published.push(m),
      listen: (l) => {
        onMessage = l;
      },
      close: async () => undefined,
    };
    const feed = new ChangeFeed(bus);
    let woken = 0;
    feed.subscribe('watermark:w1', () => woken++);
    const message = feed.busMessage('watermark:w1')!;
    expect(message).toMatch(/ watermark:w1$/);
    expect(published).toEqual([]);
    // Its own message echoed back by the database is not news here; another process's is.
    onMessage(message);
    expect(woken).toBe(0);
    onMessage(`someone-else watermark:w1`);
    expect(woken).toBe(1);
  });
});
