// A watermark request against the engine's state: which video it names, whether it can be served, and the watermark
// it is (found or created). A watermark's identity is its video and its normalised settings, so the same request
// always finds the same watermark; its expiration is set once, when it is created, and its images are fetched then.
import { validationError, WmarkError } from '../../core/errors.js';
import { offFrameIssues } from '../../core/plan/frame-reach.js';
import { type ForensicSetting, isVisible, type Setting } from '../../core/setting-types.js';
import { watermarkIdentity } from '../../core/watermark-identity.js';
import type { Engine } from '../engine.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import { jobId } from '../jobs/job-lease.js';
import type { Container, JobRecord, RenderMode, VideoRecord, VideoRef, WatermarkRecord } from '../state/state-store.js';
import { localImageHashes, normaliseImageContent, resolveImages } from './image-source.js';

export type { VideoRef } from '../state/state-store.js';

export interface RenderedWatermarkOrder {
  video: VideoRef;
  settings: Setting[];
  containers: Container[];
  /** Unix seconds; honoured only when this request creates the watermark. */
  expirationSeconds?: number;
  /** How the process asking renders it (default full); an mp4 container always needs the full render. */
  render?: RenderMode;
  /** What an API client's IMAGE settings may be read from (its video sources' policy); undefined: anything (the CLI). */
  sourcePolicy?: SourcePolicy;
  /** Where the settings came from, for messages: `settings` (the default), or `template.settings`. */
  settingsPath?: string;
}

export interface WatermarkRequestResult {
  watermark: WatermarkRecord;
  video: VideoRecord;
  created: boolean;
  /** True when the request carried an expiration that was not applied because the watermark already existed. */
  expirationIgnored: boolean;
}

/** The video found for a reference when it is ingested and ready to watermark; otherwise the error that says why not. */
function readyVideo(ref: VideoRef, video: VideoRecord | undefined): VideoRecord {
  if (!video) {
    if (!ref.videoId && ref.key === undefined) throw new WmarkError('VIDEO_REQUIRED', 'a video is required: give its key or its id');
    const what = ref.videoId ? `id "${ref.videoId}"` : `key "${ref.key}"`;
    throw new WmarkError('VIDEO_NOT_FOUND', `no video with ${what}`, { hint: 'List videos with `wmark video list`, or ingest it first with `wmark ingest`.' });
  }
  if (video.status === 'PENDING')
    throw new WmarkError('VIDEO_NOT_READY', `video ${video.key} is still being ingested`, { hint: 'Try again when its status is INGESTED.' });
  if (video.status !== 'INGESTED')
    throw new WmarkError('VIDEO_FAILED', `video ${video.key} could not be ingested (${video.status}): ${video.error ?? 'no reason recorded'}`);
  return video;
}

/** A watermark and its job in one read (what a watcher reads each time it wakes); WATERMARK_NOT_FOUND when it is gone. */
export async function watermarkAndJob(engine: Engine, id: string): Promise<{ w: WatermarkRecord; job: JobRecord | undefined }> {
  const { watermark, job } = await engine.store.getWatermarkAndJob(id, jobId('watermark', id));
  if (!watermark) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${id}`);
  return { w: watermark, job };
}

export function isExpired(watermark: WatermarkRecord, nowMs: number): boolean {
  return watermark.expiration !== null && nowMs > watermark.expiration;
}

/**
 * Whether the job renders every segment: a full watermark, and one with an mp4, which is joined from them all. An
 * on-demand watermark with an mp4 still plays on demand (its playlist lists every segment from the start, and a
 * player's segment goes first), while the job renders the rest in the background for the mp4.
 */
export function rendersEverySegment(w: Pick<WatermarkRecord, 'render' | 'containers'>): boolean {
  return w.render === 'full' || w.containers.includes('mp4');
}

/** True while a job still has work on the watermark: all of it (full, or an mp4 to join), or its opening (on demand). */
export function needsJob(w: WatermarkRecord): boolean {
  return w.status === 'PENDING' || (w.status === 'PLAYABLE' && rendersEverySegment(w));
}

/** Finds or creates the watermark for (video, settings); never changes an existing watermark's expiration. */
export async function requestWatermark(engine: Engine, request: RenderedWatermarkOrder): Promise<WatermarkRequestResult> {
  const path = request.settingsPath ?? 'settings';
  const requested = normaliseImageContent(request.settings);
  const hashes = await localImageHashes(requested, request.sourcePolicy);
  const identify = (videoId: string) => watermarkIdentity(videoId, requested, hashes);
  // The video and the watermark these settings make of it, in one read: a repeated request reads nothing else.
  const found = await engine.store.findWatermarkRequest(request.video, identify, engine.now());
  const video = readyVideo(request.video, found.video);
  const id = identify(video.id);
  // A watermark asked for again keeps the images it was made with: nothing is fetched again.
  const known = found.watermark;
  const settings = known ? (known.settings as Setting[]) : await resolveImages(engine, requested, video, { policy: request.sourcePolicy, path });
  const offFrame = offFrameIssues(settings, { width: video.width ?? 0, height: video.height ?? 0, duration: video.durationSeconds }, path);
  if (offFrame.length)
    throw validationError('VALIDATION_FAILED', offFrame, `The video is ${video.width}x${video.height}; see docs/settings.md for where text and images land.`);
  const forensic = settings.find((s): s is ForensicSetting => s.type === 'FORENSIC');
  if (forensic && !video.enableForensic) {
    throw new WmarkError(
      'FORENSIC_NOT_ENABLED',
      `video ${video.key} was not ingested with forensic preparation (enableForensic), so it cannot carry a FORENSIC watermark`,
      {
        hint: 'Ingest it again under a new key with --forensic (videos of 5 minutes or more).',
      },
    );
  }
  const now = engine.now();
  const expiration = request.expirationSeconds !== undefined ? Math.round(request.expirationSeconds * 1000) : null;
  const { record, created } = known
    ? { record: known, created: false }
    : await engine.store.insertWatermarkIfAbsent(
        {
          id,
          videoId: video.id,
          settings,
          containers: [...new Set(request.containers)].sort(),
          expiration,
          status: 'PENDING',
          error: null,
          createdOn: now,
          readyOn: null,
          forensicPayload: forensic ? forensic.payload : null,
          // Links to prepared variants (a forensic-only viewer) cost nothing, so they are all made at once.
          render: !settings.some(isVisible) ? 'full' : (request.render ?? 'full'),
        },
        now,
      );
  if (!created && isExpired(record, now)) {
    throw new WmarkError('WATERMARK_EXPIRED', `this watermark expired on ${new Date(record.expiration!).toISOString()}; an expiration cannot be extended`, {
      hint: 'Change any setting to create a new watermark with a new expiration (docs/settings.md#identity-and-expiration).',
    });
  }
  let watermark = record;
  const reread = async () => (watermark = (await engine.store.getWatermark(id))!);
  const missing = request.containers.filter((c) => !record.containers.includes(c));
  if (!created && missing.length) {
    // A later request may ask for a container the first did not; that is the same watermark, so extend it.
    await engine.store.updateWatermark(id, { containers: [...new Set([...record.containers, ...missing])].sort() });
    if (record.status === 'READY') await engine.store.updateWatermark(id, { status: 'PLAYABLE' });
    await reread();
  }
  if (!created && watermark.render === 'on-demand' && request.render !== 'on-demand') {
    // Somebody wants every segment (a CLI run, an mp4): the rest is rendered in the background from now on.
    await engine.store.updateWatermark(id, { render: 'full' });
    await reread();
  }
  if (watermark.status === 'FAILED') {
    // A failed render is retried by the next identical request (the cause may have been transient, e.g. a full disk).
    await engine.store.updateWatermark(id, { status: 'PENDING', error: null });
    await engine.store.resetJob(jobId('watermark', id), now);
    await reread();
  }
  // A new watermark's job row was made with it.
  if (!created && needsJob(watermark)) {
    // A finished job row is queued again: more work was asked for (a container, the rest of an on-demand watermark),
    // and a restarted server or a detached worker finds only queued jobs.
    const job = await engine.store.ensureJob('watermark', id, now);
    if (job.status === 'done' || job.status === 'failed') await engine.store.resetJob(job.id, now);
  }
  return { watermark, video, created, expirationIgnored: !created && expiration !== null && expiration !== record.expiration };
}
