// Connections to the render farm's Redis: `redis://HOST:PORT` parsed once, and clients that fail fast when Redis is
// not there at start but reconnect on their own when it restarts later (BullMQ needs maxRetriesPerRequest: null).
import { Redis } from 'ioredis';
import { WmarkError } from '../core/errors.js';
import { parseQueueUrl, redactQueueUrl } from './queue-url.js';

/** How long a command on a connection that never blocks may wait for its answer before it fails. */
export const REDIS_COMMAND_DEADLINE_MS = 3_000;

/**
 * A connected client. Rejects with QUEUE_UNREACHABLE when Redis does not answer within `timeoutMs`; once connected,
 * it reconnects by itself for as long as it lives (a Redis restart mid-job is survived, not reported).
 */
export async function connectRedis(url: string, options: { timeoutMs?: number; name?: string; commandTimeoutMs?: number } = {}): Promise<Redis> {
  const address = parseQueueUrl(url);
  const client = new Redis({
    host: address.host,
    port: address.port,
    db: address.db,
    ...(address.username ? { username: address.username } : {}),
    ...(address.password ? { password: address.password } : {}),
    ...(address.tls ? { tls: {} } : {}),
    ...(options.name ? { connectionName: options.name } : {}),
    maxRetriesPerRequest: null,
    // A command's deadline, for a connection that sends no blocking command (BullMQ's workers and events block).
    ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
    lazyConnect: true,
    // Back off up to 2 s between reconnects: a restarted Redis is picked up within seconds.
    retryStrategy: (times) => Math.min(2_000, 50 * 2 ** Math.min(times, 6)),
  });
  // Reported through the promise below at start; later ones are reconnects ioredis handles.
  let lastError: Error | undefined;
  client.on('error', (error: Error) => (lastError = error));
  const timeoutMs = options.timeoutMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(lastError?.message ?? `no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    await client.ping();
    return client;
  } catch (error) {
    client.disconnect();
    throw new WmarkError('QUEUE_UNREACHABLE', `cannot reach Redis at ${redactQueueUrl(url)}: ${(lastError ?? (error as Error)).message}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
