// The render farm's `redis://` URL: parsed once, and shown without its password. Pure, so that the CLI can name a
// queue without loading the Redis client.
import { WmarkError } from '../core/errors.js';
import { redactUrl } from '../core/redact-url.js';

export interface QueueAddress {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
}

/** `redis://[[user]:password@]host[:port][/db]` (or rediss:// for TLS) to connection options. */
export function parseQueueUrl(url: string): QueueAddress {
  const bad = (why: string) => new WmarkError('BAD_QUEUE_URL', `--queue ${JSON.stringify(url)}: ${why}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad('not a URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw bad('only redis:// and rediss:// URLs are supported');
  if (!parsed.hostname) throw bad('no host');
  const port = parsed.port ? Number(parsed.port) : 6379;
  const dbText = parsed.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d{1,2}$/.test(dbText)) throw bad(`"${dbText}" is not a database number`);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port,
    db: dbText === '' ? 0 : Number(dbText),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed.protocol === 'rediss:',
  };
}

/** The URL without its password, for messages and logs. */
export function redactQueueUrl(url: string): string {
  return redactUrl(url);
}
