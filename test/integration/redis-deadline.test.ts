// A Redis that keeps its sockets open but stops answering (SIGSTOP), under the farm's own queue connection: it is
// marked down within 5 s, a command sent meanwhile fails at its deadline instead of waiting for Redis to wake, and
// once Redis runs on (SIGCONT) it is marked up again and commands are answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { waitFor } from '../../harness/serve-helpers.js';
import { connectRedis, REDIS_COMMAND_DEADLINE_MS } from '../../src/farm/redis-connection.js';
import { watchRedis } from '../../src/farm/redis-health.js';

/** Marked down within this, with a margin for this shared machine's noise. */
const BOUND_MS = 5_000;
const NOISE_MS = 1_000;

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  redis?.process?.kill('SIGCONT');
  await redis?.stop();
});

describe('a Redis that stops answering', () => {
  it('is marked down within 5 s, its commands fail at their deadline, and it is marked up once it answers', async () => {
    const client = await connectRedis(redis.url, { name: 'wmark-queue', commandTimeoutMs: REDIS_COMMAND_DEADLINE_MS });
    const health = watchRedis(client, redis.url);
    try {
      await client.set('before', '1');
      redis.process!.kill('SIGSTOP');
      const frozenAt = performance.now();
      const command = client.get('before').then(
        () => ({ outcome: 'answered', ms: performance.now() - frozenAt }),
        (error: Error) => ({ outcome: error.message, ms: performance.now() - frozenAt }),
      );
      await waitFor(() => (health.isUp ? undefined : true), 'the health to say Redis is down', BOUND_MS + NOISE_MS, 50);
      const downAfter = performance.now() - frozenAt;
      const { outcome, ms: commandAfter } = await command;
      expect(outcome).toMatch(/timed out/i);
      console.info(`marked down after ${Math.round(downAfter)} ms; the command failed after ${Math.round(commandAfter)} ms`);
      expect(downAfter).toBeLessThan(BOUND_MS);
      expect(commandAfter).toBeLessThan(REDIS_COMMAND_DEADLINE_MS + NOISE_MS);
      expect(health.status()).toMatchObject({ name: 'queue', up: false });
      redis.process!.kill('SIGCONT');
      await waitFor(() => (health.isUp ? true : undefined), 'the health to say Redis is back', 10_000, 50);
      expect(await client.get('before')).toBe('1');
    } finally {
      redis.process?.kill('SIGCONT');
      health.close();
      client.disconnect();
    }
  }, 30_000);
});
