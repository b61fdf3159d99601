// The data folder's layout, defined once: its files (database, secret, records of a running serve and of a shared
// store), its scratch space, and the keys of every media object. A media key is the object's path below the media
// folder with `/` separators, and the same key names it in a shared store (S3), so one layout serves both.
import path from 'node:path';
import { type PixelSize, renditionName } from '../../core/plan/image-drawing.js';
import { segmentFileName } from '../../core/plan/segment-timing.js';
import type { ImageFormat } from '../../core/setting-types.js';

export interface DataLayout {
  root: string;
  /** SQLite database (WAL), shared by `wmark serve` and CLI runs. */
  db: string;
  /** HMAC key for signed URLs and tokens. */
  secret: string;
  /** Where `wmark serve` records its address while it runs, for local commands' links. */
  serveRecord: string;
  /** The shared store `serve --media` last used for this folder (no credentials), so any process can delete there too. */
  sharedMedia: string;
  media: string;
  videos: string;
  watermarks: string;
  /** Scratch space on the same filesystem as media, so finished folders can be renamed into place. */
  tmp: string;
  locks: string;
  /** The built-in sample clip, generated once. */
  samples: string;
  /** Logs of detached job processes (a CLI run that returned early). */
  logs: string;
}

export function dataLayout(dataDir: string): DataLayout {
  const media = path.join(dataDir, 'media');
  return {
    root: dataDir,
    db: path.join(dataDir, 'wmark.db'),
    secret: path.join(dataDir, 'secret.key'),
    serveRecord: path.join(dataDir, 'serve.json'),
    sharedMedia: path.join(dataDir, 'shared-media.json'),
    media,
    videos: path.join(media, 'videos'),
    watermarks: path.join(media, 'watermarks'),
    tmp: path.join(dataDir, 'tmp'),
    locks: path.join(dataDir, 'locks'),
    samples: path.join(dataDir, 'samples'),
    logs: path.join(dataDir, 'logs'),
  };
}

/** A watermark's playlist, as stored and as served. */
export const PLAYLIST_NAME = 'video.m3u8';
/** A watermark's downloadable mp4 (joined from its segments). */
export const MP4_NAME = 'video.mp4';
/** A forensic video's prepared variants, layout and detection sidecar live in this folder of the video's. */
export const FORENSIC_DIR = 'forensic';
export const SIDECAR_NAME = 'sidecar.bin.gz';
export const LAYOUT_NAME = 'layout.json';

/** Media keys: every object's name in the media folder or a shared store. */
export const mediaKeys = {
  /** A video's folder: its working segments, and its forensic folder. */
  video: (videoId: string) => `videos/${videoId}`,
  workingSegment: (videoId: string, index: number) => `videos/${videoId}/${segmentFileName(index)}`,
  forensic: (videoId: string) => `videos/${videoId}/${FORENSIC_DIR}`,
  forensicFile: (videoId: string, name: string) => `videos/${videoId}/${FORENSIC_DIR}/${name}`,
  /** Every watermark of a video lives below this folder. */
  videoWatermarks: (videoId: string) => `watermarks/${videoId}`,
  /** One watermark's folder: its segments, playlist and mp4. */
  watermark: (videoId: string, watermarkId: string) => `watermarks/${videoId}/${watermarkId}`,
  watermarkFile: (videoId: string, watermarkId: string, name: string) => `watermarks/${videoId}/${watermarkId}/${name}`,
  segment: (videoId: string, watermarkId: string, index: number) => `watermarks/${videoId}/${watermarkId}/${segmentFileName(index)}`,
  /**
   * TEXT drawn over forensic variants, shared by every viewer of a video with the same visible text (`textHash` names
   * the text set): each (text set, variant, segment) is encoded at most once.
   */
  sharedText: (videoId: string, textHash: string, name: string) => `watermarks/${videoId}/_shared/${textHash}/${name}`,
  /**
   * An IMAGE setting's image as fetched, named by the hash of its bytes: kept once however many watermarks draw it, so
   * every later render (on demand, on a farm's worker, after a restart) draws the same bytes.
   */
  image: (sha256: string, format: ImageFormat) => `images/${sha256}.${IMAGE_EXTENSIONS[format]}`,
  /** The image scaled to the size it is drawn at (RGBA PNG), made once when a watermark is requested. */
  imageRendition: (sha256: string, size: PixelSize) => `images/${renditionName(sha256, size)}`,
} as const;

const IMAGE_EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };

/** The local file of a media key in a data folder's media folder. */
export function mediaFile(layout: Pick<DataLayout, 'media'>, key: string): string {
  return path.join(layout.media, ...key.split('/'));
}

/** Scratch names in the data folder's tmp folder. */
export const scratch = {
  /** A downloaded source waits here, under the video's id, until its ingest job has read it. */
  downloadedSource: (layout: DataLayout, videoId: string) => path.join(layout.tmp, `source-${videoId}`),
  /** An ingest's staging folder, renamed into the media folder when complete. */
  ingestStaging: (layout: DataLayout, videoId: string) => path.join(layout.tmp, `ingest-${videoId}`),
};
