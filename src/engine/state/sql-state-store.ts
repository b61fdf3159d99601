// The StateStore on a SQL database: one implementation of every record and transition, whatever database sits behind
// it. Each transition that processes may race on is a single statement (insert ... on conflict do nothing, a
// conditional update) or one transaction, which SQLite and PostgreSQL both make atomic. The SQL is the subset both
// speak alike.
import type { Dependency } from '../../core/dependency.js';
import type { ChangeBus } from './change-bus.js';
import { type ChangedRow, REQUEST_CACHE_MS, WatermarkRequestCache } from './request-cache.js';
import { credentialRow, templateRow, toCredential, toJob, toTemplate, toVideo, toWatermark, videoPatchRow, videoRow, watermarkRow } from './rows.js';
import {
  type CredentialsTable,
  JOB_COLUMNS,
  type JobsTable,
  type SharedSecretsTable,
  type TemplatesTable,
  type VideosTable,
  WATERMARK_COLUMNS,
  type WatermarksTable,
} from './schema.js';
import type { SqlDatabase, SqlStatement } from './sql-database.js';
import { aliased, assignments, endWrite, insert, jobWrite, newJob, page, progressWrite, replaceSecret, unaliased } from './sql-statements.js';
import type {
  AuthAttempt,
  CredentialRecord,
  JobOutcome,
  JobProgress,
  JobRecord,
  StateStore,
  TemplateRecord,
  VideoRecord,
  VideoRef,
  WatermarkAndVideo,
  WatermarkPatch,
  WatermarkRecord,
  WatermarkUpdateOptions,
} from './state-store.js';

const WATERMARK_AS_W = aliased('w', WATERMARK_COLUMNS);
const JOB_AS_J = aliased('j', JOB_COLUMNS);
/** Video keys remembered with their ids, at most. */
const VIDEO_IDS_KEPT = 10_000;

/** The tables of the state, in an order their references allow to be filled (watermarks name videos). */
export const STATE_TABLES = ['videos', 'templates', 'watermarks', 'jobs', 'credentials'] as const;
export type StateTable = (typeof STATE_TABLES)[number];

export class SqlStateStore implements StateStore {
  /**
   * Video keys with the id this store last read for them: a request by key can then read its video and its watermark
   * (whose identity is made from the video's id) in one statement. Only a hint: the statement reads the video by its
   * key and the watermark under the id guessed from it, and when the key names another video now, the watermark is
   * read again under the right one.
   */
  private readonly videoIds = new Map<string, string>();

  /** Repeated requests' answers, kept until a write anywhere names their rows (request-cache.ts), `requestCacheMs` at most. */
  private readonly requests: WatermarkRequestCache;

  constructor(
    protected readonly db: SqlDatabase,
    requestCacheMs = REQUEST_CACHE_MS,
  ) {
    this.requests = new WatermarkRequestCache(() => db.noticeSource(), requestCacheMs);
  }

  async describe(): Promise<{ database: string; schemaVersion: number; detail?: string }> {
    const detail = await this.db.detail();
    return { database: this.db.description, schemaVersion: await this.db.schemaVersion(), ...(detail ? { detail } : {}) };
  }

  get dependencies(): readonly Dependency[] {
    return this.db.dependencies;
  }

  changeBus(): ChangeBus | undefined {
    return this.db.changeBus();
  }

  poolUse() {
    return this.db.poolUse();
  }

  close(): Promise<void> {
    return this.db.close();
  }

  // ---- whole tables, for copying one database into another as it is
  async countRows(table: StateTable): Promise<number> {
    const r = await this.db.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number(r?.n ?? 0);
  }

  tableRows(table: StateTable): Promise<Record<string, unknown>[]> {
    return this.db.all<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY 1`);
  }

  /** Inserts rows as they are, every table in one transaction: all of them land, or none. */
  insertRows(tables: readonly { table: StateTable; rows: readonly Record<string, unknown>[] }[], secrets: Record<string, string> = {}): Promise<void> {
    return this.db.atomically([
      ...tables.flatMap(({ table, rows }) => rows.map((row) => insert(table, row))),
      ...Object.entries(secrets).map(([name, value]) => replaceSecret(name, value)),
    ]);
  }

  async sharedSecret(name: string, candidate: string): Promise<string> {
    await this.db.run('INSERT INTO shared_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, candidate]);
    const r = await this.db.get<SharedSecretsTable>('SELECT value FROM shared_secrets WHERE name = ?', [name]);
    return r!.value;
  }

  // ---- videos
  async insertVideo(v: VideoRecord): Promise<boolean> {
    const { sql, params } = insert('videos', videoRow(v));
    return (await this.db.run(`${sql} ON CONFLICT (key) DO NOTHING`, params)) === 1;
  }

  async updateVideo(id: string, patch: Partial<Omit<VideoRecord, 'id' | 'key' | 'createdOn'>>): Promise<void> {
    const set = assignments(videoPatchRow(patch));
    if (!set) return;
    await this.change(`video:${id}`, (notice) =>
      this.writeAnnounced([{ sql: `UPDATE videos SET ${set.sql} WHERE id = ?`, params: [...set.params, id] }], notice),
    );
  }

  async deleteVideo(id: string): Promise<void> {
    await this.changeAtomically([{ sql: 'DELETE FROM videos WHERE id = ?', params: [id] }], `video:${id}`);
  }

  async getVideo(id: string): Promise<VideoRecord | undefined> {
    const r = await this.db.get<VideosTable>('SELECT * FROM videos WHERE id = ?', [id]);
    return r && toVideo(r);
  }

  async getVideoByKey(key: string): Promise<VideoRecord | undefined> {
    const r = await this.db.get<VideosTable>('SELECT * FROM videos WHERE key = ?', [key]);
    return r && toVideo(r);
  }

  async listVideos(opts: { key?: string; limit?: number; offset?: number } = {}): Promise<VideoRecord[]> {
    const p = page(opts);
    const rows = opts.key
      ? await this.db.all<VideosTable>(`SELECT * FROM videos WHERE key = ? ORDER BY created_on, id${p.sql}`, [opts.key, ...p.params])
      : await this.db.all<VideosTable>(`SELECT * FROM videos ORDER BY created_on, id${p.sql}`, p.params);
    return rows.map(toVideo);
  }

  // ---- templates
  async insertTemplate(t: TemplateRecord): Promise<void> {
    const { sql, params } = insert('templates', templateRow(t));
    await this.db.run(sql, params);
  }

  async getTemplate(id: string): Promise<TemplateRecord | undefined> {
    const r = await this.db.get<TemplatesTable>('SELECT * FROM templates WHERE id = ?', [id]);
    return r && toTemplate(r);
  }

  async listTemplates(opts: { limit?: number; offset?: number } = {}): Promise<TemplateRecord[]> {
    const p = page(opts);
    return (await this.db.all<TemplatesTable>(`SELECT * FROM templates ORDER BY created_on, id${p.sql}`, p.params)).map(toTemplate);
  }

  async deleteTemplate(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM templates WHERE id = ?', [id])) === 1;
  }

  // ---- watermarks
  async insertWatermarkIfAbsent(w: WatermarkRecord, jobAt?: number): Promise<{ record: WatermarkRecord; created: boolean }> {
    const { sql, params } = insert('watermarks', watermarkRow(w));
    // One statement when it is new: the row comes back from the insert itself, and the job row goes with it.
    const row = { sql: `${sql} ON CONFLICT (id) DO NOTHING RETURNING *`, params };
    const [inserted] = await this.db.together<WatermarksTable>(jobAt === undefined ? [] : [newJob('watermark', w.id, jobAt)], row);
    if (inserted) return { record: toWatermark(inserted), created: true };
    return { record: (await this.getWatermark(w.id))!, created: false };
  }

  findWatermarkRequest(ref: VideoRef, identify: (videoId: string) => string, now: number): Promise<WatermarkAndVideo> {
    return this.requests.find(ref, identify, now, () => this.readWatermarkRequest(ref, identify));
  }

  private async readWatermarkRequest(ref: VideoRef, identify: (videoId: string) => string): Promise<WatermarkAndVideo> {
    const byId = Boolean(ref.videoId);
    if (!byId && ref.key === undefined) return {};
    const guess = byId ? ref.videoId! : this.videoIds.get(ref.key!);
    const row = await this.db.get<VideosTable & Record<string, unknown>>(
      `SELECT v.*, ${WATERMARK_AS_W} FROM videos v LEFT JOIN watermarks w ON w.id = ? AND w.video_id = v.id WHERE v.${byId ? 'id' : 'key'} = ?`,
      [guess === undefined ? '' : identify(guess), byId ? ref.videoId : ref.key],
    );
    if (!row) return {};
    const video = toVideo(row);
    if (!byId) {
      this.videoIds.delete(video.key);
      if (this.videoIds.size >= VIDEO_IDS_KEPT) this.videoIds.delete(this.videoIds.keys().next().value!);
      this.videoIds.set(video.key, video.id);
    }
    if (guess === video.id) {
      const w = unaliased<WatermarksTable>(row, 'w', WATERMARK_COLUMNS);
      return { video, watermark: w && toWatermark(w) };
    }
    return { video, watermark: await this.getWatermark(identify(video.id)) };
  }

  async getWatermarkAndJob(id: string, jobId: string): Promise<{ watermark?: WatermarkRecord; job?: JobRecord }> {
    const row = await this.db.get<WatermarksTable & Record<string, unknown>>(
      `SELECT w.*, ${JOB_AS_J} FROM watermarks w LEFT JOIN jobs j ON j.id = ? WHERE w.id = ?`,
      [jobId, id],
    );
    if (!row) return {};
    const job = unaliased<JobsTable>(row, 'j', JOB_COLUMNS);
    return { watermark: toWatermark(row), job: job && toJob(job) };
  }

  async getWatermarkWithVideo(id: string): Promise<{ watermark: WatermarkRecord; video: VideoRecord } | undefined> {
    const row = await this.db.get<VideosTable & Record<string, unknown>>(
      `SELECT v.*, ${WATERMARK_AS_W} FROM watermarks w JOIN videos v ON v.id = w.video_id WHERE w.id = ?`,
      [id],
    );
    const w = row && unaliased<WatermarksTable>(row, 'w', WATERMARK_COLUMNS);
    return row && w && { watermark: toWatermark(w), video: toVideo(row) };
  }

  async getWatermark(id: string): Promise<WatermarkRecord | undefined> {
    const r = await this.db.get<WatermarksTable>('SELECT * FROM watermarks WHERE id = ?', [id]);
    return r && toWatermark(r);
  }

  async listWatermarks(videoId?: string): Promise<WatermarkRecord[]> {
    const rows = videoId
      ? await this.db.all<WatermarksTable>('SELECT * FROM watermarks WHERE video_id = ? ORDER BY created_on, id', [videoId])
      : await this.db.all<WatermarksTable>('SELECT * FROM watermarks ORDER BY created_on, id');
    return rows.map(toWatermark);
  }

  async deleteWatermark(id: string): Promise<void> {
    await this.changeAtomically(
      [
        { sql: "DELETE FROM jobs WHERE kind = 'watermark' AND target_id = ?", params: [id] },
        { sql: 'DELETE FROM watermarks WHERE id = ?', params: [id] },
      ],
      `watermark:${id}`,
    );
  }

  async deleteVideoAndWatermarks(videoId: string): Promise<void> {
    await this.changeAtomically(
      [
        { sql: "DELETE FROM jobs WHERE kind = 'watermark' AND target_id IN (SELECT id FROM watermarks WHERE video_id = ?)", params: [videoId] },
        { sql: 'DELETE FROM watermarks WHERE video_id = ?', params: [videoId] },
        { sql: "DELETE FROM jobs WHERE kind = 'ingest' AND target_id = ?", params: [videoId] },
        { sql: 'DELETE FROM videos WHERE id = ?', params: [videoId] },
      ],
      `video:${videoId}`,
    );
  }

  /** Writes in one transaction with the notice of the row they change (sent if and only if they commit). */
  private changeAtomically(writes: readonly SqlStatement[], row: ChangedRow): Promise<void> {
    return this.change(row, (notice) => this.db.atomically([...writes, ...[this.db.noticeStatement(notice) ?? []].flat()]));
  }

  private change(row: ChangedRow, write: (notice: string) => Promise<void>): Promise<void> {
    return this.requests.change(row, write, (notice) => this.db.heardBack(notice));
  }

  async updateWatermark(id: string, patch: WatermarkPatch, options: WatermarkUpdateOptions = {}): Promise<void> {
    const set = assignments({
      status: patch.status,
      error: patch.error,
      ready_on: patch.readyOn,
      containers: patch.containers === undefined ? undefined : JSON.stringify(patch.containers),
      render: patch.render,
    } satisfies Partial<WatermarksTable>);
    if (!set) return;
    const from = options.from === undefined ? { sql: '', params: [] } : { sql: ' AND status = ?', params: [options.from] };
    const write = { sql: `UPDATE watermarks SET ${set.sql} WHERE id = ?${from.sql}`, params: [...set.params, id, ...from.params] };
    // A write that may meet a settled row (the only kind kept) tells every instance; a job's notice names it too.
    const mayMeetKept = options.from === undefined || options.from === 'READY' || options.from === 'PLAYABLE';
    const writes = options.job ? [write, jobWrite(options.job)] : [write];
    if (mayMeetKept && options.notice === undefined) return this.change(`watermark:${id}`, (notice) => this.writeAnnounced(writes, notice));
    await this.writeAnnounced(writes, options.notice);
    this.requests.changed({ kind: 'watermark', id });
  }

  // ---- jobs
  async ensureJob(kind: JobRecord['kind'], targetId: string, now: number): Promise<JobRecord> {
    const made = newJob(kind, targetId, now);
    const inserted = await this.db.get<JobsTable>(`${made.sql} RETURNING *`, made.params);
    return inserted ? toJob(inserted) : (await this.getJob(`${kind}:${targetId}`))!;
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const r = await this.db.get<JobsTable>('SELECT * FROM jobs WHERE id = ?', [id]);
    return r && toJob(r);
  }

  /**
   * Takes the job's lease when nobody holds a live one. A lease is live while its heartbeat is younger than staleMs,
   * so a process killed mid-job leaves a lease the next run can take over.
   */
  async acquireJob(id: string, owner: string, now: number, staleMs: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE jobs SET owner = ?, heartbeat = ?, status = 'running', attempts = attempts + 1, updated_on = ?, error = NULL
       WHERE id = ? AND status != 'done' AND (owner IS NULL OR owner = ? OR heartbeat IS NULL OR heartbeat < ?)`,
      [owner, now, now, id, owner, now - staleMs],
    );
    return changed === 1;
  }

  async heartbeatJob(id: string, owner: string, now: number): Promise<boolean> {
    const { sql, params } = jobWrite({ id, owner, now });
    return (await this.db.run(sql, params)) === 1;
  }

  async finishJob(id: string, owner: string, now: number, outcome: JobOutcome, notice?: string, progress?: JobProgress): Promise<void> {
    await this.writeAnnounced([endWrite(id, owner, now, outcome, progress)], notice);
  }

  /** Writes in one transaction, and their `notice` on the change bus: in the writes' own statement where the database can. */
  private async writeAnnounced(writes: readonly SqlStatement[], notice: string | undefined): Promise<void> {
    const announce = notice === undefined ? undefined : this.db.noticeStatement(notice);
    if (writes.length === 1 && !announce) await this.db.run(writes[0]!.sql, writes[0]!.params);
    else await this.db.together(writes, announce);
    if (notice !== undefined && !announce) this.changeBus()?.publish(notice);
  }

  async setJobProgress(id: string, progress: JobProgress, now: number, owner?: string): Promise<boolean> {
    // The lease's holder renews its heartbeat with the same write.
    const { sql, params } = progressWrite(id, progress, now, owner ?? null);
    return (await this.db.run(sql, params)) === 1;
  }

  async resumableJobs(now: number, staleMs: number): Promise<JobRecord[]> {
    const rows = await this.db.all<JobsTable>(
      "SELECT * FROM jobs WHERE status IN ('queued', 'running') AND (owner IS NULL OR heartbeat IS NULL OR heartbeat < ?) ORDER BY created_on",
      [now - staleMs],
    );
    return rows.map(toJob);
  }

  async countJobs(): Promise<{ kind: JobRecord['kind']; status: JobRecord['status']; count: number }[]> {
    const rows = await this.db.all<{ kind: JobRecord['kind']; status: JobRecord['status']; n: number | string }>(
      'SELECT kind, status, COUNT(*) AS n FROM jobs GROUP BY kind, status ORDER BY kind, status',
    );
    return rows.map((r) => ({ kind: r.kind, status: r.status, count: Number(r.n) }));
  }

  async resetJob(id: string, now: number): Promise<void> {
    await this.db.run("UPDATE jobs SET status = 'queued', owner = NULL, heartbeat = NULL, error = NULL, updated_on = ? WHERE id = ?", [now, id]);
  }

  // ---- credentials
  async takeAuthAttempt(source: string, now: number, windowMs: number, limit: number): Promise<AuthAttempt> {
    // One statement, so concurrent checks from one source (on any instance) are counted one after another.
    const taken = await this.db.get<{ failures: number; reset_at: number }>(
      `INSERT INTO auth_attempts (source, failures, pending, reset_at) VALUES (?, 0, 1, ?)
       ON CONFLICT (source) DO UPDATE SET
         failures = CASE WHEN auth_attempts.reset_at <= ? THEN 0 ELSE auth_attempts.failures END,
         pending = CASE WHEN auth_attempts.reset_at <= ? THEN 1 ELSE auth_attempts.pending + 1 END,
         reset_at = CASE WHEN auth_attempts.reset_at <= ? THEN excluded.reset_at ELSE auth_attempts.reset_at END
       WHERE auth_attempts.reset_at <= ? OR auth_attempts.failures + auth_attempts.pending < ?
       RETURNING failures, reset_at`,
      [source, now + windowMs, now, now, now, now, limit],
    );
    if (taken) return { taken: true, failures: Number(taken.failures), resetAt: Number(taken.reset_at) };
    const held = await this.db.get<{ failures: number; reset_at: number }>('SELECT failures, reset_at FROM auth_attempts WHERE source = ?', [source]);
    return { taken: false, failures: Number(held?.failures ?? 0), resetAt: Number(held?.reset_at ?? now + windowMs) };
  }

  async settleAuthAttempt(source: string, resetAt: number, failed: boolean): Promise<number> {
    const row = await this.db.get<{ failures: number }>(
      'UPDATE auth_attempts SET pending = pending - 1, failures = failures + ? WHERE source = ? AND reset_at = ? AND pending > 0 RETURNING failures',
      [failed ? 1 : 0, source, resetAt],
    );
    // Windows long over are dropped now and then, when a check fails.
    if (failed) await this.db.run('DELETE FROM auth_attempts WHERE reset_at < ?', [resetAt - 86_400_000]);
    return Number(row?.failures ?? 0);
  }

  async insertCredential(c: CredentialRecord): Promise<void> {
    const { sql, params } = insert('credentials', credentialRow(c));
    await this.db.run(sql, params);
  }

  async getCredential(clientId: string): Promise<CredentialRecord | undefined> {
    const r = await this.db.get<CredentialsTable>('SELECT * FROM credentials WHERE client_id = ?', [clientId]);
    return r && toCredential(r);
  }

  async listCredentials(): Promise<CredentialRecord[]> {
    return (await this.db.all<CredentialsTable>('SELECT * FROM credentials ORDER BY created_on')).map(toCredential);
  }

  async revokeCredential(clientId: string, now: number): Promise<boolean> {
    return (await this.db.run('UPDATE credentials SET revoked_on = ? WHERE client_id = ? AND revoked_on IS NULL', [now, clientId])) === 1;
  }

  async countActiveCredentials(): Promise<number> {
    const r = await this.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM credentials WHERE revoked_on IS NULL');
    return Number(r?.n ?? 0);
  }
}
