// Records as the API shows them: videos, templates and watermarks with freshly signed links.
// `wmark serve` answers with these, and the CLI prints them, so both modes show one shape.
import type { ApiVersion } from '../../core/api-version.js';
import { templatePlaceholders } from '../../core/placeholders.js';
import type { TemplateSetting } from '../../core/setting-types.js';
import { watermarkUrls } from '../../core/watermark-urls.js';
import type { TemplateResource, VideoResource, WatermarkResource } from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import type { TemplateRecord, VideoRecord, WatermarkRecord } from '../state/state-store.js';

/** Signed media links are valid this long (renewed by asking again), never beyond the watermark's own expiration. */
const MEDIA_URL_TTL_MS = 24 * 3600_000;
/** The 1.0 long-poll href expires shortly after READY. */
export const STATUS_URL_GRACE_MS = 10 * 60_000;
const PENDING_STATUS_TTL_MS = 6 * 3600_000;

/**
 * When a watermark's links stop working. Media and player links live a day, the 1.0 long-poll href until shortly
 * after READY, the 2.0 resource link as long as the media links; none outlives the watermark's own expiration.
 */
export function linkExpirations(w: WatermarkRecord, api: ApiVersion, now: number): { media: number; href: number } {
  const cap = (t: number) => (w.expiration !== null ? Math.min(t, w.expiration) : t);
  const media = cap(now + MEDIA_URL_TTL_MS);
  if (api === '2.0') return { media, href: media };
  return { media, href: cap(w.readyOn !== null ? Math.max(w.readyOn, now) + STATUS_URL_GRACE_MS : now + PENDING_STATUS_TTL_MS) };
}

/** 1.0 says READY once playable (PENDING before); 2.0's READY also means playable now; FAILED in both. */
export function apiStatus(w: WatermarkRecord): 'PENDING' | 'READY' | 'FAILED' {
  if (w.status === 'FAILED') return 'FAILED';
  return w.status === 'PENDING' ? 'PENDING' : 'READY';
}

export function watermarkBody(engine: Engine, w: WatermarkRecord, options: { api: ApiVersion; baseUrl: string; includeHref?: boolean }): WatermarkResource {
  const exp = linkExpirations(w, options.api, engine.now());
  const urls = watermarkUrls({
    baseUrl: options.baseUrl,
    apiVersion: options.api,
    videoId: w.videoId,
    watermarkId: w.id,
    secret: engine.secret,
    mediaExpirationMs: exp.media,
    statusExpirationMs: exp.href,
    includeMp4: true,
  });
  const status = apiStatus(w);
  // The mp4 is listed only once complete: it is joined after the last segment, and READY waits for it.
  const mp4Ready = w.containers.includes('mp4') && w.status === 'READY';
  const wantsM3u8 = w.containers.includes('m3u8') || !w.containers.includes('mp4');
  return {
    status,
    containers: {
      href: urls.player,
      ...(options.api === '1.0' ? { iframe: urls.iframe } : {}),
      ...(status === 'READY' && wantsM3u8 ? { m3u8: urls.m3u8 } : {}),
      ...(mp4Ready && urls.mp4 ? { mp4: urls.mp4 } : {}),
    },
    ...(options.includeHref !== false ? { href: urls.status } : {}),
    id: w.id,
    videoId: w.videoId,
    expiration: w.expiration,
    ...(w.status === 'FAILED' && w.error ? { error: w.error.split('\n').slice(-3).join('\n') } : {}),
  };
}

export function videoBody(v: VideoRecord): VideoResource & { frameRate: number | null; hasAudio: boolean; segments: number; createdOn: number } {
  return {
    id: v.id,
    key: v.key,
    sourceUrl: v.sourceUrl,
    name: v.name,
    status: v.status,
    enableForensic: v.enableForensic,
    ...(v.enableForensic && v.forensicLayout ? { forensicLayout: v.forensicLayout } : {}),
    width: v.width,
    height: v.height,
    duration: v.durationSeconds,
    frameRate: v.fpsNum && v.fpsDen ? Number((v.fpsNum / v.fpsDen).toFixed(3)) : null,
    hasAudio: v.hasAudio,
    segments: v.segments.length,
    createdOn: v.createdOn,
    ...(v.error ? { error: v.error } : {}),
  };
}

export function templateBody(t: TemplateRecord & { builtin?: boolean }): TemplateResource {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    settings: t.settings,
    placeholders: templatePlaceholders(t.settings as TemplateSetting[]),
    createdOn: t.createdOn,
    ...(t.builtin !== undefined ? { builtin: t.builtin } : {}),
  };
}
