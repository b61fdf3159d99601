// The state the engine keeps (videos, templates, watermarks, jobs, credentials): its records, and the interface a
// store implements. store.ts is the SQLite implementation.
import type { Container } from '../core/api-requests.js';
import type { ForensicLayoutChoice } from '../core/forensic/variant-plan.js';

export type { Container } from '../core/api-requests.js';
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

export interface CredentialRecord {
  clientId: string;
  keyHash: string;
  label: string | null;
  createdOn: number;
  revokedOn: number | null;
}

/** The partial updates a watermark row takes. */
export type WatermarkPatch = { status?: WatermarkStatus; error?: string | null; readyOn?: number | null; containers?: Container[]; render?: RenderMode };

/**
 * What the engine asks of its state: rows and their atomic transitions. The engine, the service and the server see
 * only this interface; `Store` (store.ts) implements it on a SQLite file. Every transition that two processes may race
 * on is one call here (insert-if-absent, lease acquire/heartbeat/finish), so that a shared database (PostgreSQL, for
 * several serve processes) can implement the same calls with the same guarantees.
 *
 * The calls are synchronous because SQLite answers in microseconds in-process. A networked implementation would make
 * them return promises; that is a mechanical change at the call sites, and this interface is where it starts.
 */
export interface StateStore {
  insertVideo(v: VideoRecord): boolean;
  updateVideo(id: string, patch: Partial<Omit<VideoRecord, 'id' | 'key' | 'createdOn'>>): void;
  deleteVideo(id: string): void;
  getVideo(id: string): VideoRecord | undefined;
  getVideoByKey(key: string): VideoRecord | undefined;
  listVideos(opts?: { key?: string; limit?: number; offset?: number }): VideoRecord[];

  insertTemplate(t: TemplateRecord): void;
  getTemplate(id: string): TemplateRecord | undefined;
  listTemplates(opts?: { limit?: number; offset?: number }): TemplateRecord[];
  deleteTemplate(id: string): boolean;

  /** Inserts unless a watermark with this identity exists; returns the stored record either way (first writer wins). */
  insertWatermarkIfAbsent(w: WatermarkRecord): { record: WatermarkRecord; created: boolean };
  getWatermark(id: string): WatermarkRecord | undefined;
  listWatermarks(videoId?: string): WatermarkRecord[];
  /** Removes a watermark's row and its job row; its media is the caller's to remove. */
  deleteWatermark(id: string): void;
  /** Removes a video with its watermarks and every job of either, atomically; media is the caller's. */
  deleteVideoAndWatermarks(videoId: string): void;
  updateWatermark(id: string, patch: WatermarkPatch): void;

  /** Creates the job row for a target if none exists and returns it. */
  ensureJob(kind: JobRecord['kind'], targetId: string, now: number): JobRecord;
  getJob(id: string): JobRecord | undefined;
  /** Takes the job's lease when nobody holds a live one (a heartbeat younger than staleMs); true when taken. */
  acquireJob(id: string, owner: string, now: number, staleMs: number): boolean;
  /** Renews the lease; false when `owner` no longer holds it. */
  heartbeatJob(id: string, owner: string, now: number): boolean;
  finishJob(id: string, owner: string, now: number, outcome: { status: 'done' | 'failed' | 'queued'; error?: string }): void;
  setJobProgress(id: string, progress: { done: number; total: number; stage?: string | null }, now: number): void;
  /** Jobs not finished whose lease is free or stale: what a starting server resumes, oldest first. */
  resumableJobs(now: number, staleMs: number): JobRecord[];
  resetJob(id: string, now: number): void;

  insertCredential(c: CredentialRecord): void;
  getCredential(clientId: string): CredentialRecord | undefined;
  listCredentials(): CredentialRecord[];
  revokeCredential(clientId: string, now: number): boolean;
  countActiveCredentials(): number;

  close(): void;
}
