// Watermarks on this machine's engine: a parsed order -> the watermark (found or created) -> its job -> playable, the
// API's answer with freshly signed links, progress until a goal, and what only a local engine offers besides: list,
// delete, where the files are, how much is rendered, export.
import { orderSettings, type WatermarkOrder } from '../../core/api-requests.js';
import type { ApiVersion } from '../../core/api-version.js';
import { WmarkError } from '../../core/errors.js';
import type { TemplateSetting } from '../../core/setting-types.js';
import { lastOf, watch } from '../../service/watch.js';
import type {
  ServiceCallOptions,
  WatchGoal,
  WatchOptions,
  WatermarkProgress,
  WatermarkResource,
  WatermarkResult,
  Watermarks,
} from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import { topicOf } from '../jobs/job-lease.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { JobRecord, RenderMode, WatermarkRecord } from '../state/state-store.js';
import { forceFullRender } from '../watermark/band-strategy.js';
import { deleteWatermark, exportWatermark, renderedSegments, type WatermarkFiles, watermarkFiles } from '../watermark/manage.js';
import { needsJob, requestWatermark, watermarkAndJob } from '../watermark/request.js';
import { apiStatus, watermarkBody } from './api-bodies.js';
import { findTemplate } from './templates.js';
import { goalOf, mapAsync, pollMs, takeOver, workInHand } from './watermark-watch.js';

/** A forensic-only watermark costs links, not encodes: it is answered READY after at most this long. */
const FORENSIC_READY_MS = 15_000;

export interface LocalWatermarksOptions {
  queue: JobQueue;
  /** Links in answers start with this unless a call gives its own base (the server passes its own). */
  baseUrl: string;
  /** API version of answers when a call does not say. */
  api: ApiVersion;
  /** How long POST /2.0/watermark waits for a new watermark to become playable (its READY means playable now). */
  playableTimeoutMs?: number;
  /** What IMAGE settings may read (an API client's); undefined: anything (the CLI). */
  sourcePolicy?: SourcePolicy;
  /** How new watermarks are rendered (default full: a CLI run wants every output; serve renders on demand). */
  render?: RenderMode;
}

export interface LocalCallOptions extends ServiceCallOptions {
  baseUrl?: string;
}

export class LocalWatermarks implements Watermarks {
  constructor(
    private readonly engine: Engine,
    private readonly options: LocalWatermarksOptions,
  ) {}

  async request(order: WatermarkOrder, options: LocalCallOptions = {}): Promise<WatermarkResult> {
    const api = options.api ?? this.options.api;
    const template = 'template' in order.draw ? await findTemplate(this.engine, order.draw.template.id) : undefined;
    const rendered = orderSettings(order.draw, api, template?.settings as TemplateSetting[] | undefined);
    const result = await requestWatermark(this.engine, {
      ...rendered,
      video: order.video,
      containers: order.containers,
      ...(order.expirationSeconds !== undefined ? { expirationSeconds: order.expirationSeconds } : {}),
      render: this.options.render ?? 'full',
      sourcePolicy: this.options.sourcePolicy,
    });
    let record = result.watermark;
    // A forensic-only watermark needs no encode (its playlist picks existing A/B segments): it starts at once, ahead
    // of any renders, and is READY at once.
    const forensicOnly = rendered.settings.every((s) => s.type === 'FORENSIC');
    if (options.fullRender && result.created) await forceFullRender(this.engine, record);
    if (needsJob(record)) {
      // Work to do needs every dependency: refused at once while one is down (the same request later starts it).
      this.engine.dependencies.require();
      this.options.queue.enqueue({ kind: 'watermark', id: record.id }, { immediate: forensicOnly });
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

  async get(resource: WatermarkResource, options: LocalCallOptions = {}): Promise<WatermarkResource> {
    return this.body(await this.record(resource), options.api ?? this.options.api, options.baseUrl);
  }

  /** The API body of a watermark, with links on `baseUrl` (default: this service's). */
  body(w: WatermarkRecord, api: ApiVersion = this.options.api, baseUrl = this.options.baseUrl, includeHref = true): WatermarkResource {
    return watermarkBody(this.engine, w, { api, baseUrl, includeHref });
  }

  async record(ref: WatermarkResource | string): Promise<WatermarkRecord> {
    const id = typeof ref === 'string' ? ref : ref.id;
    const w = id ? await this.engine.store.getWatermark(id) : undefined;
    if (!w) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${id ?? '(no id)'}`);
    return w;
  }

  watch(resource: WatermarkResource, goal: WatchGoal, options: WatchOptions & ServiceCallOptions = {}): AsyncIterable<WatermarkProgress> {
    const reached = goalOf(goal);
    const states = this.watchRecord(resource.id ?? '', goal, { ...options, progress: true });
    return mapAsync(states, (s) => ({ status: apiStatus(s.w), ...workInHand(s.job), final: reached(s.w) }));
  }

  /** A watermark and its job until the goal; woken by the job's progress too when `progress`. */
  private watchRecord(
    id: string,
    goal: WatchGoal,
    options: WatchOptions & ServiceCallOptions & { progress: boolean; initial?: { w: WatermarkRecord; job: JobRecord | undefined } },
  ): AsyncIterable<{ w: WatermarkRecord; job: JobRecord | undefined }> {
    const reached = goalOf(goal);
    return watch({
      read: () => watermarkAndJob(this.engine, id),
      initial: options.initial,
      intervalMs: options.intervalMs ?? pollMs(this.engine),
      subscribe: (wake) => this.engine.changes.subscribe(topicOf('watermark', id), wake, { progress: options.progress }),
      key: (s) => `${s.w.status}|${s.job?.done}|${s.job?.total}|${s.job?.stage}`,
      until: (s) => reached(s.w),
      onIdle: (s) => takeOver(this.engine, this.options.queue, 'watermark', id, s.job),
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
    return this.record(id);
  }

  /** Watermarks on this engine, oldest first; of one video when given. */
  list(videoId?: string): Promise<WatermarkRecord[]> {
    return this.engine.store.listWatermarks(videoId);
  }

  /** Forgets a watermark and its files (the service API has no delete). */
  async delete(ref: WatermarkResource | string): Promise<void> {
    await deleteWatermark(this.engine, await this.record(ref));
  }

  /** Where a watermark's outputs are (the CLI shows them beside the links). */
  async files(ref: WatermarkResource | string): Promise<WatermarkFiles> {
    return watermarkFiles(this.engine, await this.record(ref));
  }

  renderedSegments(ref: WatermarkResource | string): Promise<{ done: number; total: number }> {
    return this.record(ref).then((w) => renderedSegments(this.engine, w));
  }

  /** Copies a finished watermark's HLS folder and mp4 to `dest/<id>/` (CI pipelines collecting outputs). */
  async export(ref: WatermarkResource | string, dest: string): Promise<string> {
    return exportWatermark(this.engine, await this.record(ref), dest);
  }
}
