// Videos on this machine's engine: register a source (or find the one under its key), replace one (`ingest --replace`),
// read and list them in the API's shape, and follow an ingest until it is over.
import type { VideoOrder } from '../../core/api-requests.js';
import { WmarkError } from '../../core/errors.js';
import { watch } from '../../service/watch.js';
import type { VideoProgress, VideoResource, Videos, WatchOptions } from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import { type Registration, recordVideo } from '../ingest/register.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import { jobId, topicOf } from '../jobs/job-lease.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { VideoRecord } from '../state/state-store.js';
import { videoBody } from './api-bodies.js';
import { mapAsync, pollMs, takeOver, workInHand } from './watermark-watch.js';

export class LocalVideos implements Videos {
  constructor(
    private readonly engine: Engine,
    private readonly queue: JobQueue,
    /** What a source may be read from (an API client's); undefined: anything (the CLI). */
    private readonly sourcePolicy: SourcePolicy | undefined,
  ) {}

  async create(order: VideoOrder): Promise<{ video: VideoResource; created: boolean }> {
    const { video, created } = await this.register(order, false);
    return { video, created };
  }

  /** Ingests under the key even when it names another video, which is forgotten (`ingest --replace`). */
  replace(order: VideoOrder): Promise<{ video: VideoResource; created: boolean; replaced?: Registration['replaced'] }> {
    return this.register(order, true);
  }

  private async register(order: VideoOrder, replace: boolean): Promise<{ video: VideoResource; created: boolean; replaced?: Registration['replaced'] }> {
    // An ingest needs every dependency (the source goes into the store, the transcode onto the queue): refused at
    // once while one is down, before anything is recorded.
    this.engine.dependencies.require();
    const { video, created, replaced } = await recordVideo(
      this.engine,
      { source: order.sourceUrl, key: order.key, name: order.name, enableForensic: order.enableForensic, forensicLayout: order.forensicLayout, replace },
      this.sourcePolicy,
    );
    // A video still PENDING (new, or left by a stopped process) gets its ingest job; a running one is left alone.
    if (video.status === 'PENDING') this.queue.enqueue({ kind: 'ingest', id: video.id });
    return { video: videoBody(video), created, ...(replaced ? { replaced } : {}) };
  }

  async get(id: string): Promise<VideoResource> {
    return videoBody(await this.videoRecord(id));
  }

  /** A video by id or key (the CLI accepts either). */
  async find(ref: string): Promise<VideoRecord | undefined> {
    return (await this.engine.store.getVideo(ref)) ?? (await this.engine.store.getVideoByKey(ref));
  }

  private async videoRecord(id: string): Promise<VideoRecord> {
    const video = await this.engine.store.getVideo(id);
    if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id "${id}"`);
    return video;
  }

  async list(query: { key?: string; limit?: number; page?: number } = {}): Promise<VideoResource[]> {
    const limit = query.limit ?? -1;
    const offset = query.limit !== undefined ? ((query.page ?? 1) - 1) * query.limit : 0;
    return (await this.engine.store.listVideos({ key: query.key, limit, offset })).map(videoBody);
  }

  watch(id: string, options: WatchOptions = {}): AsyncIterable<VideoProgress> {
    const states = watch({
      read: async () => ({ video: await this.videoRecord(id), job: await this.engine.store.getJob(jobId('ingest', id)) }),
      intervalMs: options.intervalMs ?? pollMs(this.engine),
      subscribe: (wake) => this.engine.changes.subscribe(topicOf('ingest', id), wake),
      key: (s) => `${s.video.status}|${s.job?.done}|${s.job?.stage}`,
      until: (s) => s.video.status !== 'PENDING',
      onIdle: (s) => takeOver(this.engine, this.queue, 'ingest', id, s.job),
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
}
