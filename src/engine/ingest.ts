// Ingest in two steps. Registering checks the source, probes it and records the video (PENDING) at once; the ingest
// job then normalises it into closed-GOP working segments (and forensic variants), publishes them by rename and marks
// the video INGESTED. The job runs on the job queue, so it resumes after a crash like a watermark job.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError, isInterruption, isWmarkError } from '../core/errors.js';
import { transcodeToSegments } from '../cluster/ingest-task.js';
import { framesPerSegment, leadSegmentFrames, segmentFileName, segmentFrameCounts } from '../core/plan/segment-timing.js';
import { DEFAULT_FORENSIC_LAYOUT, type ForensicLayoutChoice } from '../core/forensic/variant-plan.js';
import { isHttpUrl } from '../core/http-url.js';
import { probeMedia } from '../ffmpeg/probe-media.js';
import { publishDir } from './publish-dir.js';
import type { Engine } from './engine.js';
import { checkLocalSource, downloadSource } from './fetch-source.js';
import { prepareForensic } from './forensic-prepare.js';
import { holdLease, isLeaseLive, jobId, type JobReporter } from './job-lease.js';
import { publishVideoMedia, unpublishVideoMedia } from './media-publish.js';
import { checkNotAPlaylist, type SourcePolicy } from './source-policy.js';
import type { VideoRecord } from './state-store.js';

/** High quality working form: it is decoded and encoded again for every watermark. */
// CRF 15 keeps the second generation within ~0.5 dB of a one-shot encode (CRF 18 cost 2.4 dB on grainy 720p).
const WORKING_ENCODE = { preset: 'veryfast', crf: 15 } as const;
export const FORENSIC_MIN_SECONDS = 300;

export interface IngestRequest {
  source: string;
  key?: string;
  name?: string;
  enableForensic?: boolean;
  /** With enableForensic: how the segments carry the code (default 'whole'). */
  forensicLayout?: ForensicLayoutChoice;
  /** Re-ingest under a key in use: the video it names is forgotten with its media and watermarks first. */
  replace?: boolean;
}

export interface Registration {
  video: VideoRecord;
  /** False when the key named a video that already exists (or another process registered it first). */
  created: boolean;
  /** With replace: the video that held the key before, and how many watermarks went with it. */
  replaced?: { videoId: string; sourceUrl: string; watermarks: number };
}

export function videoDir(engine: Engine, videoId: string): string {
  return path.join(engine.paths.videos, videoId);
}

export function workingSegment(engine: Engine, videoId: string, index: number): string {
  return path.join(videoDir(engine, videoId), segmentFileName(index));
}

/** A downloaded source waits here, under the video's id, until its ingest job has read it. */
function downloadedSource(engine: Engine, videoId: string): string {
  return path.join(engine.paths.tmp, `source-${videoId}`);
}

/** The source as stored: a URL as given, a local path made absolute (another process has another working folder). */
export function normaliseSource(source: string): string {
  const trimmed = source.trim();
  return isHttpUrl(trimmed) ? trimmed : path.resolve(trimmed);
}

/**
 * Records a video and returns it PENDING; the same key again returns the stored video without any work, and a key
 * whose earlier ingest failed is tried again. Nothing is recorded for a source that cannot be read or is no video.
 */
export async function registerVideo(engine: Engine, request: IngestRequest, policy?: SourcePolicy): Promise<Registration> {
  if (!request.source.trim()) throw new WmarkError('SOURCE_REQUIRED', 'a source file or URL is required');
  const source = request.source.trim();
  const remote = isHttpUrl(source);
  const sourceUrl = normaliseSource(source);
  // The default key is the absolute path, so the same file named two ways is one video and two files named alike are two.
  const key = request.key ?? sourceUrl;
  const existing = engine.store.getVideoByKey(key);
  let replaced: Registration['replaced'];
  const replacing = existing && request.replace ? existing : undefined;
  if (replacing) assertIdle(engine, replacing);
  else if (existing && !existing.status.startsWith('FAILED')) {
    if (existing.sourceUrl !== sourceUrl) {
      throw new WmarkError('KEY_EXISTS', `the key "${key}" already names another source (${existing.sourceUrl})`, {
        hint: `Choose another key, or re-ingest under "${key}" with \`wmark ingest <source> --key ${key} --replace\` (the old video, its watermarks and their links are deleted).`,
      });
    }
    if (request.enableForensic && !existing.enableForensic) {
      throw new WmarkError('KEY_EXISTS', `a video with key "${key}" was already ingested without forensic preparation`, {
        hint: 'Ingest it again with --forensic and --replace (or under another --key).',
      });
    }
    if (request.enableForensic && request.forensicLayout && existing.enableForensic && request.forensicLayout !== (existing.forensicLayout ?? DEFAULT_FORENSIC_LAYOUT)) {
      const how = existing.forensicLayout ? `with the '${existing.forensicLayout}' forensic layout` : 'by a wmark that had no choice of forensic layout';
      throw new WmarkError('KEY_EXISTS', `a video with key "${key}" was already prepared ${how}, not '${request.forensicLayout}'`, {
        hint: `Ingest it again with --forensic-layout ${request.forensicLayout} and --replace (or under another --key).`,
      });
    }
    return { video: existing, created: false };
  } else if (existing) await forgetVideo(engine, existing.id);

  // A remote source is downloaded first: the bundled static ffmpeg cannot resolve host names (static glibc has no
  // working DNS), so it is only ever given local files.
  const input = remote ? await downloadSource(engine.paths.tmp, source, policy) : await checkLocalSource(source, policy);
  try {
    await checkNotAPlaylist(policy, input, source);
    const info = await probeMedia(engine.runner, input, source);
    if (request.enableForensic && info.durationSeconds < FORENSIC_MIN_SECONDS) {
      throw new WmarkError('FORENSIC_TOO_SHORT', `forensic watermarking needs a video of at least 5 minutes; ${source} lasts ${formatDuration(info.durationSeconds)}`);
    }
    // Only now, with the new source read and probed, is the old video forgotten: a bad source leaves it as it was.
    if (replacing) replaced = await forgetReplacedVideo(engine, replacing);
    const video: VideoRecord = {
      id: engine.newId(),
      key,
      sourceUrl,
      name: request.name ?? null,
      status: 'PENDING',
      enableForensic: Boolean(request.enableForensic),
      forensicLayout: request.enableForensic ? (request.forensicLayout ?? DEFAULT_FORENSIC_LAYOUT) : null,
      // The working form has even dimensions (4:2:0 needs them); record what the segments really are.
      width: info.width - (info.width % 2),
      height: info.height - (info.height % 2),
      durationSeconds: Number.isFinite(info.durationSeconds) ? info.durationSeconds : null,
      fpsNum: info.fps.num,
      fpsDen: info.fps.den,
      hasAudio: info.hasAudio,
      segments: [],
      timeOrigin: 0,
      error: null,
      createdOn: engine.now(),
    };
    if (!engine.store.insertVideo(video)) {
      // Another process registered the same key between our check and insert: theirs wins.
      return { video: engine.store.getVideoByKey(key)!, created: false };
    }
    engine.store.ensureJob('ingest', video.id, engine.now());
    if (remote) await rename(input, downloadedSource(engine, video.id));
    return { video, created: true, ...(replaced ? { replaced } : {}) };
  } finally {
    if (remote) await rm(input, { force: true });
  }
}

/** Removes a failed video's row and files so its key can be ingested again. */
async function forgetVideo(engine: Engine, videoId: string): Promise<void> {
  engine.store.deleteVideo(videoId);
  await rm(videoDir(engine, videoId), { recursive: true, force: true });
  await rm(path.join(engine.paths.tmp, `ingest-${videoId}`), { recursive: true, force: true });
  await rm(downloadedSource(engine, videoId), { force: true });
  await unpublishVideoMedia(engine, videoId);
}

/**
 * Forgets the video a replacing ingest takes the key from: rows first (one transaction, so no reader sees half of it),
 * then its working media and watermark files. Refused while any process is still working on it or its watermarks,
 * since that process would write into folders being removed.
 */
async function forgetReplacedVideo(engine: Engine, video: VideoRecord): Promise<NonNullable<Registration['replaced']>> {
  const watermarks = assertIdle(engine, video);
  engine.store.deleteVideoAndWatermarks(video.id);
  await forgetVideo(engine, video.id);
  await rm(path.join(engine.paths.watermarks, video.id), { recursive: true, force: true });
  return { videoId: video.id, sourceUrl: video.sourceUrl, watermarks: watermarks.length };
}

function assertIdle(engine: Engine, video: VideoRecord) {
  const watermarks = engine.store.listWatermarks(video.id);
  const now = engine.now();
  const busy = [engine.store.getJob(jobId('ingest', video.id)), ...watermarks.map((w) => engine.store.getJob(jobId('watermark', w.id)))].some((j) => isLeaseLive(j, now));
  if (busy) {
    throw new WmarkError('KEY_EXISTS', `the video under key "${video.key}" is still being worked on (an ingest or watermark job is running), so it cannot be replaced now`, {
      hint: 'Wait for its jobs to finish (see `wmark video show`), then run the same command again.',
    });
  }
  return watermarks;
}

/**
 * Runs (or resumes, from the start) a video's ingest job. Resolves with the INGESTED record, or undefined when another
 * process holds the job; a failure marks the video FAILED_ENCODING and rejects. Ctrl-C leaves it PENDING and queued.
 */
export async function runIngestJob(engine: Engine, videoId: string, signal?: AbortSignal, policy?: SourcePolicy): Promise<VideoRecord | undefined> {
  const initial = engine.store.getVideo(videoId);
  if (!initial) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id "${videoId}"`);
  return holdLease(engine, 'ingest', videoId, async (report) => {
    // Already over (a job row left running by an older process): nothing to redo, and the job ends.
    const current = engine.store.getVideo(videoId);
    if (!current || current.status !== 'PENDING') return current;
    const staging = path.join(engine.paths.tmp, `ingest-${videoId}`);
    try {
      const video = await normalise(engine, initial, staging, report, signal, policy);
      // Before INGESTED: a farm's workers may be handed its segments from then on.
      await publishVideoMedia(engine, videoId);
      engine.store.updateVideo(videoId, video);
      await rm(downloadedSource(engine, videoId), { force: true });
      return engine.store.getVideo(videoId)!;
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      if (!isInterruption(error)) {
        const reason = error instanceof Error ? error.message : String(error);
        engine.store.updateVideo(videoId, { status: 'FAILED_ENCODING', error: reason });
        await rm(downloadedSource(engine, videoId), { force: true });
        if (!isWmarkError(error)) throw new WmarkError('INGEST_FAILED', `ingest of ${initial.sourceUrl} failed: ${reason}`, { cause: error });
      }
      throw error;
    }
  });
}

async function normalise(engine: Engine, video: VideoRecord, staging: string, report: JobReporter, signal?: AbortSignal, policy?: SourcePolicy): Promise<Partial<VideoRecord>> {
  const remote = isHttpUrl(video.sourceUrl);
  let input = remote ? downloadedSource(engine, video.id) : video.sourceUrl;
  // A job resumed after a restart downloads its source again; a local file is checked again (it may have gone).
  if (remote && !existsSync(input)) {
    const fresh = await downloadSource(engine.paths.tmp, video.sourceUrl, policy);
    await rename(fresh, input);
  } else if (!remote) input = await checkLocalSource(input, policy);
  // On a render farm (serve --queue), workers transcode and prepare; this process only plans and records.
  if (engine.ingestFarm) return engine.ingestFarm.normalise(video, input, report, signal);
  const fps = { num: video.fpsNum!, den: video.fpsDen! };
  const totalMs = Math.round((video.durationSeconds ?? 0) * 1000);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  report(0, totalMs, 'normalising');
  const plan = workingFormPlan(video);
  const { frames, segments, timeOrigin } = await transcodeToSegments(
    engine.runner,
    { ...plan, source: input, outDir: staging, label: video.sourceUrl },
    { durationSeconds: video.durationSeconds ?? undefined, onProgress: (f) => report(Math.round(f * totalMs), totalMs, 'normalising'), signal },
  );
  const durations = segmentDurations(segments, frames, fps, plan.lead);
  if (video.enableForensic) {
    report(0, durations.length, 'preparing forensic variants A and B');
    await prepareForensic(
      engine.runner,
      {
        videoId: video.id,
        dir: staging,
        width: video.width!,
        height: video.height!,
        fps: fps.num / fps.den,
        gop: framesPerSegment(fps),
        hasAudio: video.hasAudio,
        segmentDurations: durations,
        encode: engine.encode,
        workers: engine.workers,
        secret: engine.secret,
        ...(video.forensicLayout ? { layout: video.forensicLayout } : {}),
      },
      (done, total) => report(done, total, 'preparing forensic variants A and B'),
    );
  }
  const published = await publishDir(staging, videoDir(engine, video.id));
  if (published !== 'published') throw new WmarkError('PUBLISH_FAILED', `video folder ${video.id} already exists`);
  return { status: 'INGESTED', segments: durations, timeOrigin, durationSeconds: Number(durations.reduce((a, b) => a + b, 0).toFixed(6)) };
}

/**
 * Exact segment durations from frame counts: every segment holds its planned frames (lead segments, then one GOP)
 * except the last. The segment muxer's own list measures from the muxer's clock origin, not the first frame, so it is
 * only used for the file names.
 */
export function segmentDurations(count: number, totalFrames: number | undefined, fps: { num: number; den: number }, lead = false): number[] {
  const counts = totalFrames ? segmentFrameCounts(fps, totalFrames, lead) : [];
  if (!totalFrames || counts.length !== count) {
    const plan = lead ? `${leadSegmentFrames(fps).join(', ')}, then ${framesPerSegment(fps)}` : String(framesPerSegment(fps));
    throw new WmarkError('FRAME_COUNT_MISMATCH', `ffmpeg reported ${totalFrames ?? 'no'} frames for ${count} segments of ${plan} frames`);
  }
  const frameSeconds = fps.den / fps.num;
  return counts.map((n) => Number((n * frameSeconds).toFixed(6)));
}

/** The working form a video is transcoded to: the same plan whether this process or a render-farm worker runs it. */
export function workingFormPlan(video: VideoRecord) {
  const fps = { num: video.fpsNum!, den: video.fpsDen! };
  // Forensic videos keep one GOP per segment: their code slots need halves of 1.5 s or more, and a forensic viewer's
  // segments are links to prepared files, so there is no first render for short lead segments to speed up.
  const maxFrames = leadFramesBound(video.durationSeconds, fps);
  const lead = !video.enableForensic && maxFrames !== undefined;
  return { fps, width: video.width!, height: video.height!, hasAudio: video.hasAudio, encode: WORKING_ENCODE, lead, ...(maxFrames !== undefined ? { maxFrames } : {}) };
}

/**
 * A bound on the frames a source of this probed length can yield at the working rate, with a wide margin (containers
 * misreport durations); undefined when the length is unknown, and such a source is cut without lead segments.
 */
function leadFramesBound(durationSeconds: number | null, fps: { num: number; den: number }): number | undefined {
  if (durationSeconds === null || !Number.isFinite(durationSeconds) || durationSeconds <= 0) return undefined;
  return Math.ceil(((durationSeconds * fps.num) / fps.den) * 1.5) + 10 * framesPerSegment(fps);
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'an unknown duration';
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${m}:${s.toFixed(2).padStart(5, '0')}`;
}
