// The little a state store asks of a SQL database, so that one store implementation serves every database wmark
// speaks: statements with `?` placeholders (a driver rewrites them to its own), the rows they read, how many rows they
// changed, and a list of statements applied all or none.
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
  /** Messages between the processes using this database, when its server carries them. */
  changeBus?(): ChangeBus;
  /**
   * Runs `writes` and then `last` (or, without it, the final write) as one transaction, resolving with the rows the
   * final statement reads or returns. On a database server it is one statement, each write a `WITH` (PostgreSQL runs
   * every one to its end), so one round trip; the statements must not read or write each other's rows, since there
   * they all see the database as it was before the statement.
   */
  together<T>(writes: readonly SqlStatement[], last?: SqlStatement): Promise<T[]>;
  /**
   * The statement that sends `message` on the change bus when the transaction it is part of commits (given to
   * `together` as its last): the message goes out exactly when the writes commit, at no extra round trip. Only a
   * database with a change bus has it.
   */
  noticeStatement?(message: string): SqlStatement;
  /**
   * Resolves once this process hears `message` back on its change bus, or after a short wait (not listening, or the
   * notice late): asked before the write that sends it, awaited after.
   */
  heardBack?(message: string): Promise<void>;
  /**
   * Where this process hears that rows it keeps reads of changed: the change bus's notices on a database server; on
   * a file, a stamp that moves when another process commits. Without it, only this process's own writes are heard.
   */
  noticeSource?(): NoticeSource;
  /** Its connection pool's use, when it has one (a database server; SQLite has none). */
  poolUse?(): PoolUse;
  close(): Promise<void>;
}
