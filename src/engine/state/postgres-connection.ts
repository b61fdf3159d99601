// Reaching a PostgreSQL database, apart from keeping state in it: the URL's check, which errors mean the database
// cannot be reached (as opposed to a wrong statement), the message such an error becomes (never with the password),
// and the one-shot inspection `wmark doctor` and `wmark status` make without changing anything.
import net from 'node:net';
import { WmarkError } from '../../core/errors.js';
import { redactUrl, scrubUrl } from '../../core/redact-url.js';

/**
 * A TCP socket that sends what is written to it within one tick in one write. The driver writes each message of a
 * prepared statement's call (Bind, Describe, Execute, Sync) on its own; sent one by one, they woke the server's backend
 * for a part of the call, and it read the rest on a second wake-up (1.6 reads and 1.1 waits per call, against 1.0
 * and 0.7 when they go together). Given to the driver as its stream (a TLS connection runs over it unchanged).
 */
export class BatchingSocket extends net.Socket {
  private batching = false;

  override write(...args: unknown[]): boolean {
    if (!this.batching) {
      this.batching = true;
      this.cork();
      process.nextTick(() => {
        this.batching = false;
        this.uncork();
      });
    }
    return (super.write as (...a: unknown[]) => boolean)(...args);
  }
}

/** One row per migration applied: version n means the first n lists of MIGRATIONS have run. */
export const MIGRATIONS_TABLE = 'wmark_schema_migrations';

/** Checks that the URL names a PostgreSQL database; the message never shows its password. */
export function checkDatabaseUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') || !parsed.hostname) {
    throw new WmarkError('BAD_DB_URL', `--db ${JSON.stringify(redactUrl(url))}: not a postgres:// URL with a host`);
  }
}

// Errors that mean the database cannot be reached or refuses this client (network, authentication, no such database,
// shut down), as opposed to a statement that is wrong.
// A statement past its deadline (57014, the driver's read timeout, a transaction abandoned) counts as a database that
// does not answer.
const CONNECTION_CODES =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|08...|28...|3D000|57P0[1-3]|57014|25P03|53300)$/;
const CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Query read timeout|no answer within/;

export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return (typeof e?.code === 'string' && CONNECTION_CODES.test(e.code)) || (typeof e?.message === 'string' && CONNECTION_MESSAGES.test(e.message));
}

export function unavailable(url: string, error: unknown): WmarkError {
  const reason = scrubUrl((error as Error).message?.split('\n')[0] || String(error), url);
  // The driver's error keeps the URL's password in its config: it does not travel as the cause.
  return new WmarkError('DATABASE_UNAVAILABLE', `cannot use the PostgreSQL database ${redactUrl(url)}: ${reason}`);
}

/** What `wmark doctor` and `wmark status` learn of a database without changing it (no migration). */
export interface DatabaseInspection {
  /** The URL without its password. */
  database: string;
  serverVersion: string;
  /** The schema version it is at (0: no wmark has opened it yet). */
  schemaVersion: number;
  /** How long one round trip took once connected (ms). */
  roundTripMs: number;
}

/**
 * Connects once, reads the server's and the schema's versions, and leaves: DATABASE_UNAVAILABLE when it cannot.
 * `clock` times the round trip (a monotonic one by default: a round trip is well under a millisecond).
 */
export async function inspectDatabase(url: string, timeoutMs = 5_000, clock: () => number = performance.now.bind(performance)): Promise<DatabaseInspection> {
  checkDatabaseUrl(url);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, application_name: 'wmark', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const started = clock();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    const roundTripMs = clock() - started;
    const table = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [MIGRATIONS_TABLE]);
    const version = table.rows[0]?.present
      ? Number((await client.query<{ version: number }>(`SELECT COALESCE(MAX(version), 0) AS version FROM ${MIGRATIONS_TABLE}`)).rows[0]?.version ?? 0)
      : 0;
    return { database: redactUrl(url), serverVersion: rows[0]?.server_version ?? 'unknown', schemaVersion: version, roundTripMs };
  } catch (error) {
    throw unavailable(url, error);
  } finally {
    await client.end().catch(() => undefined);
  }
}
