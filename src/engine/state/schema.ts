// The state database's tables as the query layer sees them, and the versioned migrations that make them. The SQL is
// written once for every database wmark speaks: BIGINT for millisecond times, DOUBLE PRECISION for seconds, TEXT for
// JSON, INTEGER 0/1 for flags.

export interface VideosTable {
  id: string;
  key: string;
  source_url: string;
  name: string | null;
  status: string;
  enable_forensic: number;
  forensic_layout: string | null;
  /** SHA-256 (hex) of a local source file's bytes when it was registered; null for a URL and for rows made before. */
  source_sha256: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  fps_num: number | null;
  fps_den: number | null;
  has_audio: number;
  /** JSON array of segment durations (seconds). */
  segments: string;
  time_origin: number;
  error: string | null;
  created_on: number;
}

export interface TemplatesTable {
  id: string;
  name: string;
  description: string | null;
  /** JSON array of setting objects. */
  settings: string;
  created_on: number;
}

export interface WatermarksTable {
  id: string;
  video_id: string;
  settings: string;
  containers: string;
  expiration: number | null;
  status: string;
  error: string | null;
  created_on: number;
  ready_on: number | null;
  forensic_payload: number | null;
  render: string;
}

/** Every column of the watermarks table, for a statement that reads them beside another table's (a join). */
export const WATERMARK_COLUMNS = [
  'id',
  'video_id',
  'settings',
  'containers',
  'expiration',
  'status',
  'error',
  'created_on',
  'ready_on',
  'forensic_payload',
  'render',
] as const satisfies readonly (keyof WatermarksTable)[];

export interface JobsTable {
  id: string;
  kind: string;
  target_id: string;
  status: string;
  owner: string | null;
  heartbeat: number | null;
  attempts: number;
  error: string | null;
  done: number;
  total: number;
  stage: string | null;
  created_on: number;
  updated_on: number;
}

/** Every column of the jobs table, for a statement that reads them beside another table's (a join). */
export const JOB_COLUMNS = [
  'id',
  'kind',
  'target_id',
  'status',
  'owner',
  'heartbeat',
  'attempts',
  'error',
  'done',
  'total',
  'stage',
  'created_on',
  'updated_on',
] as const satisfies readonly (keyof JobsTable)[];

export interface CredentialsTable {
  client_id: string;
  key_hash: string;
  label: string | null;
  created_on: number;
  revoked_on: number | null;
}

/** Secrets every instance on one database must share (the key that signs links and tokens and seeds forensic codes). */
export interface SharedSecretsTable {
  name: string;
  /** base64url. */
  value: string;
}

/**
 * Forward-only migrations, one list of statements each; a database at version n has run the first n. SQLite counts
 * them in `PRAGMA user_version`, so a data folder made by any earlier wmark carries on where it stopped; PostgreSQL in
 * the `wmark_schema_migrations` table. Every statement runs unchanged on both: never edit one that has shipped, add a
 * migration instead.
 */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE videos (
       id TEXT PRIMARY KEY,
       key TEXT NOT NULL UNIQUE,
       source_url TEXT NOT NULL,
       name TEXT,
       status TEXT NOT NULL,
       enable_forensic INTEGER NOT NULL DEFAULT 0,
       width INTEGER, height INTEGER, duration DOUBLE PRECISION, fps_num INTEGER, fps_den INTEGER,
       has_audio INTEGER NOT NULL DEFAULT 0,
       segments TEXT NOT NULL DEFAULT '[]',
       time_origin DOUBLE PRECISION NOT NULL DEFAULT 0,
       error TEXT,
       created_on BIGINT NOT NULL
     )`,
    `CREATE TABLE templates (
       id TEXT PRIMARY KEY,
       name TEXT NOT NULL,
       description TEXT,
       settings TEXT NOT NULL,
       created_on BIGINT NOT NULL
     )`,
    `CREATE TABLE watermarks (
       id TEXT PRIMARY KEY,
       video_id TEXT NOT NULL REFERENCES videos(id),
       settings TEXT NOT NULL,
       containers TEXT NOT NULL,
       expiration BIGINT,
       status TEXT NOT NULL,
       error TEXT,
       created_on BIGINT NOT NULL,
       ready_on BIGINT,
       forensic_payload INTEGER
     )`,
    'CREATE INDEX watermarks_video ON watermarks(video_id)',
    `CREATE TABLE jobs (
       id TEXT PRIMARY KEY,
       kind TEXT NOT NULL,
       target_id TEXT NOT NULL,
       status TEXT NOT NULL,
       owner TEXT,
       heartbeat BIGINT,
       attempts INTEGER NOT NULL DEFAULT 0,
       error TEXT,
       created_on BIGINT NOT NULL,
       updated_on BIGINT NOT NULL
     )`,
    'CREATE INDEX jobs_status ON jobs(status)',
    `CREATE TABLE credentials (
       client_id TEXT PRIMARY KEY,
       key_hash TEXT NOT NULL,
       label TEXT,
       created_on BIGINT NOT NULL,
       revoked_on BIGINT
     )`,
  ],
  // Progress lives with the job, so a process watching it (CLI --wait, serve, demo) sees work done by another one.
  [
    'ALTER TABLE jobs ADD COLUMN done INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE jobs ADD COLUMN total INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE jobs ADD COLUMN stage TEXT',
  ],
  // Watermarks made before on-demand rendering were rendered in full.
  ["ALTER TABLE watermarks ADD COLUMN render TEXT NOT NULL DEFAULT 'full'"],
  // How a forensic video's segments carry the code; videos recorded before the choice have none (their files and
  // layout say all that serving and detection need).
  ['ALTER TABLE videos ADD COLUMN forensic_layout TEXT'],
  // Several instances on one database sign with one key, which lives with the records it signs for.
  ['CREATE TABLE shared_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)'],
  // Credential checks per client address (or IPv6 prefix) in the current window, shared by every instance: those that
  // failed, and those still running.
  ['CREATE TABLE auth_attempts (source TEXT PRIMARY KEY, failures INTEGER NOT NULL, pending INTEGER NOT NULL, reset_at BIGINT NOT NULL)'],
  // A local source is identified by its bytes as well as its path, so an edited file is another source. Videos recorded
  // before have none: the first ingest that finds one records it (ingest/source-identity.ts says when).
  ['ALTER TABLE videos ADD COLUMN source_sha256 TEXT'],
];

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

// Each column list names every column of its table: a column added to the table and not to the list fails to compile.
const everyColumn = <T, L extends readonly (keyof T)[]>(_: Exclude<keyof T, L[number]> extends never ? L : never) => undefined;
everyColumn<WatermarksTable, typeof WATERMARK_COLUMNS>(WATERMARK_COLUMNS);
everyColumn<JobsTable, typeof JOB_COLUMNS>(JOB_COLUMNS);
