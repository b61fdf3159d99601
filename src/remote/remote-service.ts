// The WatermarkService of a remote Video Watermarking Service (API 1.0 or 2.0, `wmark serve` included), over HTTP: the
// same calls as the local engine, answered by the service, with progress read by polling its signed links.
import type { VideoOrder, WatermarkOrder } from '../core/api-requests.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import type { TemplateOrder } from '../core/template-schema.js';
import { watch } from '../service/watch.js';
import {
  isFinalVideoStatus,
  type ServiceCallOptions,
  type TemplateResource,
  type Templates,
  type VideoProgress,
  type VideoResource,
  type Videos,
  type WatchOptions,
  type WatermarkProgress,
  type WatermarkResource,
  type WatermarkResult,
  type WatermarkService,
  type Watermarks,
} from '../service/watermark-service.js';
import { errorFromResponse, expectJson, formatSeconds, type HttpClient } from './client.js';
import { templateRequestBody, videoRequestBody, watermarkRequestBody } from './request-bodies.js';
import { DEFAULT_RETRY } from './retry.js';
import { FINAL_STATUSES, watermarkResponseSchema } from './schemas.js';
import type { RemoteSession } from './session.js';

/** How often the API asks clients to poll a 1.0 long-poll href (docs/api.md, "Watermarks"). */
export const DEFAULT_POLL_INTERVAL_MS = 3_000;
const VIDEO_POLL_MS = 1_000;

export class RemoteService implements WatermarkService {
  readonly kind = 'remote' as const;
  readonly description: string;
  readonly videos: RemoteVideos;
  readonly templates: RemoteTemplates;
  readonly watermarks: RemoteWatermarks;

  constructor(
    readonly session: RemoteSession,
    /** The version asked for (flag, env, config); undefined lets the session find out. */
    private readonly asked?: ApiVersion,
  ) {
    this.description = session.baseUrl;
    this.videos = new RemoteVideos(this);
    this.templates = new RemoteTemplates(this);
    this.watermarks = new RemoteWatermarks(this);
  }

  apiVersion(): Promise<ApiVersion> {
    return this.session.resolveApi(this.asked);
  }

  /** The version of one call: the one it asks for, else the service's. */
  api(options: ServiceCallOptions): Promise<ApiVersion> {
    return options.api ? Promise.resolve(options.api) : this.apiVersion();
  }
}

class RemoteVideos implements Videos {
  constructor(private readonly service: RemoteService) {}

  async create(order: VideoOrder, options: ServiceCallOptions = {}): Promise<{ video: VideoResource; created: boolean }> {
    const { video, status } = await this.service.session.createVideo(await this.service.api(options), { ...videoRequestBody(order) });
    return { video, created: status === 201 };
  }

  async get(id: string, options: ServiceCallOptions = {}): Promise<VideoResource> {
    return this.service.session.getVideo(await this.service.api(options), id);
  }

  async list(query: { key?: string; limit?: number; page?: number } = {}, options: ServiceCallOptions = {}): Promise<VideoResource[]> {
    const q = Object.fromEntries(Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
    return this.service.session.listVideos(await this.service.api(options), q);
  }

  async *watch(id: string, options: WatchOptions = {}): AsyncIterable<VideoProgress> {
    const api = await this.service.apiVersion();
    const started = Date.now();
    const deadline = options.deadline ?? this.service.session.deadline;
    const states = watch({
      read: () => this.service.session.getVideo(api, id),
      intervalMs: options.intervalMs ?? VIDEO_POLL_MS,
      key: (v) => String(v.status),
      until: (v) => isFinalVideoStatus(v.status),
      signal: options.signal,
      deadline,
      timeout: (v) =>
        new WmarkError('TIMEOUT', `timed out: video ${id} is still ${v?.status ?? 'being ingested'} after ${formatSeconds(Date.now() - started)}`, {
          hint: `Raise ${this.service.session.timeoutLabel}, or use --no-wait and check later.`,
        }),
    });
    for await (const video of states) yield { video, final: isFinalVideoStatus(video.status) };
  }
}

class RemoteTemplates implements Templates {
  constructor(private readonly service: RemoteService) {}

  async create(order: TemplateOrder, options: ServiceCallOptions = {}): Promise<TemplateResource> {
    return this.service.session.createTemplate(await this.service.api(options), templateRequestBody(order));
  }

  async list(options: ServiceCallOptions = {}): Promise<TemplateResource[]> {
    return this.service.session.listTemplates(await this.service.api(options));
  }

  async get(id: string, options: ServiceCallOptions = {}): Promise<TemplateResource> {
    return this.service.session.getTemplate(await this.service.api(options), id);
  }
}

class RemoteWatermarks implements Watermarks {
  constructor(private readonly service: RemoteService) {}

  async request(order: WatermarkOrder, options: ServiceCallOptions = {}): Promise<WatermarkResult> {
    const api = await this.service.api(options);
    const { response, status } = await this.service.session.createWatermark(api, { ...watermarkRequestBody(order, api) });
    return { resource: response, created: status === 201, api, warnings: [] };
  }

  async get(resource: WatermarkResource): Promise<WatermarkResource> {
    if (!resource.href) throw new WmarkError('NO_HREF', `the service answered ${resource.status} without an href to follow`);
    return readSigned(this.service.session.client, resource.href, this.service.session.deadline);
  }

  /** A remote READY already means playable; only the 1.0 PENDING state is followed, through the signed href. */
  watch(resource: WatermarkResource, _goal: unknown, options: WatchOptions = {}): AsyncIterable<WatermarkProgress> {
    return watchHref(this.service.session.client, resource, {
      deadline: this.service.session.deadline,
      timeoutLabel: this.service.session.timeoutLabel,
      ...options,
    });
  }
}

/** What to do about a refused signed link: the service's own code (expired, forged) comes with this advice. */
const REFUSED_LINK_HINT =
  'A long-poll link expires shortly after READY. Send the same watermark request again for fresh links (it returns the same watermark, nothing is re-encoded).';

/** GETs a signed watermark link (1.0 long-poll href, 2.0 resource link): no credentials, the URL carries its signature. */
async function readSigned(client: HttpClient, href: string, deadline: number, timeoutLabel?: string): Promise<WatermarkResource> {
  // Transient failures are retried for as long as the deadline allows, not a fixed number of times.
  const res = await client.send({ method: 'GET', url: href, deadline, timeoutLabel, retry: { ...DEFAULT_RETRY, maxAttempts: Infinity } });
  if (res.status === 403 || res.status === 410) {
    const e = errorFromResponse(res, { kind: 'auth', hint: REFUSED_LINK_HINT });
    throw Object.assign(e, { message: `the link was refused, it has expired or is not valid: ${e.message}` });
  }
  return expectJson(res, watermarkResponseSchema, 'watermark status');
}

/** Follows a watermark's signed href every `intervalMs` until READY or FAILED; a final resource is yielded as it is. */
export async function* watchHref(
  client: HttpClient,
  resource: WatermarkResource,
  options: WatchOptions & { deadline: number; timeoutLabel: string },
): AsyncGenerator<WatermarkProgress & { resource: WatermarkResource }> {
  if (FINAL_STATUSES.has(resource.status)) {
    yield { status: resource.status, final: true, resource };
    return;
  }
  const href = resource.href;
  if (!href) throw new WmarkError('NO_HREF', `the service answered ${resource.status} without an href to poll`);
  const started = Date.now();
  const states = watch({
    read: () => readSigned(client, href, options.deadline, options.timeoutLabel),
    intervalMs: options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    until: (r) => FINAL_STATUSES.has(r.status),
    signal: options.signal,
    deadline: options.deadline,
    timeout: (r) =>
      new WmarkError('TIMEOUT', `timed out after ${formatSeconds(Date.now() - started)}: the watermark is still ${r?.status ?? resource.status}`, {
        hint: `Raise ${options.timeoutLabel}, or poll again later with \`wmark poll <href>\`.`,
      }),
  });
  for await (const r of states) yield { status: r.status, final: FINAL_STATUSES.has(r.status), resource: r };
}
