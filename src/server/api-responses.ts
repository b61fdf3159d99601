// The watermark response bodies of API 1.0 and 2.0 (SPEC 2.4), built from a record and freshly signed URLs.
import type { ApiVersion } from '../core/api-version.js';
import { watermarkUrls } from '../core/watermark-urls.js';
import type { Engine } from '../engine/engine.js';
import type { VideoRecord, WatermarkRecord } from '../engine/store.js';
import { urlExpirations } from '../engine/watermark-view.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MP4_NAME, watermarkDir } from '../engine/watermark.js';

export interface WatermarkResponse {
  status: string;
  containers: { href: string; iframe?: string; m3u8?: string; mp4?: string };
  href?: string;
  id: string;
  videoId: string;
  expiration: number | null;
  error?: string;
}

/** 1.0 says READY once playable (PENDING before); 2.0's READY also means playable now, FAILED otherwise. */
export function apiStatus(version: ApiVersion, w: WatermarkRecord): string {
  if (w.status === 'FAILED') return 'FAILED';
  return w.status === 'PENDING' ? 'PENDING' : 'READY';
}

export function watermarkResponse(
  engine: Engine,
  version: ApiVersion,
  w: WatermarkRecord,
  video: VideoRecord,
  baseUrl: string,
  options: { includeHref: boolean },
): WatermarkResponse {
  const exp = urlExpirations(w, engine.now());
  const urls = watermarkUrls({
    baseUrl,
    apiVersion: version,
    videoId: video.id,
    watermarkId: w.id,
    secret: engine.secret,
    mediaExpirationMs: exp.media,
    statusExpirationMs: version === '2.0' ? exp.media : exp.status,
    includeMp4: true,
  });
  const status = apiStatus(version, w);
  const playable = status === 'READY';
  // The mp4 is listed only once complete (it is joined after the last segment).
  const mp4Ready = w.containers.includes('mp4') && existsSync(path.join(watermarkDir(engine, video.id, w.id), MP4_NAME));
  const wantsM3u8 = w.containers.includes('m3u8') || !w.containers.includes('mp4');
  const containers: WatermarkResponse['containers'] = {
    href: urls.player,
    ...(version === '1.0' ? { iframe: urls.iframe } : {}),
    ...(playable && wantsM3u8 ? { m3u8: urls.m3u8 } : {}),
    ...(mp4Ready && urls.mp4 ? { mp4: urls.mp4 } : {}),
  };
  return {
    status,
    containers,
    ...(options.includeHref ? { href: urls.status } : {}),
    id: w.id,
    videoId: video.id,
    expiration: w.expiration,
    ...(w.status === 'FAILED' && w.error ? { error: w.error.split('\n').slice(-3).join('\n') } : {}),
  };
}
