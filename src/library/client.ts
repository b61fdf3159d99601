// The typed client a program imports from 'wmark' (README, "Use it from code"): a few calls over the WatermarkService
// the CLI uses, so an embedded engine and a remote service answer a program alike, in the API's shapes.
import { parseVideoRequest, parseWatermarkOrder } from '../core/api-requests.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { parseTemplateBody } from '../core/template-schema.js';
import { lastOf } from '../service/watch.js';
import type {
  TemplateResource,
  VideoRequestBody,
  VideoResource,
  WatchGoal,
  WatermarkRequestBody,
  WatermarkResource,
  WatermarkService,
} from '../service/watermark-service.js';

export interface CallOptions {
  /** Stops the call (and any wait) when aborted. */
  signal?: AbortSignal;
}

export interface IngestOptions extends CallOptions {
  /** Wait until the video is ingested (default true); false answers at once, the video still PENDING. */
  wait?: boolean;
}

export interface WatermarkOptions extends CallOptions {
  /** Wait until the watermark plays (default), until every output is finished, or not at all (false). */
  wait?: WatchGoal | false;
}

export class WmarkClient {
  /** Which service answers: 'local' for the embedded engine, 'remote' for a service over HTTP. */
  readonly mode: 'local' | 'remote';

  constructor(
    private readonly service: WatermarkService,
    private readonly closeService: () => Promise<void>,
  ) {
    this.mode = service.kind;
  }

  /** The API version the calls use. */
  apiVersion(): Promise<ApiVersion> {
    return this.service.apiVersion();
  }

  /** Registers a video (or finds the one with its key) and, unless told not to, waits for its ingest; FAILED_* throws. */
  async ingest(request: VideoRequestBody, options: IngestOptions = {}): Promise<VideoResource> {
    const { video } = await this.service.videos.create(parseVideoRequest(request), options);
    if (options.wait === false) return video;
    const last = await lastOf(this.service.videos.watch(video.id, { signal: options.signal }));
    if (last.video.status !== 'INGESTED') {
      throw new WmarkError('VIDEO_FAILED', `video ${video.id} was not ingested: ${last.video.status}${last.video.error ? ` (${last.video.error})` : ''}`);
    }
    return last.video;
  }

  videos(query: { key?: string; limit?: number; page?: number } = {}, options: CallOptions = {}): Promise<VideoResource[]> {
    return this.service.videos.list(query, options);
  }

  /** Saves a settings template: `{name, description?, settings}` with placeholders `%x%` or `[%x%]`. */
  template(body: { name?: string; description?: string; settings: unknown[] }, options: CallOptions = {}): Promise<TemplateResource> {
    return this.service.templates.create(parseTemplateBody(body), options);
  }

  templates(options: CallOptions = {}): Promise<TemplateResource[]> {
    return this.service.templates.list(options);
  }

  /**
   * Asks for a watermark (settings, or a template with its mappings) and, unless told not to, waits for it: the
   * resource comes back with its links freshly signed. A watermark that fails throws WATERMARK_FAILED.
   */
  async watermark(request: WatermarkRequestBody, options: WatermarkOptions = {}): Promise<WatermarkResource> {
    // Checked here, as a route checks a body: a bad request costs no call.
    const api = await this.service.apiVersion();
    const { resource } = await this.service.watermarks.request(parseWatermarkOrder(request, { api, nowMs: Date.now() }), { ...options, api });
    const goal = options.wait ?? 'playable';
    if (goal === false) return resource;
    const last = await lastOf(this.service.watermarks.watch(resource, goal, { signal: options.signal }));
    if (last.status === 'FAILED') {
      const why = last.resource?.error ?? resource.error;
      throw new WmarkError('WATERMARK_FAILED', `watermark ${resource.id ?? resource.href} failed${why ? `: ${why}` : ''}`);
    }
    return this.service.watermarks.get(last.resource ?? resource, options);
  }

  /** Lets go of the engine (its jobs stop, its database closes) or of the remote session. */
  close(): Promise<void> {
    return this.closeService();
  }
}
