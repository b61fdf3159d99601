// Records to table rows and back: JSON columns, 0/1 flags, and the camelCase names the engine uses.
import type { ForensicLayoutChoice } from '../../core/forensic-layout.js';
import type { CredentialsTable, JobsTable, TemplatesTable, VideosTable, WatermarksTable } from './schema.js';
import type {
  Container,
  CredentialRecord,
  JobRecord,
  RenderMode,
  TemplateRecord,
  VideoRecord,
  VideoStatus,
  WatermarkRecord,
  WatermarkStatus,
} from './state-store.js';

/** Drivers hand 64-bit integers back as numbers or strings (PostgreSQL's BIGINT); records hold numbers. */
const int = (v: number | string | bigint): number => (typeof v === 'number' ? v : Number(v));
const intOrNull = (v: number | string | bigint | null): number | null => (v === null ? null : int(v));

export const videoRow = (v: VideoRecord): VideosTable => ({
  id: v.id,
  key: v.key,
  source_url: v.sourceUrl,
  name: v.name,
  status: v.status,
  enable_forensic: v.enableForensic ? 1 : 0,
  forensic_layout: v.forensicLayout ?? null,
  source_sha256: v.sourceSha256 ?? null,
  width: v.width,
  height: v.height,
  duration: v.durationSeconds,
  fps_num: v.fpsNum,
  fps_den: v.fpsDen,
  has_audio: v.hasAudio ? 1 : 0,
  segments: JSON.stringify(v.segments),
  time_origin: v.timeOrigin,
  error: v.error,
  created_on: v.createdOn,
});

/** The columns a partial video update touches, by record field. */
export function videoPatchRow(patch: Partial<VideoRecord>): Partial<VideosTable> {
  const row: Partial<VideosTable> = {};
  if (patch.sourceUrl !== undefined) row.source_url = patch.sourceUrl;
  if (patch.name !== undefined) row.name = patch.name;
  if (patch.status !== undefined) row.status = patch.status;
  if (patch.enableForensic !== undefined) row.enable_forensic = patch.enableForensic ? 1 : 0;
  if (patch.forensicLayout !== undefined) row.forensic_layout = patch.forensicLayout;
  if (patch.sourceSha256 !== undefined) row.source_sha256 = patch.sourceSha256;
  if (patch.width !== undefined) row.width = patch.width;
  if (patch.height !== undefined) row.height = patch.height;
  if (patch.durationSeconds !== undefined) row.duration = patch.durationSeconds;
  if (patch.fpsNum !== undefined) row.fps_num = patch.fpsNum;
  if (patch.fpsDen !== undefined) row.fps_den = patch.fpsDen;
  if (patch.hasAudio !== undefined) row.has_audio = patch.hasAudio ? 1 : 0;
  if (patch.segments !== undefined) row.segments = JSON.stringify(patch.segments);
  if (patch.timeOrigin !== undefined) row.time_origin = patch.timeOrigin;
  if (patch.error !== undefined) row.error = patch.error;
  return row;
}

export const toVideo = (r: VideosTable): VideoRecord => ({
  id: r.id,
  key: r.key,
  sourceUrl: r.source_url,
  name: r.name ?? null,
  status: r.status as VideoStatus,
  enableForensic: int(r.enable_forensic) === 1,
  forensicLayout: (r.forensic_layout as ForensicLayoutChoice | null) ?? null,
  sourceSha256: r.source_sha256 ?? null,
  width: r.width ?? null,
  height: r.height ?? null,
  durationSeconds: r.duration ?? null,
  fpsNum: r.fps_num ?? null,
  fpsDen: r.fps_den ?? null,
  hasAudio: int(r.has_audio) === 1,
  segments: JSON.parse(r.segments) as number[],
  timeOrigin: r.time_origin,
  error: r.error ?? null,
  createdOn: int(r.created_on),
});

export const templateRow = (t: TemplateRecord): TemplatesTable => ({
  id: t.id,
  name: t.name,
  description: t.description,
  settings: JSON.stringify(t.settings),
  created_on: t.createdOn,
});

export const toTemplate = (r: TemplatesTable): TemplateRecord => ({
  id: r.id,
  name: r.name,
  description: r.description ?? null,
  settings: JSON.parse(r.settings) as unknown[],
  createdOn: int(r.created_on),
});

export const watermarkRow = (w: WatermarkRecord): WatermarksTable => ({
  id: w.id,
  video_id: w.videoId,
  settings: JSON.stringify(w.settings),
  containers: JSON.stringify(w.containers),
  expiration: w.expiration,
  status: w.status,
  error: w.error,
  created_on: w.createdOn,
  ready_on: w.readyOn,
  forensic_payload: w.forensicPayload,
  render: w.render,
});

export const toWatermark = (r: WatermarksTable): WatermarkRecord => ({
  id: r.id,
  videoId: r.video_id,
  settings: JSON.parse(r.settings) as unknown[],
  containers: JSON.parse(r.containers) as Container[],
  expiration: intOrNull(r.expiration),
  status: r.status as WatermarkStatus,
  error: r.error ?? null,
  createdOn: int(r.created_on),
  readyOn: intOrNull(r.ready_on),
  forensicPayload: intOrNull(r.forensic_payload),
  render: r.render as RenderMode,
});

export const toJob = (r: JobsTable): JobRecord => ({
  id: r.id,
  kind: r.kind as JobRecord['kind'],
  targetId: r.target_id,
  status: r.status as JobRecord['status'],
  owner: r.owner ?? null,
  heartbeat: intOrNull(r.heartbeat),
  attempts: int(r.attempts),
  error: r.error ?? null,
  done: int(r.done),
  total: int(r.total),
  stage: r.stage ?? null,
  createdOn: int(r.created_on),
  updatedOn: int(r.updated_on),
});

export const credentialRow = (c: CredentialRecord): CredentialsTable => ({
  client_id: c.clientId,
  key_hash: c.keyHash,
  label: c.label,
  created_on: c.createdOn,
  revoked_on: c.revokedOn,
});

export const toCredential = (r: CredentialsTable): CredentialRecord => ({
  clientId: r.client_id,
  keyHash: r.key_hash,
  label: r.label ?? null,
  createdOn: int(r.created_on),
  revokedOn: intOrNull(r.revoked_on),
});
