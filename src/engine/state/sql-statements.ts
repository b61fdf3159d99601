// The statements the SQL state store is made of, built from records and patches: the subset of SQL that SQLite and
// PostgreSQL speak alike, with `?` placeholders (sql-database.ts).
import type { SqlStatement } from './sql-database.js';
import type { JobOutcome, JobProgress, JobRecord, JobWrite } from './state-store.js';

/** `INSERT INTO table (a, b) VALUES (?, ?)` for a row's columns, and the values in that order. */
export function insert(table: string, row: object): { sql: string; params: unknown[] } {
  const columns = Object.keys(row);
  return { sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, params: Object.values(row) };
}

/** `SET a = ?, b = ?` for the columns a patch gives, and their values; undefined when it gives none. */
export function assignments(patch: object): { sql: string; params: unknown[] } | undefined {
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return undefined;
  return { sql: entries.map(([column]) => `${column} = ?`).join(', '), params: entries.map(([, v]) => v) };
}

/** Sets a shared secret whatever it held: `wmark db copy` brings a data folder's key along with its records. */
export function replaceSecret(name: string, value: string): { sql: string; params: unknown[] } {
  return { sql: 'INSERT INTO shared_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', params: [name, value] };
}

/** A job's progress written, with the heartbeat of its lease renewed when `owner` holds it. */
export function progressWrite(id: string, progress: JobProgress, now: number, owner: string | null): SqlStatement {
  return {
    sql: 'UPDATE jobs SET done = ?, total = ?, stage = ?, updated_on = ?, heartbeat = CASE WHEN owner = ? THEN ? ELSE heartbeat END WHERE id = ?',
    params: [progress.done, progress.total, progress.stage ?? null, now, owner, now, id],
  };
}

/** A lease ended by its `owner`, with its last progress when given. */
export function endWrite(id: string, owner: string, now: number, outcome: JobOutcome, progress?: JobProgress): SqlStatement {
  const p = progress ? { sql: ', done = ?, total = ?, stage = ?', params: [progress.done, progress.total, progress.stage ?? null] } : { sql: '', params: [] };
  return {
    sql: `UPDATE jobs SET status = ?, error = ?, owner = NULL, heartbeat = NULL, updated_on = ?${p.sql} WHERE id = ? AND owner = ?`,
    params: [outcome.status, outcome.error ?? null, now, ...p.params, id, owner],
  };
}

/** A job row, queued, unless the job has one (`RETURNING *` reads it back when it is new). */
export function newJob(kind: JobRecord['kind'], targetId: string, now: number): SqlStatement {
  return {
    sql: "INSERT INTO jobs (id, kind, target_id, status, attempts, created_on, updated_on) VALUES (?, ?, ?, 'queued', 0, ?, ?) ON CONFLICT (id) DO NOTHING",
    params: [`${kind}:${targetId}`, kind, targetId, now, now],
  };
}

/** The statement of a lease holder's write: its end, its progress, or its lease renewed. */
export function jobWrite(w: JobWrite): SqlStatement {
  if (w.end) return endWrite(w.id, w.owner, w.now, w.end, w.progress);
  if (w.progress) return progressWrite(w.id, w.progress, w.now, w.owner);
  return { sql: 'UPDATE jobs SET heartbeat = ?, updated_on = ? WHERE id = ? AND owner = ?', params: [w.now, w.now, w.id, w.owner] };
}

/** A listing's page: LIMIT and OFFSET only when asked for (a negative limit means all). */
export function page(opts: { limit?: number; offset?: number }): { sql: string; params: unknown[] } {
  const limited = opts.limit !== undefined && opts.limit >= 0;
  if (!limited && !opts.offset) return { sql: '', params: [] };
  return { sql: ' LIMIT ? OFFSET ?', params: [limited ? opts.limit : Number.MAX_SAFE_INTEGER, opts.offset ?? 0] };
}

/** `w.id AS w_id, w.video_id AS w_video_id, …`: a table's columns read beside another's under a prefix of their own. */
export function aliased(alias: string, columns: readonly string[]): string {
  return columns.map((c) => `${alias}.${c} AS ${alias}_${c}`).join(', ');
}

/** The row of one table read under `aliased`, or undefined when the join found none (its id is null). */
export function unaliased<T>(row: Record<string, unknown>, alias: string, columns: readonly string[]): T | undefined {
  if (row[`${alias}_id`] === null || row[`${alias}_id`] === undefined) return undefined;
  return Object.fromEntries(columns.map((c) => [c, row[`${alias}_${c}`]])) as T;
}
