// Watermark requests and jobs: identity, expiration rules, per-segment rendering on a worker pool, playlist and mp4 publishing.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { framesPerSegment, joinMp4Args, SEGMENT_SECONDS, segmentFileName, segmentRenderArgs, textDrawing, type TextFile } from '../core/ffmpeg-plan.js';
import { FALLBACK_FONT_METRICS, parseFontMetrics, type FontMetrics } from '../core/font-metrics.js';
import { writeMediaPlaylist } from '../core/playlist.js';
import { canonicalSettings, watermarkIdentity } from '../core/watermark-identity.js';
import type { ForensicSetting, Setting, TextSetting } from '../core/setting-types.js';
import { isInterruption, isWmarkError, validationError, WmarkError } from '../core/errors.js';
import { offFrameIssues } from '../core/frame-reach.js';
import { codeword, forensicKey } from '../core/forensic/keyed-bits.js';
import { FORENSIC_DIR, readForensicLayout, variantFileFor } from './forensic-prepare.js';
import { tail } from '../ffmpeg/run-ffmpeg.js';
import writeFileAtomic from 'write-file-atomic';
import type { Engine } from './engine.js';
import { applyUserModes } from './file-modes.js';
import { forEachBounded } from './for-each-bounded.js';
import { videoDir, workingSegment } from './ingest.js';
import { holdLease, isLeaseLive, jobId, type JobReporter } from './job-lease.js';
import type { Container, VideoRecord, WatermarkRecord } from './store.js';

export const PLAYLIST_NAME = 'video.m3u8';
export const MP4_NAME = 'video.mp4';
const WORK_DIR = '.work';
/** Per-video folder of TEXT-over-variant segments shared between forensic viewers with the same visible text. */
const SHARED_TEXT_DIR = '_shared';

export interface VideoRef {
  key?: string;
  videoId?: string;
}

export interface WatermarkRequest {
  video: VideoRef;
  settings: Setting[];
  containers: Container[];
  /** Unix seconds; honoured only when this request creates the watermark (SPEC 2.5). */
  expirationSeconds?: number;
}

export interface WatermarkRequestResult {
  watermark: WatermarkRecord;
  video: VideoRecord;
  created: boolean;
  /** True when the request carried an expiration that was not applied because the watermark already existed. */
  expirationIgnored: boolean;
}

export function watermarkDir(engine: Engine, videoId: string, watermarkId: string): string {
  return path.join(engine.paths.watermarks, videoId, watermarkId);
}

export function resolveVideo(engine: Engine, ref: VideoRef): VideoRecord {
  const video = ref.videoId ? engine.store.getVideo(ref.videoId) : ref.key !== undefined ? engine.store.getVideoByKey(ref.key) : undefined;
  if (!video) {
    if (!ref.videoId && ref.key === undefined) throw new WmarkError('VIDEO_REQUIRED', 'a video is required: give its key or its id');
    const what = ref.videoId ? `id "${ref.videoId}"` : `key "${ref.key}"`;
    throw new WmarkError('VIDEO_NOT_FOUND', `no video with ${what}`, { hint: 'List videos with `wmark video list`, or ingest it first with `wmark ingest`.' });
  }
  if (video.status === 'PENDING') throw new WmarkError('VIDEO_NOT_READY', `video ${video.key} is still being ingested`, { hint: 'Try again when its status is INGESTED.' });
  if (video.status !== 'INGESTED') throw new WmarkError('VIDEO_FAILED', `video ${video.key} could not be ingested (${video.status}): ${video.error ?? 'no reason recorded'}`);
  return video;
}

/**
 * Forgets a watermark: its row and job, then its files. Refused while a process renders it (that process would write
 * into the folder being removed). Its links stop working at once.
 */
export async function deleteWatermark(engine: Engine, watermark: WatermarkRecord): Promise<void> {
  if (isLeaseLive(engine.store.getJob(jobId('watermark', watermark.id)), engine.now())) {
    throw new WmarkError('WATERMARK_BUSY', `watermark ${watermark.id} is being rendered right now, so it cannot be removed`, { hint: 'Wait until it is READY or FAILED, then remove it.' });
  }
  engine.store.deleteWatermark(watermark.id);
  await rm(watermarkDir(engine, watermark.videoId, watermark.id), { recursive: true, force: true });
}

export function isExpired(watermark: WatermarkRecord, nowMs: number): boolean {
  return watermark.expiration !== null && nowMs > watermark.expiration;
}

/** Finds or creates the watermark for (video, settings); never changes an existing watermark's expiration. */
export function requestWatermark(engine: Engine, request: WatermarkRequest): WatermarkRequestResult {
  const video = resolveVideo(engine, request.video);
  const offFrame = offFrameIssues(request.settings, { width: video.width ?? 0, height: video.height ?? 0, duration: video.durationSeconds });
  if (offFrame.length) throw validationError('VALIDATION_FAILED', offFrame, `The video is ${video.width}x${video.height}; see docs/settings.md for where text lands.`);
  const forensic = request.settings.find((s): s is ForensicSetting => s.type === 'FORENSIC');
  if (forensic && !video.enableForensic) {
    throw new WmarkError('FORENSIC_NOT_ENABLED', `video ${video.key} was not ingested with forensic preparation (enableForensic), so it cannot carry a FORENSIC watermark`, {
      hint: 'Ingest it again under a new key with --forensic (videos of 5 minutes or more).',
    });
  }
  const id = watermarkIdentity(video.id, request.settings);
  const now = engine.now();
  const { record, created } = engine.store.insertWatermarkIfAbsent({
    id,
    videoId: video.id,
    settings: request.settings,
    containers: [...new Set(request.containers)].sort(),
    expiration: request.expirationSeconds !== undefined ? Math.round(request.expirationSeconds * 1000) : null,
    status: 'PENDING',
    error: null,
    createdOn: now,
    readyOn: null,
    forensicPayload: forensic ? forensic.payload : null,
  });
  if (!created && isExpired(record, now)) {
    throw new WmarkError('WATERMARK_EXPIRED', `this watermark expired on ${new Date(record.expiration!).toISOString()}; an expiration cannot be extended`, {
      hint: 'Change any setting to create a new watermark with a new expiration (docs/settings.md#identity-and-expiration).',
    });
  }
  let watermark = record;
  const missing = request.containers.filter((c) => !record.containers.includes(c));
  if (!created && missing.length) {
    // A later request may ask for a container the first did not; that is the same watermark, so extend it.
    engine.store.updateWatermark(id, { containers: [...new Set([...record.containers, ...missing])].sort() });
    if (record.status === 'READY') engine.store.updateWatermark(id, { status: 'PLAYABLE' });
    watermark = engine.store.getWatermark(id)!;
  }
  if (watermark.status === 'FAILED') {
    // A failed render is retried by the next identical request (the cause may have been transient, e.g. a full disk).
    engine.store.updateWatermark(id, { status: 'PENDING', error: null });
    engine.store.resetJob(`watermark:${id}`, now);
    watermark = engine.store.getWatermark(id)!;
  }
  if (watermark.status !== 'READY') engine.store.ensureJob('watermark', id, now);
  return { watermark, video, created, expirationIgnored: !created && request.expirationSeconds !== undefined && Math.round(request.expirationSeconds * 1000) !== record.expiration };
}

function textSettings(w: WatermarkRecord): TextSetting[] {
  return (w.settings as Setting[]).filter((s): s is TextSetting => s.type === 'TEXT');
}

/** The filtergraph for a watermark (drawtext filters for every TEXT setting) and the text files it reads from the work folder. */
export function watermarkFilterGraph(w: WatermarkRecord, video: VideoRecord, fontFile: string, metrics: FontMetrics): { graph: string; files: TextFile[] } {
  const drawings = textSettings(w).map((setting, index) =>
    textDrawing({ setting, index, fontFile, metrics, frameHeight: video.height!, timeOrigin: video.timeOrigin }),
  );
  const filters = drawings.flatMap((d) => d.filters);
  return { graph: filters.length ? filters.join(',') : 'null', files: drawings.flatMap((d) => d.files) };
}

const metricsByFont = new Map<string, Promise<FontMetrics>>();

/** The font's line metrics for multi-line text, read once per font file; one that cannot be parsed gets DejaVu Sans' figures. */
function fontMetrics(fontFile: string): Promise<FontMetrics> {
  let metrics = metricsByFont.get(fontFile);
  if (!metrics) {
    metrics = readFile(fontFile).then(
      (bytes) => parseFontMetrics(bytes) ?? FALLBACK_FONT_METRICS,
      () => FALLBACK_FONT_METRICS,
    );
    metricsByFont.set(fontFile, metrics);
  }
  return metrics;
}

function playlistFor(video: VideoRecord, doneCount: number): string {
  const ended = doneCount === video.segments.length;
  return writeMediaPlaylist({
    segments: video.segments.slice(0, doneCount).map((duration, i) => ({ uri: segmentFileName(i), duration })),
    ended,
    // The target duration must not change while the playlist grows, so it is computed from all planned segments.
    targetDuration: Math.max(1, Math.ceil(Math.max(...video.segments.map((d) => Number(d.toFixed(6)))))),
  });
}

async function doneSegments(dir: string, count: number): Promise<boolean[]> {
  const names = new Set(existsSync(dir) ? await readdir(dir) : []);
  return Array.from({ length: count }, (_, i) => names.has(segmentFileName(i)));
}

function contiguousPrefix(done: boolean[]): number {
  const i = done.indexOf(false);
  return i < 0 ? done.length : i;
}

/**
 * Runs (or resumes) a watermark's job to completion. Resolves with the final record, or undefined when another process
 * holds the job (its progress shows in the store); a failed render marks the watermark FAILED and rejects with the
 * ffmpeg reason. Interrupted, it keeps the finished segments and stays queued.
 */
export async function runWatermarkJob(engine: Engine, watermarkId: string, signal?: AbortSignal): Promise<WatermarkRecord | undefined> {
  const initial = engine.store.getWatermark(watermarkId);
  if (!initial) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${watermarkId}`);
  if (initial.status === 'READY') return initial;
  return holdLease(engine, 'watermark', watermarkId, async (report) => {
    const current = engine.store.getWatermark(watermarkId)!;
    if (current.status === 'READY') return current;
    try {
      return await renderWatermark(engine, current, report, signal);
    } catch (error) {
      if (!isInterruption(error)) {
        const reason = isWmarkError(error) ? (error.details[0] ? tail(error.details[0], 1500) : error.message) : String(error);
        engine.store.updateWatermark(watermarkId, { status: 'FAILED', error: reason });
      }
      throw error;
    }
  });
}

async function renderWatermark(engine: Engine, w: WatermarkRecord, report: JobReporter, signal?: AbortSignal): Promise<WatermarkRecord> {
  const video = engine.store.getVideo(w.videoId)!;
  const dir = watermarkDir(engine, video.id, w.id);
  const work = path.join(dir, WORK_DIR);
  // Anything half-written by a killed run is discarded; finished segments were renamed into place and are kept.
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const texts = textSettings(w);
  const drawing = watermarkFilterGraph(w, video, engine.tools.font.path, await fontMetrics(engine.tools.font.path));
  await Promise.all(drawing.files.map((f) => writeFile(path.join(work, f.name), f.content, 'utf8')));
  const filterScript = path.join(work, 'filter.txt');
  await writeFile(filterScript, drawing.graph, 'utf8');

  const count = video.segments.length;
  const done = await doneSegments(dir, count);
  let playable = false;
  const progress = (stage: string) => report(done.filter(Boolean).length, count, stage);
  // Workers finish concurrently. Publishing is serialised and reads `done` when its turn comes, so an older, shorter
  // playlist can never be renamed over a newer one (which left READY watermarks with truncated, unended playlists).
  let publishing: Promise<void> = Promise.resolve();
  const publishProgress = (): Promise<void> =>
    (publishing = publishing.then(async () => {
      const prefix = contiguousPrefix(done);
      if (prefix > 0) {
        await writeFileAtomic(path.join(dir, PLAYLIST_NAME), playlistFor(video, prefix));
        if (!playable) {
          playable = true;
          if (w.status === 'PENDING') engine.store.updateWatermark(w.id, { status: 'PLAYABLE' });
        }
      }
      progress('rendering');
    }));
  await publishProgress();

  const gop = framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! });
  // A forensic viewer's segment k is variant A or B as the payload's codeword says; otherwise the clean working segment.
  // The layout says how many code bits (slots) each segment carries: one for videos ingested before slots, else 1-2.
  const forensicDir = path.join(videoDir(engine, video.id), FORENSIC_DIR);
  const layout = w.forensicPayload !== null ? await readForensicLayout(forensicDir, count) : undefined;
  const code = layout ? codeword(forensicKey(engine.secret), video.id, w.forensicPayload!, layout.slots) : undefined;
  const sourceOf = (index: number) => (code ? path.join(forensicDir, variantFileFor(layout!, code, index)) : workingSegment(engine, video.id, index));

  if (code && texts.length === 0) {
    // Nothing to draw: a new forensic viewer costs links to existing variant files, never an encode.
    for (const index of done.flatMap((d, i) => (d ? [] : [i]))) {
      const part = path.join(work, `${segmentFileName(index)}.part`);
      await linkOrCopy(sourceOf(index), part);
      await rename(part, path.join(dir, segmentFileName(index)));
      done[index] = true;
    }
    await publishProgress();
  }

  // TEXT over a forensic variant: rendered segments are shared by every viewer with the same TEXT settings, so each
  // (text set, variant, segment) is encoded at most once; a viewer with unique text costs one encode per segment.
  const sharedDir = code ? path.join(engine.paths.watermarks, video.id, SHARED_TEXT_DIR, createHash('sha256').update(canonicalSettings(texts)).digest('hex').slice(0, 32)) : undefined;
  if (sharedDir) await mkdir(sharedDir, { recursive: true });

  const render = async (index: number, threads: number) => {
    if (signal?.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
    const part = path.join(work, `${segmentFileName(index)}.part`);
    const shared = sharedDir && path.join(sharedDir, variantFileFor(layout!, code!, index));
    if (!shared || !existsSync(shared)) {
      await engine.runner.ffmpeg(
        segmentRenderArgs({ input: sourceOf(index), output: part, filterScript, gop, threads, encode: engine.encode, hasAudio: video.hasAudio }),
        { signal, cwd: work },
      );
      if (shared) await rename(part, shared);
    }
    if (shared) await linkOrCopy(shared, part);
    await rename(part, path.join(dir, segmentFileName(index)));
    done[index] = true;
    await publishProgress();
  };

  const todo = done.flatMap((d, i) => (d ? [] : [i]));
  // The opening segments get every core, one after the other: the playlist becomes playable as early as possible and
  // each next segment is ready before the one before has played out. Then one thread per worker.
  const opening = openingSegments(video.segments, 2 * SEGMENT_SECONDS);
  while (todo.length && todo[0]! < opening) await render(todo.shift()!, engine.workers);
  await forEachBounded(todo, engine.workers, (i) => render(i, 1));

  const current = engine.store.getWatermark(w.id)!;
  if (current.containers.includes('mp4') && !existsSync(path.join(dir, MP4_NAME))) {
    progress('joining mp4');
    const part = path.join(WORK_DIR, `${MP4_NAME}.part`);
    await engine.runner.ffmpeg(joinMp4Args(video.segments.map((_, i) => segmentFileName(i)), part, video.hasAudio), { signal, cwd: dir });
    await rename(path.join(dir, part), path.join(dir, MP4_NAME));
  }
  await rm(work, { recursive: true, force: true });
  engine.store.updateWatermark(w.id, { status: 'READY', readyOn: engine.now(), error: null });
  return engine.store.getWatermark(w.id)!;
}

/** How many segments from the start it takes to cover `seconds` of video (at least one). */
export function openingSegments(durations: number[], seconds: number): number {
  let covered = 0;
  let n = 0;
  while (n < durations.length && covered < seconds - 1e-6) covered += durations[n++]!;
  return Math.max(1, n);
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    // Filesystems without hard links (or across devices) get a copy instead.
    if (!['EXDEV', 'EPERM', 'ENOTSUP', 'EMLINK'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    await copyFile(from, to);
  }
}


export interface WatermarkFiles {
  dir: string;
  /** Present once the playlist exists. */
  m3u8?: string;
  /** Present once the mp4 is joined. */
  mp4?: string;
  /** Every output is written (a 2.0 watermark is READY once playable, while later segments are still rendering). */
  complete: boolean;
}

export function watermarkFiles(engine: Engine, w: WatermarkRecord): WatermarkFiles {
  const dir = watermarkDir(engine, w.videoId, w.id);
  const m3u8 = path.join(dir, PLAYLIST_NAME);
  const mp4 = path.join(dir, MP4_NAME);
  return { dir, ...(existsSync(m3u8) ? { m3u8 } : {}), ...(w.containers.includes('mp4') && existsSync(mp4) ? { mp4 } : {}), complete: w.status === 'READY' };
}

/** Copies a finished watermark's HLS folder and mp4 to `dest` (for CI pipelines collecting outputs). */
export async function exportWatermark(engine: Engine, w: WatermarkRecord, dest: string): Promise<string> {
  const src = watermarkDir(engine, w.videoId, w.id);
  const target = path.join(dest, w.id);
  const staging = `${target}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  // Only the watermark's own work folder is left out: matching "/.work" anywhere in the absolute path also dropped
  // everything when the data dir lived under e.g. ~/.workspace, and the export then failed with ENOENT.
  await cp(src, staging, { recursive: true, filter: (s) => path.relative(src, s).split(path.sep)[0] !== WORK_DIR });
  // The data folder is private; a copy handed to the user gets the modes their own umask gives.
  await applyUserModes(staging);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  return target;
}
