// Which state store an engine opens: PostgreSQL when a database URL is given, else the SQLite file in the data folder.
// The PostgreSQL driver is loaded only in the first case, so the CLI's start never pays for it.

import type { SqlStateStore } from './sql-state-store.js';
import { SqliteStateStore } from './sqlite-state-store.js';

export interface StateStoreChoice {
  /** The SQLite file, used when there is no URL. */
  file: string;
  /** postgres://… : all state lives in that database, and no SQLite file is made. */
  url?: string | undefined;
  /** Each database call's deadline, when not the default (a bulk copy's one large transaction needs longer). */
  deadlineMs?: number;
  /** How long a repeated request's answer is kept at most (default REQUEST_CACHE_MS; 0: never). */
  requestCacheMs?: number | undefined;
  /** The engine's clock (default: the wall clock). */
  now?: () => number;
}

export async function openStateStore(choice: StateStoreChoice): Promise<SqlStateStore> {
  if (choice.url === undefined) return new SqliteStateStore(choice.file, choice.now, choice.requestCacheMs);
  const { PostgresStateStore } = await import('./postgres-state-store.js');
  return PostgresStateStore.open(choice.url, choice.deadlineMs, choice.now, choice.requestCacheMs);
}
