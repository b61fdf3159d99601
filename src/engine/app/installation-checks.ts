// Checks that everything the engine needs is present (ffmpeg, ffprobe, filters, encoders, font, data dir, database),
// and says where each piece came from: what `wmark doctor` prints.
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { isWmarkError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact-url.js';
import { locateTools } from '../../ffmpeg/locate-tools.js';
import { createProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { dataLayout } from '../data-folder/layout.js';
import { openStateStore } from '../state/open-state-store.js';
import { SCHEMA_VERSION } from '../state/schema.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A missing optional piece is reported but does not fail the run. */
  required: boolean;
}

export async function collectChecks(config: { dataDir: string; ffmpeg?: string; ffprobe?: string; font?: string; db?: { url: string } }): Promise<Check[]> {
  const tools = locateTools(config);
  const runner = createProcessRunner(tools.ffmpeg.path, tools.ffprobe.path);
  const checks: Check[] = [];
  const version = async (name: 'ffmpeg' | 'ffprobe') => {
    const loc = tools[name];
    try {
      const { stdout } = name === 'ffmpeg' ? await runner.ffmpeg(['-version'], { captureStdout: true }) : await runner.ffprobe(['-version']);
      const first = stdout.toString('utf8').split('\n')[0] ?? '';
      checks.push({
        name,
        ok: true,
        detail: `${loc.path} (${loc.source}) ${first.replace(/^\w+ version /, 'version ').split(' Copyright')[0]}`,
        required: true,
      });
      return true;
    } catch (error) {
      checks.push({ name, ok: false, detail: `${loc.path} (${loc.source}): ${(error as Error).message.split('\n')[0]}`, required: true });
      return false;
    }
  };
  if (await version('ffmpeg')) {
    const list = async (flag: string) => (await runner.ffmpeg([flag], { captureStdout: true })).stdout.toString('utf8');
    const [filters, encoders, muxers] = await Promise.all([list('-filters'), list('-encoders'), list('-muxers')]);
    const has = (text: string, name: string) => new RegExp(`^\\s*\\S*\\s+${name}\\s`, 'm').test(text);
    checks.push({
      name: 'drawtext filter',
      ok: has(filters, 'drawtext'),
      detail: has(filters, 'drawtext') ? 'available' : 'missing: visible watermarks cannot be drawn',
      required: true,
    });
    checks.push({ name: 'libx264 encoder', ok: has(encoders, 'libx264'), detail: has(encoders, 'libx264') ? 'available' : 'missing', required: true });
    checks.push({ name: 'aac encoder', ok: has(encoders, 'aac'), detail: has(encoders, 'aac') ? 'available' : 'missing', required: true });
    for (const m of ['segment', 'mpegts', 'hls', 'mp4']) {
      checks.push({ name: `${m} muxer`, ok: has(muxers, m), detail: has(muxers, m) ? 'available' : 'missing', required: m !== 'hls' });
    }
  }
  await version('ffprobe');
  checks.push({ name: 'font', ok: existsSync(tools.font.path), detail: `${tools.font.path} (${tools.font.source})`, required: true });
  const paths = dataLayout(config.dataDir);
  try {
    mkdirSync(paths.root, { recursive: true });
    accessSync(paths.root, constants.W_OK);
    checks.push({ name: 'data dir', ok: true, detail: `${paths.root} (writable)`, required: true });
  } catch (error) {
    checks.push({ name: 'data dir', ok: false, detail: `${paths.root}: ${(error as Error).message}`, required: true });
    return checks;
  }
  checks.push(await databaseCheck(paths.db, config.db?.url));
  return checks;
}

/** The state database opens and is migrated: the SQLite file; or PostgreSQL, looked at without changing it. */
async function databaseCheck(file: string, url: string | undefined): Promise<Check> {
  if (url !== undefined) {
    const report = await checkDatabase(url);
    return { name: 'database', ok: report.ok, detail: report.detail, required: true };
  }
  try {
    const store = await openStateStore({ file, url });
    try {
      const { database, schemaVersion, detail } = await store.describe();
      return { name: 'database', ok: true, detail: `${url ? database : file} (schema v${schemaVersion}${detail ? `, ${detail}` : ''})`, required: true };
    } finally {
      await store.close();
    }
  } catch (error) {
    return { name: 'database', ok: false, detail: (error as Error).message, required: true };
  }
}

/** A PostgreSQL state database as `wmark doctor` and `wmark status` see it: reachable, and its schema against this wmark's. */
export interface DatabaseReport {
  /** Its URL without the password. */
  database: string;
  reachable: boolean;
  /** False when it cannot be reached or is newer than this wmark knows. */
  ok: boolean;
  serverVersion?: string;
  schemaVersion?: number;
  /** The schema version this wmark writes and reads. */
  codeSchemaVersion: number;
  /** `current`: as this wmark; `older`: migrated when a wmark next opens it; `newer`: refused (DATABASE_TOO_NEW). */
  schema?: 'current' | 'older' | 'newer';
  roundTripMs?: number;
  /** One line for a person. */
  detail: string;
  /** Why it is not ok: a catalogued code and its message. */
  error?: { code: string; message: string };
}

/** Connects once and reads the database's versions, changing nothing (no migration); the URL is never shown whole. */
export async function checkDatabase(url: string): Promise<DatabaseReport> {
  const base = { database: redactUrl(url), codeSchemaVersion: SCHEMA_VERSION };
  try {
    // pg loads only when there is a database to check.
    const { inspectDatabase } = await import('../state/postgres-connection.js');
    const found = await inspectDatabase(url);
    const schema = found.schemaVersion === SCHEMA_VERSION ? 'current' : found.schemaVersion < SCHEMA_VERSION ? 'older' : 'newer';
    const said = {
      current: `schema v${found.schemaVersion}, as this wmark`,
      older:
        found.schemaVersion === 0
          ? `no wmark tables yet (the first wmark to open it creates schema v${SCHEMA_VERSION})`
          : `schema v${found.schemaVersion}, older than this wmark's v${SCHEMA_VERSION} (migrated when a wmark next opens it)`,
      newer: `schema v${found.schemaVersion}, newer than this wmark knows (v${SCHEMA_VERSION}): run a wmark at least as new`,
    }[schema];
    const report: DatabaseReport = {
      ...base,
      reachable: true,
      ok: schema !== 'newer',
      serverVersion: found.serverVersion,
      schemaVersion: found.schemaVersion,
      schema,
      roundTripMs: Math.round(found.roundTripMs * 10) / 10,
      detail: `${base.database} (PostgreSQL ${found.serverVersion.split(' ')[0]}, ${said}; ${Math.max(1, Math.round(found.roundTripMs))} ms a round trip)`,
    };
    return schema === 'newer' ? { ...report, error: { code: 'DATABASE_TOO_NEW', message: `the state database ${base.database} has ${said}` } } : report;
  } catch (error) {
    const message = (error as Error).message;
    return { ...base, reachable: false, ok: false, detail: message, error: { code: isWmarkError(error) ? error.code : 'DATABASE_UNAVAILABLE', message } };
  }
}
