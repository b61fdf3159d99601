// The state the engine keeps (videos, templates, watermarks, jobs, credentials): its records, and the asynchronous
// interface every store implements (sql-state-store.ts, one implementation for every SQL database wmark speaks).
import type { Container } from '../../core/api-requests.js';
import type { Dependency } from '../../core/dependency.js';
import type { ForensicLayoutChoice } from '../../core/forensic-layout.js';
import type { ChangeBus } from './change-bus.js';
import type { PoolUse } from './sql-database.js';

export type { Container } from '../../core/api-requests.js';
export type { ChangeBus } from './change-bus.js';
export type { PoolUse } from './sql-database.js';
export type VideoStatus = 'PENDING' | 'INGESTED' | 'FAILED_ENCODING' | 'FAILED_DIGITAL_PROFILING';
export type WatermarkStatus = 'PENDING' | 'PLAYABLE' | 'READY' | 'FAILED';

export interface VideoRecord {
  id: string;
  key: string;
  sourceUrl: string;
  name: string | null;
  status: VideoStatus;
  enableForensic: boolean;
  /** How its segments carry the forensic code (forensic videos; null for those recorded before the choice existed: 'whole' or older). */
  forensicLayout?: ForensicLayoutChoice | null;
  /**
   * SHA-256 (hex) of a local source file's bytes as registered: the same path holding other bytes is another source.
   * Null for a URL source (its identity is the URL) and for a video recorded before sources were hashed, until an
   * ingest of the same path records it.
   */
  sourceSha256?: string | null;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  fpsNum: number | null;
  fpsDen: number | null;
  hasAudio: boolean;
  /** Duration in seconds of each working segment, in order. */
  segments: number[];
  /** Presentation time (s) of the first video frame in the working segments: the origin of the video timeline. */
  timeOrigin: number;
  error: string | null;
  createdOn: number;
}

export interface TemplateRecord {
  id: string;
  name: string;
  description: string | null;
  settings: unknown[];
  createdOn: number;
}

export interface WatermarkRecord {
  id: string;
  videoId: string;
  /** Normalised settings (canonical JSON parsed back). */
  settings: unknown[];
  containers: Container[];
  /** Unix ms after which every URL of this watermark stops working; null = never. */
  expiration: number | null;
  status: WatermarkStatus;
  error: string | null;
  createdOn: number;
  readyOn: number | null;
  forensicPayload: number | null;
  /**
   * 'full' renders every segment (CLI, mp4, batches); 'on-demand' renders the opening, then what players ask for
   * (serve). A full request for an on-demand watermark turns it full.
   */
  render: RenderMode;
}

export type RenderMode = 'full' | 'on-demand';

export interface JobRecord {
  id: string;
  kind: 'watermark' | 'ingest';
  targetId: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  owner: string | null;
  heartbeat: number | null;
  attempts: number;
  error: string | null;
  /** Progress in the job's own unit (segments for a watermark, milliseconds of video for an ingest). */
  done: number;
  total: number;
  stage: string | null;
  createdOn: number;
  updatedOn: number;
}

/** A credential check counted against its source, or refused; the source's failures so far, and when its window ends. */
export interface AuthAttempt {
  taken: boolean;
  failures: number;
  resetAt: number;
}

export interface CredentialRecord {
  clientId: string;
  keyHash: string;
  label: string | null;
  createdOn: number;
  revokedOn: number | null;
}

/** A video named by its id or its key. */
export interface VideoRef {
  key?: string;
  videoId?: string;
}

/** A video and the watermark of it a request names, as one read finds them (either may be absent). */
export interface WatermarkAndVideo {
  video?: VideoRecord;
  watermark?: WatermarkRecord;
}

/** The partial updates a watermark row takes. */
export type WatermarkPatch = { status?: WatermarkStatus; error?: string | null; readyOn?: number | null; containers?: Container[]; render?: RenderMode };
export interface WatermarkUpdateOptions {
  /** Changes it only while its status is this one (a job that read it before another process moved it on). */
  from?: WatermarkStatus;
  /** A change-bus message for the other processes, sent when the change is written. */
  notice?: string;
  /** The watermark's job's own write, made in the same transaction (one statement on a database server). */
  job?: JobWrite;
}

/** A job's progress: done of total in its own unit, and the stage it is in. */
export interface JobProgress {
  done: number;
  total: number;
  stage?: string | null;
}

/** How a job's lease ends: done, failed (with the reason), or queued again to resume later. */
export interface JobOutcome {
  status: 'done' | 'failed' | 'queued';
  error?: string;
}

/**
 * A write of a job's lease holder: its progress (when given) with the lease renewed, or, with `end`, the lease ended
 * (and its last progress written). Only the lease's `owner` renews or ends it; progress is written whoever holds it.
 */
export interface JobWrite {
  id: string;
  owner: string;
  now: number;
  progress?: JobProgress;
  end?: JobOutcome;
}

/**
 * What the engine asks of its state: rows and their atomic transitions. The engine and the application layer see only
 * this interface. Every transition that two processes (or two machines) may race on is one call here
 * (insert-if-absent, lease acquire/heartbeat/finish), and each is a single SQL statement or one transaction, so a
 * database shared by several `wmark serve` processes gives the same guarantees as one SQLite file.
 */
export interface StateStore {
  insertVideo(v: VideoRecord): Promise<boolean>;
  updateVideo(id: string, patch: Partial<Omit<VideoRecord, 'id' | 'key' | 'createdOn'>>): Promise<void>;
  deleteVideo(id: string): Promise<void>;
  getVideo(id: string): Promise<VideoRecord | undefined>;
  getVideoByKey(key: string): Promise<VideoRecord | undefined>;
  listVideos(opts?: { key?: string; limit?: number; offset?: number }): Promise<VideoRecord[]>;

  insertTemplate(t: TemplateRecord): Promise<void>;
  getTemplate(id: string): Promise<TemplateRecord | undefined>;
  listTemplates(opts?: { limit?: number; offset?: number }): Promise<TemplateRecord[]>;
  deleteTemplate(id: string): Promise<boolean>;

  /**
   * Inserts unless a watermark with this identity exists; returns the stored record either way (first writer wins).
   * With `jobAt`, its job row is made too (queued, unless one exists) in the same transaction.
   */
  insertWatermarkIfAbsent(w: WatermarkRecord, jobAt?: number): Promise<{ record: WatermarkRecord; created: boolean }>;
  getWatermark(id: string): Promise<WatermarkRecord | undefined>;
  /**
   * The video `ref` names and its watermark whose id is `identify(video id)`, in one read (a statement, when this
   * store has read the video before): what a repeated request needs to find it has nothing to do. A READY answer is
   * kept a while, dropped at once when any instance changes its rows; `now`, the caller's clock, times it and checks
   * the kept watermark's expiry.
   */
  findWatermarkRequest(ref: VideoRef, identify: (videoId: string) => string, now: number): Promise<WatermarkAndVideo>;
  /** A watermark and its video in one statement: what its job reads when it starts. */
  getWatermarkWithVideo(id: string): Promise<{ watermark: WatermarkRecord; video: VideoRecord } | undefined>;
  /** A watermark and its job row (`jobId`) in one statement: what a watcher reads each time it wakes. */
  getWatermarkAndJob(id: string, jobId: string): Promise<{ watermark?: WatermarkRecord; job?: JobRecord }>;
  listWatermarks(videoId?: string): Promise<WatermarkRecord[]>;
  /** Removes a watermark's row and its job row; its media is the caller's to remove. */
  deleteWatermark(id: string): Promise<void>;
  /** Removes a video with its watermarks and every job of either, atomically; media is the caller's. */
  deleteVideoAndWatermarks(videoId: string): Promise<void>;
  updateWatermark(id: string, patch: WatermarkPatch, options?: WatermarkUpdateOptions): Promise<void>;

  /** Creates the job row for a target if none exists and returns it. */
  ensureJob(kind: JobRecord['kind'], targetId: string, now: number): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Takes the job's lease when nobody holds a live one (a heartbeat younger than staleMs); true when taken. */
  acquireJob(id: string, owner: string, now: number, staleMs: number): Promise<boolean>;
  /** Renews the lease; false when `owner` no longer holds it. */
  heartbeatJob(id: string, owner: string, now: number): Promise<boolean>;
  /**
   * Ends the lease, writing `progress` too when given (the last, not written yet); `notice`, a change-bus message, goes
   * to the other processes when the end is written.
   */
  finishJob(id: string, owner: string, now: number, outcome: JobOutcome, notice?: string, progress?: JobProgress): Promise<void>;
  /** Writes progress; given the lease's `owner`, renews its heartbeat too when it still holds it. True when the job exists. */
  setJobProgress(id: string, progress: JobProgress, now: number, owner?: string): Promise<boolean>;
  /** Jobs not finished whose lease is free or stale: what a starting server resumes, oldest first. */
  resumableJobs(now: number, staleMs: number): Promise<JobRecord[]>;
  resetJob(id: string, now: number): Promise<void>;

  insertCredential(c: CredentialRecord): Promise<void>;
  getCredential(clientId: string): Promise<CredentialRecord | undefined>;
  listCredentials(): Promise<CredentialRecord[]>;
  revokeCredential(clientId: string, now: number): Promise<boolean>;
  countActiveCredentials(): Promise<number>;

  /**
   * Counts one credential check from `source` as running in its window (a new window of `windowMs` once the last has
   * ended), unless its failed and running checks already make `limit`.
   */
  takeAuthAttempt(source: string, now: number, windowMs: number, limit: number): Promise<AuthAttempt>;
  /** Ends a check taken in the window ending at `resetAt`, as a failure or not; resolves with the window's failures. */
  settleAuthAttempt(source: string, resetAt: number, failed: boolean): Promise<number>;

  /**
   * The shared secret named `name`: `candidate` is stored when the database holds none yet (first writer wins), and
   * the stored value is returned either way, so every instance that opens the database agrees on one.
   */
  sharedSecret(name: string, candidate: string): Promise<string>;

  /** Messages between processes on this database; undefined when it has no server to carry them (SQLite). */
  changeBus(): ChangeBus | undefined;
  /** How many jobs there are of each kind and status: one grouped count, cheap enough for every metrics scrape. */
  countJobs(): Promise<{ kind: JobRecord['kind']; status: JobRecord['status']; count: number }[]>;

  /** Which database this is and its schema version, for `wmark doctor`. */
  describe(): Promise<{ database: string; schemaVersion: number; detail?: string }>;
  /** Its connection pool's use now, when the database is a server (PostgreSQL); undefined for a SQLite file. */
  poolUse(): PoolUse | undefined;
  /**
   * What the store needs that may stop answering, watched: a database server (then its requests get its 503, and
   * /readyz says so). None for a SQLite file on this machine, which is always there.
   */
  readonly dependencies: readonly Dependency[];
  close(): Promise<void>;
}
