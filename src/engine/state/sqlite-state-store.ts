// The embedded state database: a SQLite file (WAL) in the data folder, shared safely by the processes of one machine
// (`wmark serve` and CLI runs), migrated forward when opened.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Dependency } from '../../core/dependency.js';
import { WmarkError } from '../../core/errors.js';
import { PRIVATE_DIR_MODE, privateFile } from '../data-folder/file-modes.js';
import type { NoticeSource } from './kept-reads.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import type { SqlDatabase, SqlStatement } from './sql-database.js';
import { SqlStateStore } from './sql-state-store.js';

const BUSY_TIMEOUT_MS = 15_000;

/**
 * Switches the file to WAL. SQLite answers SQLITE_BUSY at once, without calling the busy handler, when another
 * process holds the lock this needs (several processes opening a new data dir together), so it retries here.
 */
function enableWal(db: Database.Database, now: () => number): void {
  const deadline = now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || now() > deadline) throw error;
      // A synchronous pause: opening is synchronous, like the rest of better-sqlite3.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.random() * 40);
    }
  }
}

/** Applies pending migrations inside one IMMEDIATE transaction, so two processes opening a new data dir don't race. */
function migrate(db: Database.Database, file: string): void {
  const apply = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new WmarkError('DATABASE_TOO_NEW', `the state database ${file} has schema v${version}, newer than this wmark knows (v${SCHEMA_VERSION})`, {
        hint: 'Run a wmark at least as new as the one that last opened this data folder.',
      });
    }
    for (let v = version; v < SCHEMA_VERSION; v++) for (const statement of MIGRATIONS[v]!) db.exec(statement);
    if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  apply.immediate();
}

/**
 * better-sqlite3 behind the SqlDatabase interface. It answers in microseconds in this process, so every call is done
 * by the time its promise settles and no other call runs in between: a transaction cannot interleave with anything.
 * Each SQL text is prepared once: preparing parses and plans it, a large share of a small query's cost.
 */
class SqliteDatabase implements SqlDatabase {
  readonly description: string;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly sqlite: Database.Database,
    file: string,
  ) {
    this.description = `SQLite ${file}`;
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.statement(sql).all(...params) as T[];
  }

  async get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.statement(sql).get(...params) as T | undefined;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.statement(sql).run(...params).changes;
  }

  async atomically(statements: readonly SqlStatement[]): Promise<void> {
    this.sqlite.transaction(() => {
      for (const s of statements) this.statement(s.sql).run(...(s.params ?? []));
    })();
  }

  async together<T>(writes: readonly SqlStatement[], last?: SqlStatement): Promise<T[]> {
    return this.sqlite.transaction(() => {
      const final = last ?? writes.at(-1);
      for (const s of last ? writes : writes.slice(0, -1)) this.statement(s.sql).run(...(s.params ?? []));
      if (!final) return [];
      const statement = this.statement(final.sql);
      if (!statement.reader) {
        statement.run(...(final.params ?? []));
        return [];
      }
      return statement.all(...(final.params ?? [])) as T[];
    })();
  }

  /** None: no server carries messages between the processes on one file; their watchers poll it. */
  changeBus(): undefined {
    return undefined;
  }

  /** None: nothing is announced on a file (the other processes see the commit move data_version: noticeSource). */
  noticeStatement(): undefined {
    return undefined;
  }

  /** At once: no notice goes out, so none comes back to wait for. */
  heardBack(): Promise<void> {
    return Promise.resolve();
  }

  /** None: no pool, one connection in this process. */
  poolUse(): undefined {
    return undefined;
  }

  /** None: a file on this machine is always there (a full or broken disk fails the call itself). */
  readonly dependencies: readonly Dependency[] = [];

  /**
   * Nothing is announced between the processes on one file, so a kept read is good only while no other connection has
   * committed since (data_version, which this connection's own commits do not move): the CLI deleting a watermark
   * beside a running serve is then heard on that serve's next request. This process's own writes drop what they change.
   */
  noticeSource(): NoticeSource {
    return { watch: () => undefined, listening: true, stamp: () => this.sqlite.pragma('data_version', { simple: true }) as number };
  }

  async schemaVersion(): Promise<number> {
    return this.sqlite.pragma('user_version', { simple: true }) as number;
  }

  async detail(): Promise<string> {
    return String(this.sqlite.pragma('journal_mode', { simple: true }));
  }

  async close(): Promise<void> {
    this.sqlite.close();
  }
}

/** The state store on a SQLite file (WAL); `:memory:` for a private one. `now` times the wait for a busy file. */
export class SqliteStateStore extends SqlStateStore {
  private readonly sqlite: Database.Database;

  /** `now`: the clock of the busy wait; `requestCacheMs`: how long a repeated request's answer is kept at most (REQUEST_CACHE_MS; 0: never). */
  constructor(
    readonly file: string,
    now: () => number = Date.now,
    requestCacheMs?: number,
  ) {
    if (file !== ':memory:') {
      mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
      // SQLite creates -wal and -shm with the database file's own mode.
      privateFile(file);
    }
    const sqlite = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      enableWal(sqlite, now);
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma('foreign_keys = ON');
      migrate(sqlite, file);
    } catch (error) {
      sqlite.close();
      throw error;
    }
    super(new SqliteDatabase(sqlite, file), requestCacheMs);
    this.sqlite = sqlite;
  }

  /** The schema version on disk (every migration this wmark knows, once opened). */
  get schemaVersion(): number {
    return this.sqlite.pragma('user_version', { simple: true }) as number;
  }
}
