// `wmark db copy`: a data folder's state (API keys, videos, templates, watermarks, and jobs as they are) and its secret
// copied into a PostgreSQL database, row for row, in one transaction. Media stays where it is: only the records move.
import { existsSync } from 'node:fs';
import { WmarkError } from '../../core/errors.js';
import { dataLayout } from '../data-folder/layout.js';
import { loadOrCreateSecret, SIGNING_SECRET } from '../data-folder/secret.js';
import { openStateStore } from '../state/open-state-store.js';
import { STATE_TABLES, type StateTable } from '../state/sql-state-store.js';
import { SqliteStateStore } from '../state/sqlite-state-store.js';

/** How long the copy's one transaction may take. */
const COPY_DEADLINE_MS = 30 * 60_000;

export interface CopyReport {
  /** The SQLite file read. */
  from: string;
  /** The database written, without its password. */
  to: string;
  /** Rows copied, per table. */
  tables: Record<StateTable, number>;
  /** Whether the data folder's secret went too (links, tokens and forensic codes stay valid under the database). */
  secret: boolean;
}

const countsText = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([table, n]) => `${n} ${table}`)
    .join(', ');

/** Copies the data folder's SQLite state into the (empty) database at `url`; refuses one that holds any row. */
export async function copyStateToDatabase(dataDir: string, url: string): Promise<CopyReport> {
  const file = dataLayout(dataDir).db;
  if (!existsSync(file)) {
    throw new WmarkError('NOT_FOUND', `no state to copy: ${file} does not exist`, {
      hint: 'Name the data folder that holds wmark.db with --data-dir (or WMARK_HOME).',
    });
  }
  // Opening it migrates an older data folder forward, as any wmark does, so its rows have this schema's columns.
  const source = new SqliteStateStore(file);
  try {
    // One transaction carries every row, which takes longer than a request's call may.
    const target = await openStateStore({ file, url, deadlineMs: COPY_DEADLINE_MS });
    try {
      const to = (await target.describe()).database;
      const held = Object.fromEntries(await Promise.all(STATE_TABLES.map(async (t) => [t, await target.countRows(t)] as const)));
      if (Object.values(held).some((n) => n > 0)) {
        throw new WmarkError('DATABASE_NOT_EMPTY', `${to} already holds state (${countsText(held)}); nothing was copied`);
      }
      const tables = await Promise.all(STATE_TABLES.map(async (table) => ({ table, rows: await source.tableRows(table) })));
      const secretFile = dataLayout(dataDir).secret;
      const secret: Record<string, string> = existsSync(secretFile) ? { [SIGNING_SECRET]: loadOrCreateSecret(secretFile).toString('base64url') } : {};
      await target.insertRows(tables, secret);
      return {
        from: file,
        to,
        tables: Object.fromEntries(tables.map(({ table, rows }) => [table, rows.length])) as Record<StateTable, number>,
        secret: SIGNING_SECRET in secret,
      };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
