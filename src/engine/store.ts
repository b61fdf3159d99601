// The state database (the SQLite StateStore): videos, templates, watermarks, jobs and credentials in SQLite (WAL), with forward-only migrations.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR_MODE, privateFile } from './file-modes.js';

import type { Container, CredentialRecord, JobRecord, RenderMode, StateStore, TemplateRecord, VideoRecord, VideoStatus, WatermarkPatch, WatermarkRecord, WatermarkStatus } from './state-store.js';
import type { ForensicLayoutChoice } from '../core/forensic/variant-plan.js';

const MIGRATIONS: string[] = [
  `CREATE TABLE videos (
     id TEXT PRIMARY KEY,
     key TEXT NOT NULL UNIQUE,
     source_url TEXT NOT NULL,
     name TEXT,
     status TEXT NOT NULL,
     enable_forensic INTEGER NOT NULL DEFAULT 0,
     width INTEGER, height INTEGER, duration REAL, fps_num INTEGER, fps_den INTEGER,
     has_audio INTEGER NOT NULL DEFAULT 0,
     segments TEXT NOT NULL DEFAULT '[]',
     time_origin REAL NOT NULL DEFAULT 0,
     error TEXT,
     created_on INTEGER NOT NULL
   );
   CREATE TABLE templates (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     description TEXT,
     settings TEXT NOT NULL,
     created_on INTEGER NOT NULL
   );
   CREATE TABLE watermarks (
     id TEXT PRIMARY KEY,
     video_id TEXT NOT NULL REFERENCES videos(id),
     settings TEXT NOT NULL,
     containers TEXT NOT NULL,
     expiration INTEGER,
     status TEXT NOT NULL,
     error TEXT,
     created_on INTEGER NOT NULL,
     ready_on INTEGER,
     forensic_payload INTEGER
   );
   CREATE INDEX watermarks_video ON watermarks(video_id);
   CREATE TABLE jobs (
     id TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     target_id TEXT NOT NULL,
     status TEXT NOT NULL,
     owner TEXT,
     heartbeat INTEGER,
     attempts INTEGER NOT NULL DEFAULT 0,
     error TEXT,
     created_on INTEGER NOT NULL,
     updated_on INTEGER NOT NULL
   );
   CREATE INDEX jobs_status ON jobs(status);
   CREATE TABLE credentials (
     client_id TEXT PRIMARY KEY,
     key_hash TEXT NOT NULL,
     label TEXT,
     created_on INTEGER NOT NULL,
     revoked_on INTEGER
   );`,
  // Progress lives with the job so a process watching it (CLI --wait, serve, demo) sees work done by another one.
  `ALTER TABLE jobs ADD COLUMN done INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN total INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE jobs ADD COLUMN stage TEXT;`,
  // Watermarks made before on-demand rendering were rendered in full.
  `ALTER TABLE watermarks ADD COLUMN render TEXT NOT NULL DEFAULT 'full';`,
  // How a forensic video's segments carry the code; videos recorded before the choice have none (they were prepared
  // 'whole', or as halves by an older wmark: either way their files and layout say all that serving and detection need).
  `ALTER TABLE videos ADD COLUMN forensic_layout TEXT;`,
];

type Row = Record<string, unknown>;

const toVideo = (r: Row): VideoRecord => ({
  id: r.id as string,
  key: r.key as string,
  sourceUrl: r.source_url as string,
  name: (r.name as string | null) ?? null,
  status: r.status as VideoStatus,
  enableForensic: r.enable_forensic === 1,
  forensicLayout: (r.forensic_layout as ForensicLayoutChoice | null) ?? null,
  width: (r.width as number | null) ?? null,
  height: (r.height as number | null) ?? null,
  durationSeconds: (r.duration as number | null) ?? null,
  fpsNum: (r.fps_num as number | null) ?? null,
  fpsDen: (r.fps_den as number | null) ?? null,
  hasAudio: r.has_audio === 1,
  segments: JSON.parse(r.segments as string) as number[],
  timeOrigin: r.time_origin as number,
  error: (r.error as string | null) ?? null,
  createdOn: r.created_on as number,
});

const toTemplate = (r: Row): TemplateRecord => ({
  id: r.id as string,
  name: r.name as string,
  description: (r.description as string | null) ?? null,
  settings: JSON.parse(r.settings as string) as unknown[],
  createdOn: r.created_on as number,
});

const toWatermark = (r: Row): WatermarkRecord => ({
  id: r.id as string,
  videoId: r.video_id as string,
  settings: JSON.parse(r.settings as string) as unknown[],
  containers: JSON.parse(r.containers as string) as Container[],
  expiration: (r.expiration as number | null) ?? null,
  status: r.status as WatermarkStatus,
  error: (r.error as string | null) ?? null,
  createdOn: r.created_on as number,
  readyOn: (r.ready_on as number | null) ?? null,
  forensicPayload: (r.forensic_payload as number | null) ?? null,
  render: r.render as RenderMode,
});

const toJob = (r: Row): JobRecord => ({
  id: r.id as string,
  kind: r.kind as JobRecord['kind'],
  targetId: r.target_id as string,
  status: r.status as JobRecord['status'],
  owner: (r.owner as string | null) ?? null,
  heartbeat: (r.heartbeat as number | null) ?? null,
  attempts: r.attempts as number,
  error: (r.error as string | null) ?? null,
  done: r.done as number,
  total: r.total as number,
  stage: (r.stage as string | null) ?? null,
  createdOn: r.created_on as number,
  updatedOn: r.updated_on as number,
});


const BUSY_TIMEOUT_MS = 15_000;

/**
 * Switches the file to WAL. SQLite answers SQLITE_BUSY at once, without calling the busy handler, when another
 * process holds the lock this needs (several processes opening a new data dir together), so it retries here.
 */
function enableWal(db: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      // A synchronous pause: the constructor is synchronous, like the rest of better-sqlite3.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.random() * 40);
    }
  }
}

/** The state store on a SQLite file (WAL), shared safely by the processes of one machine. */
export class Store implements StateStore {
  readonly db: Database.Database;
  /** Prepared statements by SQL text: preparing parses and plans the SQL, which showed as a fifth of a POST's CPU. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(file: string) {
    if (file !== ':memory:') {
      mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
      // SQLite creates -wal and -shm with the database file's own mode.
      privateFile(file);
    }
    this.db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    enableWal(this.db);
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.migrate();
  }

  /** Applies pending migrations inside one IMMEDIATE transaction, so two processes opening a new data dir don't race. */
  private migrate(): void {
    const apply = this.db.transaction(() => {
      const version = this.db.pragma('user_version', { simple: true }) as number;
      for (let v = version; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v]!);
      if (version < MIGRATIONS.length) this.db.pragma(`user_version = ${MIGRATIONS.length}`);
    });
    apply.immediate();
  }

  /** The prepared statement for `sql`, prepared once per store. */
  private sql(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  close(): void {
    this.db.close();
  }

  // ---- videos
  insertVideo(v: VideoRecord): boolean {
    const info = this.db
      .prepare(
        `INSERT INTO videos (id, key, source_url, name, status, enable_forensic, forensic_layout, width, height, duration, fps_num, fps_den, has_audio, segments, time_origin, error, created_on)
         VALUES (@id, @key, @sourceUrl, @name, @status, @enableForensic, @forensicLayout, @width, @height, @durationSeconds, @fpsNum, @fpsDen, @hasAudio, @segments, @timeOrigin, @error, @createdOn)
         ON CONFLICT(key) DO NOTHING`,
      )
      .run({ ...v, enableForensic: v.enableForensic ? 1 : 0, forensicLayout: v.forensicLayout ?? null, hasAudio: v.hasAudio ? 1 : 0, segments: JSON.stringify(v.segments) });
    return info.changes === 1;
  }

  updateVideo(id: string, patch: Partial<Omit<VideoRecord, 'id' | 'key' | 'createdOn'>>): void {
    const columns: Record<string, string> = {
      sourceUrl: 'source_url', name: 'name', status: 'status', enableForensic: 'enable_forensic', forensicLayout: 'forensic_layout', width: 'width', height: 'height',
      durationSeconds: 'duration', fpsNum: 'fps_num', fpsDen: 'fps_den', hasAudio: 'has_audio', segments: 'segments', timeOrigin: 'time_origin', error: 'error',
    };
    const sets: string[] = [];
    const values: Record<string, unknown> = { id };
    for (const [k, value] of Object.entries(patch)) {
      const col = columns[k];
      if (!col) continue;
      sets.push(`${col} = @${k}`);
      values[k] = typeof value === 'boolean' ? (value ? 1 : 0) : Array.isArray(value) ? JSON.stringify(value) : value;
    }
    if (sets.length) this.sql(`UPDATE videos SET ${sets.join(', ')} WHERE id = @id`).run(values);
  }

  deleteVideo(id: string): void {
    this.sql('DELETE FROM videos WHERE id = ?').run(id);
  }

  getVideo(id: string): VideoRecord | undefined {
    const r = this.sql('SELECT * FROM videos WHERE id = ?').get(id) as Row | undefined;
    return r && toVideo(r);
  }

  getVideoByKey(key: string): VideoRecord | undefined {
    const r = this.sql('SELECT * FROM videos WHERE key = ?').get(key) as Row | undefined;
    return r && toVideo(r);
  }

  listVideos(opts: { key?: string; limit?: number; offset?: number } = {}): VideoRecord[] {
    const rows = opts.key
      ? this.sql('SELECT * FROM videos WHERE key = ? ORDER BY created_on, id LIMIT ? OFFSET ?').all(opts.key, opts.limit ?? -1, opts.offset ?? 0)
      : this.sql('SELECT * FROM videos ORDER BY created_on, id LIMIT ? OFFSET ?').all(opts.limit ?? -1, opts.offset ?? 0);
    return (rows as Row[]).map(toVideo);
  }

  // ---- templates
  insertTemplate(t: TemplateRecord): void {
    this.db
      .prepare('INSERT INTO templates (id, name, description, settings, created_on) VALUES (?, ?, ?, ?, ?)')
      .run(t.id, t.name, t.description, JSON.stringify(t.settings), t.createdOn);
  }

  getTemplate(id: string): TemplateRecord | undefined {
    const r = this.sql('SELECT * FROM templates WHERE id = ?').get(id) as Row | undefined;
    return r && toTemplate(r);
  }

  listTemplates(opts: { limit?: number; offset?: number } = {}): TemplateRecord[] {
    return (this.sql('SELECT * FROM templates ORDER BY created_on, id LIMIT ? OFFSET ?').all(opts.limit ?? -1, opts.offset ?? 0) as Row[]).map(toTemplate);
  }

  deleteTemplate(id: string): boolean {
    return this.sql('DELETE FROM templates WHERE id = ?').run(id).changes === 1;
  }

  // ---- watermarks
  /** Inserts unless a watermark with this identity exists; returns the stored record either way (first writer wins). */
  insertWatermarkIfAbsent(w: WatermarkRecord): { record: WatermarkRecord; created: boolean } {
    const info = this.db
      .prepare(
        `INSERT INTO watermarks (id, video_id, settings, containers, expiration, status, error, created_on, ready_on, forensic_payload, render)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
      )
      .run(w.id, w.videoId, JSON.stringify(w.settings), JSON.stringify(w.containers), w.expiration, w.status, w.error, w.createdOn, w.readyOn, w.forensicPayload, w.render);
    return { record: this.getWatermark(w.id)!, created: info.changes === 1 };
  }

  getWatermark(id: string): WatermarkRecord | undefined {
    const r = this.sql('SELECT * FROM watermarks WHERE id = ?').get(id) as Row | undefined;
    return r && toWatermark(r);
  }

  listWatermarks(videoId?: string): WatermarkRecord[] {
    const rows = videoId
      ? this.sql('SELECT * FROM watermarks WHERE video_id = ? ORDER BY created_on, id').all(videoId)
      : this.sql('SELECT * FROM watermarks ORDER BY created_on, id').all();
    return (rows as Row[]).map(toWatermark);
  }

  /** Removes a watermark's row and its job row; its files are the caller's to remove. */
  deleteWatermark(id: string): void {
    this.db.transaction(() => {
      this.sql("DELETE FROM jobs WHERE kind = 'watermark' AND target_id = ?").run(id);
      this.sql('DELETE FROM watermarks WHERE id = ?').run(id);
    })();
  }

  /** Removes a video with its watermarks and every job of either, in one transaction; files are the caller's. */
  deleteVideoAndWatermarks(videoId: string): void {
    this.db.transaction(() => {
      this.sql("DELETE FROM jobs WHERE kind = 'watermark' AND target_id IN (SELECT id FROM watermarks WHERE video_id = ?)").run(videoId);
      this.sql('DELETE FROM watermarks WHERE video_id = ?').run(videoId);
      this.sql("DELETE FROM jobs WHERE kind = 'ingest' AND target_id = ?").run(videoId);
      this.sql('DELETE FROM videos WHERE id = ?').run(videoId);
    })();
  }

  updateWatermark(id: string, patch: WatermarkPatch): void {
    const sets: string[] = [];
    const values: Record<string, unknown> = { id };
    if (patch.status !== undefined) (sets.push('status = @status'), (values.status = patch.status));
    if (patch.error !== undefined) (sets.push('error = @error'), (values.error = patch.error));
    if (patch.readyOn !== undefined) (sets.push('ready_on = @readyOn'), (values.readyOn = patch.readyOn));
    if (patch.containers !== undefined) (sets.push('containers = @containers'), (values.containers = JSON.stringify(patch.containers)));
    if (patch.render !== undefined) (sets.push('render = @render'), (values.render = patch.render));
    if (sets.length) this.sql(`UPDATE watermarks SET ${sets.join(', ')} WHERE id = @id`).run(values);
  }

  // ---- jobs
  /** Creates the job row for a target if none exists and returns it. */
  ensureJob(kind: JobRecord['kind'], targetId: string, now: number): JobRecord {
    this.db
      .prepare(`INSERT INTO jobs (id, kind, target_id, status, attempts, created_on, updated_on) VALUES (?, ?, ?, 'queued', 0, ?, ?) ON CONFLICT(id) DO NOTHING`)
      .run(`${kind}:${targetId}`, kind, targetId, now, now);
    return this.getJob(`${kind}:${targetId}`)!;
  }

  getJob(id: string): JobRecord | undefined {
    const r = this.sql('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return r && toJob(r);
  }

  /**
   * Takes the job's lease when nobody holds a live one. A lease is live while its heartbeat is younger than staleMs,
   * so a process killed mid-job leaves a lease the next run can take over.
   */
  acquireJob(id: string, owner: string, now: number, staleMs: number): boolean {
    const info = this.db
      .prepare(
        `UPDATE jobs SET owner = @owner, heartbeat = @now, status = 'running', attempts = attempts + 1, updated_on = @now, error = NULL
         WHERE id = @id AND status != 'done' AND (owner IS NULL OR owner = @owner OR heartbeat IS NULL OR heartbeat < @stale)`,
      )
      .run({ id, owner, now, stale: now - staleMs });
    return info.changes === 1;
  }

  heartbeatJob(id: string, owner: string, now: number): boolean {
    return this.sql('UPDATE jobs SET heartbeat = ?, updated_on = ? WHERE id = ? AND owner = ?').run(now, now, id, owner).changes === 1;
  }

  finishJob(id: string, owner: string, now: number, outcome: { status: 'done' | 'failed' | 'queued'; error?: string }): void {
    this.db
      .prepare('UPDATE jobs SET status = ?, error = ?, owner = NULL, heartbeat = NULL, updated_on = ? WHERE id = ? AND owner = ?')
      .run(outcome.status, outcome.error ?? null, now, id, owner);
  }

  setJobProgress(id: string, progress: { done: number; total: number; stage?: string | null }, now: number): void {
    this.sql('UPDATE jobs SET done = ?, total = ?, stage = ?, updated_on = ? WHERE id = ?').run(progress.done, progress.total, progress.stage ?? null, now, id);
  }

  /** Jobs that are not finished and whose lease is free or stale: what a starting server resumes, oldest first. */
  resumableJobs(now: number, staleMs: number): JobRecord[] {
    return (
      this.db
        .prepare(`SELECT * FROM jobs WHERE status IN ('queued', 'running') AND (owner IS NULL OR heartbeat IS NULL OR heartbeat < ?) ORDER BY created_on`)
        .all(now - staleMs) as Row[]
    ).map(toJob);
  }

  resetJob(id: string, now: number): void {
    this.sql(`UPDATE jobs SET status = 'queued', owner = NULL, heartbeat = NULL, error = NULL, updated_on = ? WHERE id = ?`).run(now, id);
  }

  // ---- credentials
  insertCredential(c: CredentialRecord): void {
    this.db
      .prepare('INSERT INTO credentials (client_id, key_hash, label, created_on, revoked_on) VALUES (?, ?, ?, ?, ?)')
      .run(c.clientId, c.keyHash, c.label, c.createdOn, c.revokedOn);
  }

  getCredential(clientId: string): CredentialRecord | undefined {
    const r = this.sql('SELECT * FROM credentials WHERE client_id = ?').get(clientId) as Row | undefined;
    return r && { clientId: r.client_id as string, keyHash: r.key_hash as string, label: (r.label as string | null) ?? null, createdOn: r.created_on as number, revokedOn: (r.revoked_on as number | null) ?? null };
  }

  listCredentials(): CredentialRecord[] {
    return (this.sql('SELECT * FROM credentials ORDER BY created_on').all() as Row[]).map((r) => ({
      clientId: r.client_id as string, keyHash: r.key_hash as string, label: (r.label as string | null) ?? null, createdOn: r.created_on as number, revokedOn: (r.revoked_on as number | null) ?? null,
    }));
  }

  revokeCredential(clientId: string, now: number): boolean {
    return this.sql('UPDATE credentials SET revoked_on = ? WHERE client_id = ? AND revoked_on IS NULL').run(now, clientId).changes === 1;
  }

  countActiveCredentials(): number {
    return (this.sql('SELECT COUNT(*) AS n FROM credentials WHERE revoked_on IS NULL').get() as { n: number }).n;
  }
}
