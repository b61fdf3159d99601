// What a caller gets back for a watermark: status, signed URLs as `wmark serve` serves them, and local files.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ApiVersion } from '../core/api-version.js';
import { watermarkUrls } from '../core/watermark-urls.js';
import type { Engine } from './engine.js';
import type { VideoRecord, WatermarkRecord } from './store.js';
import { MP4_NAME, PLAYLIST_NAME, watermarkDir } from './watermark.js';

/** Signed media links are valid this long (renewed by asking again), never beyond the watermark's own expiration. */
export const MEDIA_URL_TTL_MS = 24 * 3600_000;
/** SPEC 4.3: the 1.0 long-poll href expires shortly after READY. */
export const STATUS_URL_GRACE_MS = 10 * 60_000;
const PENDING_STATUS_TTL_MS = 6 * 3600_000;

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export function urlExpirations(w: WatermarkRecord, now: number): { media: number; status: number } {
  const cap = (t: number) => (w.expiration !== null ? Math.min(t, w.expiration) : t);
  const status = w.readyOn !== null ? Math.max(w.readyOn, now) + STATUS_URL_GRACE_MS : now + PENDING_STATUS_TTL_MS;
  return { media: cap(now + MEDIA_URL_TTL_MS), status: cap(status) };
}

export interface WatermarkView {
  id: string;
  videoId: string;
  videoKey: string;
  status: WatermarkRecord['status'];
  created: boolean;
  /** Unix ms, or null when the watermark never expires. */
  expiration: number | null;
  error?: string;
  urls: { m3u8: string; player: string; mp4?: string; href: string };
  files: { dir: string; m3u8?: string; mp4?: string };
  out?: string;
}

export function watermarkView(
  engine: Engine,
  w: WatermarkRecord,
  video: VideoRecord,
  options: { baseUrl: string; apiVersion: ApiVersion; created: boolean },
): WatermarkView {
  const now = engine.now();
  const exp = urlExpirations(w, now);
  const urls = watermarkUrls({
    baseUrl: options.baseUrl,
    apiVersion: options.apiVersion,
    videoId: video.id,
    watermarkId: w.id,
    secret: engine.secret,
    mediaExpirationMs: exp.media,
    statusExpirationMs: exp.status,
    includeMp4: w.containers.includes('mp4'),
  });
  const dir = watermarkDir(engine, video.id, w.id);
  const m3u8 = path.join(dir, PLAYLIST_NAME);
  const mp4 = path.join(dir, MP4_NAME);
  return {
    id: w.id,
    videoId: video.id,
    videoKey: video.key,
    status: w.status,
    created: options.created,
    expiration: w.expiration,
    ...(w.error ? { error: w.error } : {}),
    urls: { m3u8: urls.m3u8, player: urls.player, ...(urls.mp4 ? { mp4: urls.mp4 } : {}), href: urls.status },
    files: { dir, ...(existsSync(m3u8) ? { m3u8 } : {}), ...(w.containers.includes('mp4') && existsSync(mp4) ? { mp4 } : {}) },
  };
}
