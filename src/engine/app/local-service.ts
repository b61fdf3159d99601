// The application layer: the WatermarkService on this machine's engine. `wmark serve` and the CLI call it for
// everything they share (ingest-or-return-existing, request -> job -> playable, key and template lookups, the API
// shapes of every answer), and for what only a local engine can do: replace a video, list and delete watermarks,
// export their files, detect a leak, manage API keys, and serve signed media (media-access.ts).
import { signToken } from '../../core/access-token.js';
import { parseVideoRequest, parseWatermarkRequest } from '../../core/api-requests.js';
import type { ApiVersion } from '../../core/api-version.js';
import { WmarkError } from '../../core/errors.js';
import type { TemplateSetting } from '../../core/setting-types.js';
import { lastOf, watch } from '../../service/watch.js';
import type {
  CallOptions,
  TemplateResource,
  VideoProgress,
  VideoRequest,
  VideoResource,
  WatchGoal,
  WatchOptions,
  WatermarkProgress,
  WatermarkRequest,
  WatermarkResource,
  WatermarkResult,
  WatermarkService,
} from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import { type DetectOptions, type DetectResult, detectLeak } from '../forensic/detect.js';
import { FORENSIC_MIN_SECONDS, type Registration, registerVideo } from '../ingest/register.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import { isLeaseLive, type JobKind, jobId, topicOf } from '../jobs/job-lease.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { AuthAttempt, JobRecord, RenderMode, VideoRecord, WatermarkRecord } from '../state/state-store.js';
import { forceFullRender } from '../watermark/band-strategy.js';
import { deleteWatermark, exportWatermark, renderedSegments, type WatermarkFiles, watermarkFiles } from '../watermark/manage.js';
import { needsJob, requestWatermark, type VideoRef, watermarkAndJob } from '../watermark/request.js';
import { apiStatus, templateBody, videoBody, watermarkBody } from './api-bodies.js';
import { checkCredential, createCredential, type IssuedCredential, isActiveClient, listCredentials, revokeCredential, tokenKey } from './credentials.js';
import { MediaAccess } from './media-access.js';
import { Operations } from './operations.js';
import { createTemplate, deleteTemplate, findTemplate, listTemplates } from './templates.js';
import { goalOf, workInHand } from './watermark-watch.js';

export type { AuthAttempt, WatermarkRecord } from '../state/state-store.js';

/** A forensic-only watermark costs links, not encodes: it is answered READY after at most this long. */
const FORENSIC_READY_MS = 15_000;
/** How often a watcher reads the store: seldom (for a lost notice) where the database pushes other processes' changes. */
const pollMs = (engine: Engine) => (engine.changes.crossProcess ? 2000 : 250);

export interface LocalServiceOptions {
  queue: JobQueue;
  /** Links in answers start with this unless a call gives its own base (the server passes the request's). */
  baseUrl: string;
  /** API version of answers when a call does not say. */
  api?: ApiVersion;
  /** How long POST /2.0/watermark waits for a new watermark to become playable (its READY means playable now). */
  playableTimeoutMs?: number;
  /** What createVideo and IMAGE settings may read (an API client's); undefined: anything (the CLI). */
  sourcePolicy?: SourcePolicy;
  /** How new watermarks are rendered (default full: a CLI run wants every output; serve renders on demand). */
  render?: RenderMode;
}

export interface LocalCallOptions extends CallOptions {
  baseUrl?: string;
}

export class LocalService implements WatermarkService {
  readonly kind = 'local' as const;
  readonly description: string;
  /** Signed links and the media behind them, for the HTTP server. */
  readonly media: MediaAccess;
  /** Health, readiness and the figures of /metrics. */
  readonly operations: Operations;
  /** Forensic watermarks need videos at least this long. */
  readonly forensicMinimumSeconds = FORENSIC_MIN_SECONDS;
  private readonly api: ApiVersion;

  constructor(
    private readonly engine: Engine,
    private readonly options: LocalServiceOptions,
  ) {
    this.api = options.api ?? '2.0';
    this.description = `the local engine in ${engine.paths.root}`;
    this.media = new MediaAccess(engine);
    this.operations = new Operations(engine);
  }

  get queue(): JobQueue {
    return this.options.queue;
  }

  /** The data folder this service keeps its state and media in. */
  get dataDir(): string {
    return this.engine.paths.root;
  }

  /** The engine's clock (ms). */
  now(): number {
    return this.engine.now();
  }

  apiVersion(): Promise<ApiVersion> {
    return Promise.resolve(this.api);
  }

  // ---- videos

  async createVideo(request: VideoRequest): Promise<{ video: VideoResource; created: boolean }> {
    const { video, created } = await this.register(request, false);
    return { video, created };
  }

  /** Ingests under the key even when it names another video, which is forgotten (`ingest --replace`). */
  replaceVideo(request: VideoRequest): Promise<{ video: VideoResource; created: boolean; replaced?: Registration['replaced'] }> {
    return this.register(request, true);
  }

  private async register(request: VideoRequest, replace: boolean): Promise<{ video: VideoResource; created: boolean; replaced?: Registration['replaced'] }> {
    const body = parseVideoRequest(request);
    // An ingest needs every dependency (the source goes into the store, the transcode onto the queue): refused at
    // once while one is down, before anything is recorded.
    this.engine.dependencies.require();
    const { video, created, replaced } = await registerVideo(
      this.engine,
      { source: body.sourceUrl, key: body.key, name: body.name, enableForensic: body.enableForensic, forensicLayout: body.forensicLayout, replace },
      this.options.sourcePolicy,
    );
    // A video still PENDING (new, or left by a stopped process) gets its ingest job; a running one is left alone.
    if (video.status === 'PENDING') this.queue.enqueue({ kind: 'ingest', id: video.id });
    return { video: videoBody(video), created, ...(replaced ? { replaced } : {}) };
  }

  async getVideo(id: string): Promise<VideoResource> {
    return videoBody(await this.videoRecord(id));
  }

  /** A video by id or key (the CLI accepts either). */
  async findVideo(ref: string): Promise<VideoRecord | undefined> {
    return (await this.engine.store.getVideo(ref)) ?? (await this.engine.store.getVideoByKey(ref));
  }

  private async videoRecord(id: string): Promise<VideoRecord> {
    const video = await this.engine.store.getVideo(id);
    if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id "${id}"`);
    return video;
  }

  async listVideos(query: { key?: string; limit?: number; page?: number } = {}): Promise<VideoResource[]> {
    const limit = query.limit ?? -1;
    const offset = query.limit !== undefined ? ((query.page ?? 1) - 1) * query.limit : 0;
    return (await this.engine.store.listVideos({ key: query.key, limit, offset })).map(videoBody);
  }

  watchVideo(id: string, options: WatchOptions = {}): AsyncIterable<VideoProgress> {
    const states = watch({
      read: async () => ({ video: await this.videoRecord(id), job: await this.engine.store.getJob(jobId('ingest', id)) }),
      intervalMs: options.intervalMs ?? pollMs(this.engine),
      subscribe: (wake) => this.engine.changes.subscribe(topicOf('ingest', id), wake),
      key: (s) => `${s.video.status}|${s.job?.done}|${s.job?.stage}`,
      until: (s) => s.video.status !== 'PENDING',
      onIdle: (s) => this.takeOver('ingest', id, s.job),
      signal: options.signal,
      deadline: options.deadline,
      timeout: () => new WmarkError('TIMEOUT', `timed out: video ${id} is still being ingested`),
    });
    return mapAsync(states, (s) => {
      const { stage, done, total } = workInHand(s.job);
      return {
        video: videoBody(s.video),
        ...(done !== undefined && total ? { fraction: Math.min(1, done / total) } : {}),
        ...(stage ? { stage } : {}),
        final: s.video.status !== 'PENDING',
      };
    });
  }

  // ---- templates

  async createTemplate(body: unknown, options: CallOptions = {}): Promise<TemplateResource> {
    return templateBody(await createTemplate(this.engine, body ?? {}, options.api));
  }

  async listTemplates(): Promise<TemplateResource[]> {
    return (await listTemplates(this.engine)).map(templateBody);
  }

  async getTemplate(id: string): Promise<TemplateResource> {
    const t = await findTemplate(this.engine, id);
    if (!t) throw new WmarkError('TEMPLATE_NOT_FOUND', `no template with id "${id}"`);
    return templateBody(t);
  }

  async deleteTemplate(id: string): Promise<void> {
    await deleteTemplate(this.engine, id);
  }

  // ---- watermarks

  async requestWatermark(request: WatermarkRequest, options: LocalCallOptions = {}): Promise<WatermarkResult> {
    const api = options.api ?? this.api;
    // The template (if the request names one) is read first; the request is then checked and rendered in one go.
    const templateId = (request as { settingsTemplateMapping?: { id?: unknown } } | null)?.settingsTemplateMapping?.id;
    const template = typeof templateId === 'string' ? await findTemplate(this.engine, templateId) : undefined;
    const parsed = parseWatermarkRequest(request, {
      api,
      nowMs: this.engine.now(),
      template: (id) => (id === templateId ? (template?.settings as TemplateSetting[] | undefined) : undefined),
    });
    const result = await requestWatermark(this.engine, { ...parsed, render: this.options.render ?? 'full', sourcePolicy: this.options.sourcePolicy });
    let record = result.watermark;
    // A forensic-only watermark needs no encode (its playlist picks existing A/B segments): it starts at once, ahead
    // of any renders, and is READY at once.
    const forensicOnly = parsed.settings.every((s) => s.type === 'FORENSIC');
    if (options.fullRender && result.created) await forceFullRender(this.engine, record);
    if (needsJob(record)) {
      // Work to do needs every dependency: refused at once while one is down (the same request later starts it).
      this.engine.dependencies.require();
      this.queue.enqueue({ kind: 'watermark', id: record.id }, { immediate: forensicOnly });
    }
    if (forensicOnly && record.status === 'PENDING') record = await this.settle(record, 'playable', FORENSIC_READY_MS, options.signal);
    if (api === '2.0' && record.status === 'PENDING') {
      record = await this.settle(record, 'playable', this.options.playableTimeoutMs ?? 120_000, options.signal);
      if (record.status === 'PENDING') {
        throw new WmarkError('NOT_READY_YET', 'the watermark is still being prepared; send the same request again shortly');
      }
    }
    const warnings = result.expirationIgnored
      ? ['this watermark already exists; its expiration is kept as it was set at creation (docs/settings.md#identity-and-expiration)']
      : [];
    return { resource: this.body(record, api, options.baseUrl), created: result.created, api, warnings };
  }

  async getWatermark(resource: WatermarkResource, options: LocalCallOptions = {}): Promise<WatermarkResource> {
    return this.body(await this.watermarkRecord(resource), options.api ?? this.api, options.baseUrl);
  }

  /** The API body of a watermark, with links on `baseUrl` (default: this service's). */
  body(w: WatermarkRecord, api: ApiVersion = this.api, baseUrl = this.options.baseUrl, includeHref = true): WatermarkResource {
    return watermarkBody(this.engine, w, { api, baseUrl, includeHref });
  }

  async watermarkRecord(ref: WatermarkResource | string): Promise<WatermarkRecord> {
    const id = typeof ref === 'string' ? ref : ref.id;
    const w = id ? await this.engine.store.getWatermark(id) : undefined;
    if (!w) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${id ?? '(no id)'}`);
    return w;
  }

  watchWatermark(resource: WatermarkResource, goal: WatchGoal, options: WatchOptions & CallOptions = {}): AsyncIterable<WatermarkProgress> {
    const reached = goalOf(goal);
    const states = this.watchRecord(resource.id ?? '', goal, { ...options, progress: true });
    return mapAsync(states, (s) => ({ status: apiStatus(s.w), ...workInHand(s.job), final: reached(s.w) }));
  }

  /** A watermark and its job until the goal; woken by the job's progress too when `progress`. */
  private watchRecord(
    id: string,
    goal: WatchGoal,
    options: WatchOptions & CallOptions & { progress: boolean; initial?: { w: WatermarkRecord; job: JobRecord | undefined } },
  ): AsyncIterable<{ w: WatermarkRecord; job: JobRecord | undefined }> {
    const reached = goalOf(goal);
    return watch({
      read: () => watermarkAndJob(this.engine, id),
      initial: options.initial,
      intervalMs: options.intervalMs ?? pollMs(this.engine),
      subscribe: (wake) => this.engine.changes.subscribe(topicOf('watermark', id), wake, { progress: options.progress }),
      key: (s) => `${s.w.status}|${s.job?.done}|${s.job?.total}|${s.job?.stage}`,
      until: (s) => reached(s.w),
      onIdle: (s) => this.takeOver('watermark', id, s.job),
      signal: options.signal,
      deadline: options.deadline,
      timeout: () => new WmarkError('TIMEOUT', `timed out: watermark ${id} is not ${goal === 'playable' ? 'playable' : 'finished'} yet`),
    });
  }

  /**
   * Waits for the goal or the timeout and returns the record as it is then (from `known`, just read or written, to the
   * last read; progress does not wake it). A dependency that goes down ends the wait with its 503 (the job waits for it).
   */
  private async settle(known: WatermarkRecord, goal: WatchGoal, timeoutMs: number, signal?: AbortSignal): Promise<WatermarkRecord> {
    const id = known.id;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const watched = lastOf(
        this.watchRecord(id, goal, { deadline: this.engine.now() + timeoutMs, signal: stop.signal, progress: false, initial: { w: known, job: undefined } }),
      );
      return (await this.engine.dependencies.whileUp(watched)).w;
    } catch (error) {
      if (!(error instanceof WmarkError && error.code === 'TIMEOUT')) throw error;
    } finally {
      stop.abort();
      signal?.removeEventListener('abort', onAbort);
    }
    return this.watermarkRecord(id);
  }

  /** A job nobody works on any more (its process died, or was never started) is queued again. */
  private takeOver(kind: JobKind, id: string, job: JobRecord | undefined): void {
    if (job && (job.status === 'queued' || job.status === 'running') && !isLeaseLive(job, this.engine.now())) this.queue.enqueue({ kind, id });
  }

  /** Watermarks on this engine, oldest first; of one video when given. */
  listWatermarks(videoId?: string): Promise<WatermarkRecord[]> {
    return this.engine.store.listWatermarks(videoId);
  }

  /** Forgets a watermark and its files (the service API has no delete). */
  async deleteWatermark(ref: WatermarkResource | string): Promise<void> {
    await deleteWatermark(this.engine, await this.watermarkRecord(ref));
  }

  /** Where a watermark's outputs are (the CLI shows them beside the links). */
  async files(ref: WatermarkResource | string): Promise<WatermarkFiles> {
    return watermarkFiles(this.engine, await this.watermarkRecord(ref));
  }

  renderedSegments(ref: WatermarkResource | string): Promise<{ done: number; total: number }> {
    return this.watermarkRecord(ref).then((w) => renderedSegments(this.engine, w));
  }

  /** Copies a finished watermark's HLS folder and mp4 to `dest/<id>/` (CI pipelines collecting outputs). */
  async exportWatermark(ref: WatermarkResource | string, dest: string): Promise<string> {
    return exportWatermark(this.engine, await this.watermarkRecord(ref), dest);
  }

  // ---- forensic detection

  detect(ref: VideoRef, file: string, onStage?: (stage: string) => void, options?: DetectOptions): Promise<DetectResult> {
    return detectLeak(this.engine, ref, file, onStage, options);
  }

  // ---- API credentials of `wmark serve`

  createKey(label?: string): Promise<IssuedCredential> {
    return createCredential(this.engine, label);
  }

  listKeys() {
    return listCredentials(this.engine);
  }

  async revokeKey(clientId: string): Promise<void> {
    if (!(await revokeCredential(this.engine, clientId))) throw new WmarkError('CLIENT_NOT_FOUND', `no active client id "${clientId}"`);
  }

  /** The client id when the key is that client's and the client is active. */
  async checkKey(clientId: string, apiKey: string): Promise<string | undefined> {
    return (await checkCredential(this.engine, clientId, apiKey))?.clientId;
  }

  /** Counts a credential check from `source` against the limit every instance on this database shares. */
  takeAuthAttempt(source: string, windowMs: number, limit: number): Promise<AuthAttempt> {
    return this.engine.store.takeAuthAttempt(source, this.now(), windowMs, limit);
  }

  settleAuthAttempt(source: string, resetAt: number, failed: boolean): Promise<number> {
    return this.engine.store.settleAuthAttempt(source, resetAt, failed);
  }

  isActiveClient(clientId: string): Promise<boolean> {
    return isActiveClient(this.engine, clientId);
  }

  /** The key access tokens are signed with (derived from the service secret, never the URL-signing key itself). */
  tokenKey(): Buffer {
    return tokenKey(this.engine);
  }

  /** A token for `clientId`, valid for `ttlSeconds`. */
  issueToken(clientId: string, ttlSeconds: number): Promise<string> {
    const now = Math.floor(this.engine.now() / 1000);
    return signToken(tokenKey(this.engine), { sub: clientId, iat: now, exp: now + ttlSeconds });
  }

  /** A token for the client with this label (created once): how `wmark demo` calls its own service like any client. */
  async tokenFor(label: string, ttlSeconds = 3600): Promise<string> {
    const existing = (await this.listKeys()).find((c) => c.label === label && c.revokedOn === null);
    const clientId = existing?.clientId ?? (await this.createKey(label)).clientId;
    return this.issueToken(clientId, ttlSeconds);
  }

  // ---- operations

  /** Counts for the service's index page. */
  async counts(): Promise<{ videos: number; ingested: number; watermarks: number; ready: number }> {
    const [videos, watermarks] = await Promise.all([this.engine.store.listVideos(), this.engine.store.listWatermarks()]);
    return {
      videos: videos.length,
      ingested: videos.filter((v) => v.status === 'INGESTED').length,
      watermarks: watermarks.length,
      ready: watermarks.filter((w) => w.status === 'READY').length,
    };
  }
}

async function* mapAsync<T, U>(source: AsyncIterable<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of source) yield map(item);
}
