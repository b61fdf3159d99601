// The little a state store asks of a SQL database, so that one store implementation serves every database wmark
// speaks: statements with `?` placeholders (a driver rewrites them to its own), the rows they read, how many rows they
// changed, and a list of statements applied all or none.
import type { ChangeBus } from './change-bus.js';

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
   * The write `sql` that also sends `message` on the change bus, as one statement: the message goes out exactly when
   * the write commits, at no extra round trip. Only a database with a change bus has it.
   */
  announcing?(sql: string, params: readonly unknown[], message: string): SqlStatement;
  /** Its connection pool's use, when it has one (a database server; SQLite has none). */
  poolUse?(): PoolUse;
  close(): Promise<void>;
}
