// The state store on PostgreSQL (--db, WMARK_DB_URL, db.url): a `pg` pool behind the SqlDatabase interface, so the
// one SQL store serves it as it serves SQLite, and migrations run once, under an advisory lock, whichever instance
// opens the database first. The database server is watched like the farm's queue and store: lost, a call is its 503
// at once, and probes with backoff notice its return. `pg` is loaded only here and in postgres-connection.ts (the
// inspection), and these modules only with a URL.
import { createHash } from 'node:crypto';
import type { Client, Pool, QueryResult } from 'pg';
import { type Dependency, unavailableError } from '../../core/dependency.js';
import { WmarkError } from '../../core/errors.js';
import { redactUrl, scrubUrl } from '../../core/redact-url.js';
import { firstLine, ProbeMonitor } from '../../media/reachability.js';
import { CredentialCache, REVOKED } from './credential-cache.js';
import { CHANNEL, PostgresChangeBus } from './postgres-change-bus.js';
import { BatchingSocket, checkDatabaseUrl, isConnectionError, MIGRATIONS_TABLE, unavailable } from './postgres-connection.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import type { PoolUse, SqlDatabase, SqlStatement } from './sql-database.js';
import { SqlStateStore } from './sql-state-store.js';
import type { CredentialRecord } from './state-store.js';

/** The advisory lock every wmark takes to migrate a database ("wmark" in ASCII): one migrates, the others wait. */
const MIGRATION_LOCK = 0x776d61726b;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
/** Connections the pool opens at most. */
const POOL_MAX = 10;
/** A probe of a lost database that gets no answer within this long counts as one more failure. */
const PROBE_DEADLINE_MS = 3_000;
/**
 * How long one call may take at each step: waiting for a pool connection, one statement (timed by the driver, and by
 * the server as statement_timeout), and a whole transaction. Past it the call is DATABASE_UNAVAILABLE and the database
 * is marked down, so a request that meets a frozen database answers within twice this (a checkout, then a statement),
 * and the requests after it at once.
 */
const CALL_DEADLINE_MS = 2_000;
/** How long a change waits to hear its own notice back before it answers anyway. */
const ECHO_WAIT_MS = 500;
/** A transaction the server sees idle this long (its client gone quiet) is ended by the server, releasing its locks. */
const IDLE_IN_TRANSACTION_MS = 10_000;

/** `?` placeholders to PostgreSQL's `$1, $2, …`, leaving string literals and quoted names alone. */
export function numberedPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else {
      out += ch === '?' ? `$${++n}` : ch;
    }
  }
  return out;
}

/** SQLSTATE 0A000, which PostgreSQL answers for a prepared statement whose result columns a schema change altered. */
const FEATURE_NOT_SUPPORTED = '0A000';

/** Applies pending migrations under the advisory lock; resolves with how many this call applied. */
async function migrate(client: Client, url: string, now: () => number): Promise<number> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_on BIGINT NOT NULL)`);
    const { rows } = await client.query<{ version: number }>(`SELECT COALESCE(MAX(version), 0) AS version FROM ${MIGRATIONS_TABLE}`);
    const version = Number(rows[0]?.version ?? 0);
    if (version > SCHEMA_VERSION) {
      throw new WmarkError(
        'DATABASE_TOO_NEW',
        `the state database ${redactUrl(url)} has schema v${version}, newer than this wmark knows (v${SCHEMA_VERSION})`,
        { hint: 'Run a wmark at least as new as the newest one that uses this database.' },
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) {
      await client.query('BEGIN');
      try {
        for (const statement of MIGRATIONS[v]!) await client.query(statement);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_on) VALUES ($1, $2)`, [v + 1, now()]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return SCHEMA_VERSION - version;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}

/** A `pg` pool behind the SqlDatabase interface, and whether its server answers. */
class PostgresDatabase implements SqlDatabase {
  readonly description: string;
  /** Judged by every call, by the pool's idle connections, and by a `SELECT 1` now and then while someone watches. */
  readonly health: ProbeMonitor;
  /** The server, watched: while it does not answer, calls fail at once with DATABASE_UNAVAILABLE. */
  readonly dependencies: readonly Dependency[];
  private readonly texts = new Map<string, { text: string; name: string }>();

  private bus: PostgresChangeBus | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly url: string,
    private readonly newBus: () => PostgresChangeBus,
    private readonly deadlineMs: number,
    readonly now: () => number,
  ) {
    this.description = `PostgreSQL ${redactUrl(url)}`;
    this.health = new ProbeMonitor({ name: 'database', location: redactUrl(url), probe: () => this.probe(), now });
    this.dependencies = [this.health];
    // An idle connection the server closed (a shutdown, a restart): asked at once whether the server is gone, so the
    // loss is known before any request meets it (one connection cut by something in between is not a loss).
    pool.on('error', () => {
      this.probe().then(
        () => this.health.answered(),
        (error: unknown) => this.health.failed(this.reason(error)),
      );
    });
  }

  private reason(error: unknown): string {
    return scrubUrl(firstLine(error), this.url);
  }

  private async probe(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_DEADLINE_MS} ms`)), PROBE_DEADLINE_MS);
    });
    try {
      await Promise.race([this.pool.query('SELECT 1'), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  changeBus(): PostgresChangeBus {
    this.bus ??= this.newBus();
    return this.bus;
  }

  noticeSource(): PostgresChangeBus {
    return this.changeBus();
  }

  heardBack(message: string): Promise<void> {
    return this.changeBus().heard(message, ECHO_WAIT_MS);
  }

  noticeStatement(message: string): SqlStatement {
    return { sql: 'SELECT pg_notify(?, ?)', params: [CHANNEL, message] };
  }

  together<T>(writes: readonly SqlStatement[], last?: SqlStatement): Promise<T[]> {
    // A write in WITH runs to its end whether or not the query reads it, and a notice is sent when it commits.
    const main = last ?? writes.at(-1);
    if (!main) return Promise.resolve([]);
    const before = last ? writes : writes.slice(0, -1);
    if (before.length === 0) return this.all<T>(main.sql, main.params);
    return this.all<T>(`WITH ${before.map((w, i) => `w${i} AS (${w.sql})`).join(', ')} ${main.sql}`, [
      ...before.flatMap((w) => w.params ?? []),
      ...(main.params ?? []),
    ]);
  }

  private prepared(sql: string): { text: string; name: string } {
    let known = this.texts.get(sql);
    if (known === undefined) {
      const text = numberedPlaceholders(sql);
      known = { text, name: `wmark_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
      this.texts.set(sql, known);
    }
    return known;
  }

  private text(sql: string): string {
    return this.prepared(sql).text;
  }

  /**
   * One statement on its own, as a named prepared statement: each connection parses it once, and PostgreSQL plans it
   * once it has seen a few (planning was most of the server's time for the hot reads). A connection whose statement
   * another instance's migration made stale (`SELECT *` over a table that gained a column) answers it unprepared.
   */
  private async single(sql: string, params: readonly unknown[]): Promise<QueryResult> {
    const { text, name } = this.prepared(sql);
    try {
      return await this.pool.query({ name, text, values: [...params] });
    } catch (error) {
      if ((error as { code?: unknown }).code !== FEATURE_NOT_SUPPORTED || !/cached plan must not change result type/.test(String(error))) throw error;
      return await this.pool.query(text, [...params]);
    }
  }

  /**
   * Runs a call, unless the server is known to be lost (its 503 at once, no wait on a dead address). A call that
   * cannot reach it marks it lost; the catalogued 503 names no address, since it may be an API client's answer.
   */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (!this.health.isUp) throw unavailableError(this.health.status(), this.now());
    try {
      const answer = await work();
      this.health.answered();
      return answer;
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      this.health.failed(this.reason(error));
      throw unavailableError(this.health.status(), this.now());
    }
  }

  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.guard(async () => (await this.single(sql, params)).rows as T[]);
  }

  async get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.guard(async () => (await this.single(sql, params)).rowCount ?? 0);
  }

  atomically(statements: readonly SqlStatement[]): Promise<void> {
    return this.guard(async () => {
      const client = await this.pool.connect();
      // A transaction still open at its deadline is abandoned: its connection is closed, so the server rolls it back
      // (now, or when it wakes), and its caller is answered now rather than when a frozen server wakes.
      const late = () => new Error(`no answer within ${this.deadlineMs} ms (transaction)`);
      let abandoned = false;
      let expire: (error: Error) => void = () => {};
      const expired = new Promise<never>((_, reject) => {
        expire = reject;
      });
      const deadline = setTimeout(() => {
        abandoned = true;
        expire(late());
        client.release(late());
      }, this.deadlineMs);
      const run = async () => {
        await client.query('BEGIN');
        for (const s of statements) await client.query(this.text(s.sql), [...(s.params ?? [])]);
        await client.query('COMMIT');
      };
      const running = run();
      running.catch(() => undefined);
      try {
        await Promise.race([running, expired]);
      } catch (error) {
        if (abandoned) throw late();
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        clearTimeout(deadline);
        if (!abandoned) client.release();
      }
    });
  }

  async schemaVersion(): Promise<number> {
    const row = await this.get<{ version: number }>(`SELECT COALESCE(MAX(version), 0) AS version FROM ${MIGRATIONS_TABLE}`);
    return Number(row?.version ?? 0);
  }

  async detail(): Promise<string> {
    const row = await this.get<{ server_version: string }>('SHOW server_version');
    return `server ${row?.server_version ?? 'unknown'}`;
  }

  poolUse(): PoolUse {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: POOL_MAX };
  }

  async close(): Promise<void> {
    this.health.close();
    await this.bus?.close();
    await this.pool.end();
  }
}

/** The state store on a PostgreSQL database, migrated forward when opened. */
export class PostgresStateStore extends SqlStateStore {
  /** Whether the database server answers now: the engine's dependency (/readyz, and the 503 of requests). */
  readonly health: ProbeMonitor;
  /** Credentials read lately, dropped at once when revoked anywhere. */
  private readonly credentials: CredentialCache;

  private constructor(
    private readonly pg: PostgresDatabase,
    /** How many migrations this open applied (0 when another instance, or an earlier run, had). */
    readonly migrated: number,
    requestCacheMs?: number,
  ) {
    super(pg, requestCacheMs);
    this.health = pg.health;
    this.credentials = new CredentialCache(() => pg.changeBus(), pg.now);
  }

  override getCredential(clientId: string): Promise<CredentialRecord | undefined> {
    return this.credentials.read(clientId, () => super.getCredential(clientId));
  }

  /** Revokes and tells every instance in the same transaction: the notice goes out if and only if the revocation commits. */
  override async revokeCredential(clientId: string, now: number): Promise<boolean> {
    const revoked = await this.pg.all<{ client_id: string }>(
      `WITH revoked AS (UPDATE credentials SET revoked_on = ? WHERE client_id = ? AND revoked_on IS NULL RETURNING client_id)
       SELECT client_id, pg_notify(?, ? || client_id) FROM revoked`,
      [now, clientId, CHANNEL, REVOKED],
    );
    this.credentials.revoked(clientId);
    return revoked.length === 1;
  }

  /**
   * `deadlineMs`: each call's deadline (CALL_DEADLINE_MS; longer for a bulk copy, whose one transaction is large);
   * `now`: the clock of migration times and of how long the server has been away; `requestCacheMs`: how long a
   * repeated request's answer is kept at most (REQUEST_CACHE_MS; 0: never).
   */
  static async open(url: string, deadlineMs = CALL_DEADLINE_MS, now: () => number = Date.now, requestCacheMs?: number): Promise<PostgresStateStore> {
    checkDatabaseUrl(url);
    const { default: pg } = await import('pg');
    // 64-bit integers (millisecond times, counts) and numerics read as numbers, as they do from SQLite.
    const getTypeParser = ((oid: number, format?: string) =>
      oid === INT8_OID || oid === NUMERIC_OID
        ? (value: string) => Number(value)
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser;
    const connection = {
      connectionString: url,
      application_name: 'wmark',
      connectionTimeoutMillis: 10_000,
      types: { getTypeParser },
      stream: () => new BatchingSocket(),
    };
    const pool = new pg.Pool({
      ...connection,
      max: POOL_MAX,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: deadlineMs,
      query_timeout: deadlineMs,
      statement_timeout: deadlineMs,
      idle_in_transaction_session_timeout: Math.max(IDLE_IN_TRANSACTION_MS, deadlineMs),
    });
    // An idle client whose server went away: the next query reports it; this only keeps it from crashing the process.
    pool.on('error', () => undefined);
    let migrated: number;
    try {
      // Migrations may wait on another instance's lock and run long: their own connection, without the calls' deadline.
      const client = new pg.Client(connection);
      client.on('error', () => undefined);
      await client.connect();
      try {
        migrated = await migrate(client, url, now);
      } finally {
        await client.end().catch(() => undefined);
      }
    } catch (error) {
      await pool.end().catch(() => undefined);
      if (error instanceof WmarkError) throw error;
      throw unavailable(url, error);
    }
    const bus = () => new PostgresChangeBus(pool, (config) => new pg.Client(config), connection);
    return new PostgresStateStore(new PostgresDatabase(pool, url, bus, deadlineMs, now), migrated, requestCacheMs);
  }
}
