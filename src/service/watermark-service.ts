// The interfaces every front end talks to: videos, templates, watermark requests and their progress, each a service of
// its own, in the shapes of the Video Watermarking Service API (docs/api.md). Two implementations: the local engine
// (engine/app/local-service.ts) and a remote service over HTTP (remote/remote-service.ts). The CLI picks one with
// --remote; `wmark serve` puts the local one behind HTTP routes.
import type { VideoOrder, WatermarkOrder } from '../core/api-requests.js';
import type { ApiVersion } from '../core/api-version.js';
import type { ForensicLayoutChoice } from '../core/forensic-layout.js';
import type { TemplateOrder } from '../core/template-schema.js';

/** POST /{v}/videos (docs/api.md, "Videos") as sent; a front end parses it (parseVideoRequest) into a VideoOrder. */
export interface VideoRequestBody {
  sourceUrl: string;
  key?: string;
  name?: string;
  enableForensic?: boolean;
  /** wmark's own field: how a forensic video's segments carry the code ('whole', 'split' or 'single'; docs/forensic.md). */
  forensicLayout?: ForensicLayoutChoice;
}

/** A video as the API shows it; a remote service may add fields, which are kept. */
export interface VideoResource {
  id: string;
  key?: string;
  sourceUrl?: string;
  status?: string;
  name?: string | null;
  enableForensic?: boolean;
  forensicLayout?: ForensicLayoutChoice;
  width?: number | null;
  height?: number | null;
  duration?: number | null;
  error?: string;
  [field: string]: unknown;
}

/** A settings template as the API shows it. */
export interface TemplateResource {
  id: string;
  name?: string;
  description?: string | null;
  settings?: unknown[];
  placeholders?: string[];
  builtin?: boolean;
  [field: string]: unknown;
}

/**
 * POST /{v}/watermark (docs/api.md, "Watermarks") as sent: settings, or a template with its placeholder values. A front
 * end parses it (parseWatermarkOrder) into a WatermarkOrder.
 */
export interface WatermarkRequestBody {
  key?: string;
  videoId?: string;
  settings?: unknown[];
  settingsTemplateMapping?: { id: string; mappings: Record<string, string> };
  containers?: ('m3u8' | 'mp4')[];
  /** Unix seconds, unlike the milliseconds of links and answers (docs/api.md, "Conventions"). */
  expiration?: number;
}

/** The watermark response / resource: the 1.0 or 2.0 answer of docs/api.md, "Watermarks". */
export interface WatermarkResource {
  status: string;
  containers?: { href?: string; iframe?: string; m3u8?: string; mp4?: string; [field: string]: unknown };
  href?: string;
  id?: string;
  videoId?: string;
  expiration?: number | null;
  error?: string;
  [field: string]: unknown;
}

export interface WatermarkResult {
  resource: WatermarkResource;
  /** This request created the watermark (HTTP 201) rather than finding it. */
  created: boolean;
  api: ApiVersion;
  /** Things the caller should hear about that are not errors (e.g. an expiration kept from the first request). */
  warnings: string[];
}

/** How far a watch goes: until the playlist plays, or until every output (segments, mp4) is finished. */
export type WatchGoal = 'playable' | 'complete';

export interface WatermarkProgress {
  /** The API status (PENDING / READY / FAILED). */
  status: string;
  /** Finer detail where the service knows it (the local engine does; a remote one says only the status). */
  stage?: string;
  done?: number;
  total?: number;
  /** The goal was reached (or the watermark failed): this is the last state. */
  final: boolean;
  /** The resource as it stands, where the service says it anyway (a remote poll answers with it). */
  resource?: WatermarkResource;
}

export interface VideoProgress {
  video: VideoResource;
  /** 0..1 while ingesting, when known. */
  fraction?: number;
  stage?: string;
  final: boolean;
}

export interface ServiceCallOptions {
  /** API version for this call; a remote service otherwise uses the one it was opened with or detected. */
  api?: ApiVersion;
  signal?: AbortSignal;
  /** A new watermark renders whole pictures even where its mark fits a band (the local engine; a remote one ignores it). */
  fullRender?: boolean;
}

export interface WatchOptions {
  signal?: AbortSignal;
  /** Time between reads where nothing pushes changes (remote polling, another process rendering). */
  intervalMs?: number;
  /** Absolute ms; past it the watch throws TIMEOUT. */
  deadline?: number;
}

export interface Videos {
  create(order: VideoOrder, options?: ServiceCallOptions): Promise<{ video: VideoResource; created: boolean }>;
  get(id: string, options?: ServiceCallOptions): Promise<VideoResource>;
  list(query?: { key?: string; limit?: number; page?: number }, options?: ServiceCallOptions): Promise<VideoResource[]>;
  /** Yields the video until its ingest is over (INGESTED or FAILED_*). */
  watch(id: string, options?: WatchOptions): AsyncIterable<VideoProgress>;
}

export interface Templates {
  create(order: TemplateOrder, options?: ServiceCallOptions): Promise<TemplateResource>;
  list(options?: ServiceCallOptions): Promise<TemplateResource[]>;
  get(id: string, options?: ServiceCallOptions): Promise<TemplateResource>;
}

export interface Watermarks {
  /** `options.api` is the version the order was parsed for (its FORENSIC content and template render follow it). */
  request(order: WatermarkOrder, options?: ServiceCallOptions): Promise<WatermarkResult>;
  /** The resource again, with freshly signed links. */
  get(resource: WatermarkResource, options?: ServiceCallOptions): Promise<WatermarkResource>;
  /** Yields progress until the goal is reached or the watermark fails. */
  watch(resource: WatermarkResource, goal: WatchGoal, options?: WatchOptions & ServiceCallOptions): AsyncIterable<WatermarkProgress>;
}

/** A watermarking service, local or remote: one object holding a service per concern. */
export interface WatermarkService {
  /** Where requests go, for messages ("the local engine in <dir>", or the base URL). */
  readonly description: string;
  readonly kind: 'local' | 'remote';
  /** The API version used when a call does not say. */
  apiVersion(): Promise<ApiVersion>;
  readonly videos: Videos;
  readonly templates: Templates;
  readonly watermarks: Watermarks;
}

/**
 * Video statuses after which an ingest is over: all but PENDING, and PROCESSING, which another service of the API may
 * report while it ingests.
 */
export function isFinalVideoStatus(status: string | undefined): boolean {
  return status !== undefined && status !== 'PENDING' && status !== 'PROCESSING';
}
