// The little a state store asks of a SQL database, so that one store implementation serves every database wmark
// speaks: statements with `?` placeholders (a driver rewrites them to its own), the rows they read, how many rows they
// changed, and a list of statements applied all or none.
import type { Dependency } from '../../core/dependency.js';
import type { ChangeBus } from './change-bus.js';
import type { NoticeSource } from './kept-reads.js';

export interface SqlStatement {
  sql: string;
  params?: readonly unknown[];
}

/** A connection pool's use now: connections open, of them idle, callers waiting for one, and the most it opens. */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface SqlDatabase {
  /** For messages: "SQLite /path/wmark.db" and the like. */
  readonly description: string;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement that writes; resolves with the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Runs the statements in one transaction: every one of them takes effect, or none does. */
  atomically(statements: readonly SqlStatement[]): Promise<void>;
  /** The schema version the database is at. */
  schemaVersion(): Promise<number>;
  /** Something an operator wants to know of it (SQLite's journal mode), if anything. */
  detail(): Promise<string | undefined>;
  /**
   * Messages between the processes using this database: its server's notices. Undefined on a file (SQLite): no server
   * carries them, and the processes' watchers poll the file instead.
   */
  changeBus(): ChangeBus | undefined;
  /**
   * Runs `writes` and then `last` (or, without it, the final write) as one transaction, resolving with the rows the
   * final statement reads or returns. On a database server it is one statement, each write a `WITH` (PostgreSQL runs
   * every one to its end), so one round trip; the statements must not read or write each other's rows, since there
   * they all see the database as it was before the statement.
   */
  together<T>(writes: readonly SqlStatement[], last?: SqlStatement): Promise<T[]>;
  /**
   * The statement that sends `message` on the change bus when the transaction it is part of commits (given to
   * `together` as its last): the message goes out exactly when the writes commit, at no extra round trip. Undefined
   * where there is no change bus (a file: nothing is announced, the others see the commit in the file's stamp).
   */
  noticeStatement(message: string): SqlStatement | undefined;
  /**
   * Resolves once this process hears `message` back on its change bus, or after a short wait (not listening, or the
   * notice late): asked before the write that sends it, awaited after. At once where nothing is announced.
   */
  heardBack(message: string): Promise<void>;
  /**
   * Where this process hears that rows it keeps reads of changed: the change bus's notices on a database server; on
   * a file, a stamp that moves when another process commits.
   */
  noticeSource(): NoticeSource;
  /** Its connection pool's use now (a database server); undefined where there is no pool (SQLite: one connection). */
  poolUse(): PoolUse | undefined;
  /**
   * What the database needs that may stop answering, watched (a database server: its calls then fail at once with
   * DATABASE_UNAVAILABLE); none for a file on this machine.
   */
  readonly dependencies: readonly Dependency[];
  close(): Promise<void>;
}
