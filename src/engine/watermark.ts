// Watermark requests and jobs: identity, expiration rules, per-segment rendering on a worker pool, playlist and mp4 publishing.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, link, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { joinMp4Args, segmentRenderArgs, sharedFilterGraph, sharedSegmentRenderArgs } from '../core/plan/render-args.js';
import { framesPerSegment, SEGMENT_SECONDS, segmentFileName } from '../core/plan/segment-timing.js';
import { textDrawing, type TextFile } from '../core/plan/text-drawing.js';
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
import { fetchStoredFolder, isStored, joinMp4InStore, mediaKey, publishFile, publishVideoMedia, storedSegments, unpublishFolder } from './media-publish.js';
import { videoDir, workingSegment } from './ingest.js';
import { holdLease, isLeaseLive, jobId, LEASE_STALE_MS, topicOf, type JobReporter } from './job-lease.js';
import type { RenderUrgency, SharedRender } from './render-scheduler.js';
import type { Container, RenderMode, VideoRecord, WatermarkRecord } from './state-store.js';
import type { MediaStore } from '../media/media-store.js';

export const PLAYLIST_NAME = 'video.m3u8';
export const MP4_NAME = 'video.mp4';
const WORK_DIR = '.work';
/** The drawing (filter script and text files) stays while the watermark lives: on-demand renders need it later. */
const DRAW_DIR = '.draw';
const FILTER_NAME = 'filter.txt';
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
  /** How the process asking renders it (default full); an mp4 container always needs the full render. */
  render?: RenderMode;
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
  // The same settings later make the same id again, and its renderer must write its drawing files anew.
  renderers.get(engine)?.delete(watermark.id);
  const dir = watermarkDir(engine, watermark.videoId, watermark.id);
  await engine.farm?.discard(video(engine, watermark).segments.map((_, i) => mediaKey(engine.paths.media, path.join(dir, segmentFileName(i))))).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
  await unpublishFolder(engine, dir);
}

/** The watermark's video record, or one without segments when the video is gone. */
function video(engine: Engine, w: WatermarkRecord): Pick<VideoRecord, 'segments'> {
  return engine.store.getVideo(w.videoId) ?? { segments: [] };
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
    // Links to prepared variants (a forensic-only viewer) cost nothing, so they are all made at once.
    render: request.containers.includes('mp4') || !request.settings.some((s) => s.type === 'TEXT') ? 'full' : (request.render ?? 'full'),
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
  if (!created && watermark.render === 'on-demand' && (request.render !== 'on-demand' || watermark.containers.includes('mp4'))) {
    // Somebody wants every segment (a CLI run, an mp4): the rest is rendered in the background from now on.
    engine.store.updateWatermark(id, { render: 'full' });
    watermark = engine.store.getWatermark(id)!;
  }
  if (watermark.status === 'FAILED') {
    // A failed render is retried by the next identical request (the cause may have been transient, e.g. a full disk).
    engine.store.updateWatermark(id, { status: 'PENDING', error: null });
    engine.store.resetJob(`watermark:${id}`, now);
    watermark = engine.store.getWatermark(id)!;
  }
  if (needsJob(watermark)) engine.store.ensureJob('watermark', id, now);
  return { watermark, video, created, expirationIgnored: !created && request.expirationSeconds !== undefined && Math.round(request.expirationSeconds * 1000) !== record.expiration };
}

/** True while a job still has work on the watermark: all of it (full), or its opening (on demand). */
export function needsJob(w: WatermarkRecord): boolean {
  return w.status === 'PENDING' || (w.status === 'PLAYABLE' && w.render === 'full');
}

function textSettings(w: WatermarkRecord): TextSetting[] {
  return (w.settings as Setting[]).filter((s): s is TextSetting => s.type === 'TEXT');
}

/** The filtergraph for a watermark (drawtext filters for every TEXT setting) and the text files it reads from the work folder. */
export function watermarkFilterGraph(w: WatermarkRecord, video: VideoRecord, fontFile: string, metrics: FontMetrics, textDir?: string): { graph: string; files: TextFile[] } {
  const drawings = textSettings(w).map((setting, index) =>
    textDrawing({ setting, index, fontFile, metrics, frameHeight: video.height!, timeOrigin: video.timeOrigin, ...(textDir ? { textDir } : {}) }),
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

async function doneSegments(engine: Engine, dir: string, count: number): Promise<boolean[]> {
  if (engine.media) return storedSegments(engine, engine.media, dir, count);
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

/** What it takes to render any segment of one watermark: its drawing files, its sources and its folder. */
interface WatermarkRenderer {
  video: VideoRecord;
  dir: string;
  work: string;
  /** Its filter chain with absolute text file paths, for a render shared with other viewers. */
  chain: string;
  /** The working segment it reads, when other viewers of the video may share the decode (no forensic variant). */
  sharedSource?: (index: number) => string;
  /** A forensic viewer with no text: every segment is a link to a prepared variant file, never an encode. */
  linksOnly: boolean;
  /** Puts segment `index` in place (rendered, or linked) unless it is there already. */
  segment(index: number, threads: number, signal?: AbortSignal, urgency?: RenderUrgency): Promise<void>;
}

async function watermarkRenderer(engine: Engine, w: WatermarkRecord): Promise<WatermarkRenderer> {
  const video = engine.store.getVideo(w.videoId)!;
  // With a shared store, workers read the video's working segments (or variants) there.
  await publishVideoMedia(engine, video.id);
  const dir = watermarkDir(engine, video.id, w.id);
  const work = path.join(dir, WORK_DIR);
  const draw = path.join(dir, DRAW_DIR);
  await mkdir(work, { recursive: true });
  await mkdir(draw, { recursive: true });
  const texts = textSettings(w);
  const metrics = await fontMetrics(engine.tools.font.path);
  const drawing = watermarkFilterGraph(w, video, engine.tools.font.path, metrics);
  // The same content every time: written atomically, so a render starting meanwhile never reads half a file.
  // No fsync: they are written again whenever they are missing.
  await Promise.all([...drawing.files, { name: FILTER_NAME, content: drawing.graph }].map((f) => writeFileAtomic(path.join(draw, f.name), f.content, { encoding: 'utf8', fsync: false })));

  const count = video.segments.length;
  const gop = framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! });
  // A forensic viewer's segment k is variant A or B as the payload's codeword says; otherwise the clean working segment.
  // The layout says how many code bits (slots) each segment carries: one for videos ingested before slots, else 1-2.
  const forensicDir = path.join(videoDir(engine, video.id), FORENSIC_DIR);
  const layout = w.forensicPayload !== null ? await readForensicLayout(forensicDir, count) : undefined;
  const code = layout ? codeword(forensicKey(engine.secret), video.id, w.forensicPayload!, layout.slots) : undefined;
  const sourceOf = (index: number) => (code ? path.join(forensicDir, variantFileFor(layout!, code, index)) : workingSegment(engine, video.id, index));
  // TEXT over a forensic variant: rendered segments are shared by every viewer with the same TEXT settings, so each
  // (text set, variant, segment) is encoded at most once; a viewer with unique text costs one encode per segment.
  const sharedDir = code && texts.length ? path.join(engine.paths.watermarks, video.id, SHARED_TEXT_DIR, createHash('sha256').update(canonicalSettings(texts)).digest('hex').slice(0, 32)) : undefined;
  if (sharedDir) await mkdir(sharedDir, { recursive: true });
  const linksOnly = Boolean(code) && texts.length === 0;
  // On a render farm, the drawing travels in the task and names the font as the worker links it.
  const farmDrawing = engine.farm && watermarkFilterGraph(w, video, engine.farm.fontName, metrics);

  return {
    video,
    dir,
    work,
    chain: watermarkFilterGraph(w, video, engine.tools.font.path, metrics, draw).graph,
    ...(code ? {} : { sharedSource: (index: number) => workingSegment(engine, video.id, index) }),
    linksOnly,
    async segment(index, threads, signal, urgency) {
      const target = path.join(dir, segmentFileName(index));
      if (engine.media) return storedSegment(engine, engine.media, { target, source: sourceOf(index), shared: sharedDir && path.join(sharedDir, variantFileFor(layout!, code!, index)), linksOnly, drawing: farmDrawing, gop, hasAudio: video.hasAudio, watermarkId: w.id }, signal, urgency);
      if (existsSync(target)) return;
      if (signal?.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
      // A name of its own: an on-demand render and a job may work on the same segment at once.
      const part = path.join(work, `${randomUUID().slice(0, 8)}.${segmentFileName(index)}.part`);
      try {
        const shared = sharedDir && path.join(sharedDir, variantFileFor(layout!, code!, index));
        if (!linksOnly && !(shared && existsSync(shared)) && farmDrawing) {
          await engine.farm!.render({ input: sourceOf(index), output: shared ?? target, drawing: farmDrawing, gop, hasAudio: video.hasAudio }, signal, urgency);
          if (!shared) return dropIfDeleted(engine, w.id, dir);
        } else if (!linksOnly && !(shared && existsSync(shared))) {
          await mkdir(work, { recursive: true });
          await engine.runner.ffmpeg(
            segmentRenderArgs({ input: sourceOf(index), output: part, filterScript: path.join(draw, FILTER_NAME), gop, threads, encode: engine.encode, hasAudio: video.hasAudio }),
            { signal, cwd: draw },
          );
          if (shared) await rename(part, shared);
        }
        const prepared = linksOnly ? sourceOf(index) : shared;
        if (prepared) await linkOrCopy(prepared, part);
        await rename(part, target);
      } finally {
        await rm(part, { force: true });
      }
    },
  };
}

interface StoredSegmentPlan {
  /** The segment's file under the media folder (its key names it in the store). */
  target: string;
  /** The working segment or forensic variant it is drawn on (or, links only, is). */
  source: string;
  /** TEXT over a forensic variant: the render shared by every viewer with the same text. */
  shared?: string;
  linksOnly: boolean;
  drawing: { graph: string; files: TextFile[] } | undefined;
  gop: number;
  hasAudio: boolean;
  watermarkId: string;
}

/**
 * A segment when media lives in a shared store: rendered by a worker straight into the store, or, for a forensic
 * viewer, copied inside the store from the prepared variant (or the shared text render) to the watermark's own key,
 * so its URL says nothing of which variant it is. Nothing passes through this process.
 */
async function storedSegment(engine: Engine, store: MediaStore, plan: StoredSegmentPlan, signal?: AbortSignal, urgency?: RenderUrgency): Promise<void> {
  if (await isStored(engine, store, plan.target)) return;
  if (signal?.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
  if (!plan.linksOnly && !(plan.shared && (await isStored(engine, store, plan.shared)))) {
    if (!engine.farm || !plan.drawing) throw new WmarkError('WATERMARK_FAILED', 'media in a shared store is rendered by a render farm (serve --queue), and none is attached');
    await engine.farm.render({ input: plan.source, output: plan.shared ?? plan.target, drawing: plan.drawing, gop: plan.gop, hasAudio: plan.hasAudio }, signal, urgency);
  }
  const from = plan.linksOnly ? plan.source : plan.shared;
  if (from) await store.copy(mediaKey(engine.paths.media, from), mediaKey(engine.paths.media, plan.target));
  await dropIfDeleted(engine, plan.watermarkId, path.dirname(plan.target));
}

/**
 * A watermark deleted while a worker rendered for it: what the worker wrote after the delete is removed again, and
 * whoever waited hears CANCELLED (deleting drops the tasks still queued, but not one a worker already holds).
 */
async function dropIfDeleted(engine: Engine, watermarkId: string, dir: string): Promise<void> {
  if (engine.store.getWatermark(watermarkId)) return;
  await rm(dir, { recursive: true, force: true });
  await unpublishFolder(engine, dir);
  throw new WmarkError('CANCELLED', `watermark ${watermarkId} was deleted while it rendered`);
}

/** Whether a watermark's output (segment, mp4) is there: in the shared store when there is one, else on disk. */
function isThere(engine: Engine, file: string): Promise<boolean> | boolean {
  return engine.media ? isStored(engine, engine.media, file) : existsSync(file);
}

/** The scheduler's name for a segment render: a job and a player's request for the same segment share one render. */
const renderKey = (w: WatermarkRecord, index: number) => `${w.id}/${index}`;

function scheduled(engine: Engine, w: WatermarkRecord, r: WatermarkRenderer, index: number, urgency: RenderUrgency, signal?: AbortSignal): Promise<void> {
  // A farm's workers render one segment per task: no shared decode.
  const share: SegmentShare | undefined = engine.farm ? undefined : r.sharedSource && { key: r.sharedSource(index), renderer: r, index, runMany: (members, threads, s) => renderShared(engine, members as SegmentShare[], threads, s) };
  return engine.renders.render(renderKey(w, index), urgency, w.id, (threads, s, u) => r.segment(index, threads, s, u), signal, share);
}

interface SegmentShare extends SharedRender {
  renderer: WatermarkRenderer;
  index: number;
}

/** Several viewers' renders of one working segment in one ffmpeg: one decode, split, a drawing and an encode each. */
async function renderShared(engine: Engine, members: SegmentShare[], threads: number, signal: AbortSignal): Promise<void> {
  const { renderer: first, index } = members[0]!;
  const { video } = first;
  const id = randomUUID().slice(0, 8);
  const script = path.join(first.work, `${id}.shared-filter.txt`);
  const parts = members.map((m) => path.join(m.renderer.work, `${id}.${segmentFileName(m.index)}.part`));
  try {
    await Promise.all(members.map((m) => mkdir(m.renderer.work, { recursive: true })));
    await writeFileAtomic(script, sharedFilterGraph(members.map((m) => m.renderer.chain)), 'utf8');
    await engine.runner.ffmpeg(
      sharedSegmentRenderArgs({
        input: first.sharedSource!(index),
        outputs: parts.map((output, j) => ({ output, chain: members[j]!.renderer.chain })),
        filterScript: script,
        gop: framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! }),
        threads,
        encode: engine.encode,
        hasAudio: video.hasAudio,
      }),
      { signal, cwd: first.work },
    );
    await Promise.all(members.map((m, j) => rename(parts[j]!, path.join(m.renderer.dir, segmentFileName(m.index)))));
  } finally {
    await Promise.all([script, ...parts].map((f) => rm(f, { force: true })));
  }
}

async function renderWatermark(engine: Engine, w: WatermarkRecord, report: JobReporter, signal?: AbortSignal): Promise<WatermarkRecord> {
  const r = await watermarkRenderer(engine, w);
  const { video, dir } = r;
  await removeStaleParts(path.join(dir, WORK_DIR), engine.now() - LEASE_STALE_MS);
  const count = video.segments.length;
  const done = await doneSegments(engine, dir, count);
  // An on-demand watermark lists every segment from the start (players ask for the ones they need), and so does one
  // turned full later: its playlist must not shrink.
  const listsAll = w.render === 'on-demand' || (await playlistListsAll(dir, count));
  let listedAll = false;
  let playable = false;
  const progress = (stage: string) => report(done.filter(Boolean).length, count, stage);
  // Workers finish concurrently. Publishing is serialised and reads `done` when its turn comes, so an older, shorter
  // playlist can never be renamed over a newer one (which left READY watermarks with truncated, unended playlists).
  let publishing: Promise<void> = Promise.resolve();
  const publishProgress = (): Promise<void> =>
    (publishing = publishing.then(async () => {
      const prefix = contiguousPrefix(done);
      if (prefix > 0) {
        if (!listedAll) {
          await writeFileAtomic(path.join(dir, PLAYLIST_NAME), playlistFor(video, listsAll ? count : prefix));
          // serve answers from its own copy; the store's is for whatever else reads the shared media.
          await publishFile(engine, path.join(dir, PLAYLIST_NAME));
        }
        listedAll = listsAll;
        if (!playable) {
          playable = true;
          if (w.status === 'PENDING') engine.store.updateWatermark(w.id, { status: 'PLAYABLE' });
          // Whoever waits for it to play is woken now, not by a progress report (those are thinned out).
          engine.changes.notify(topicOf('watermark', w.id));
        }
      }
      progress('rendering');
    }));
  await publishProgress();

  const put = async (index: number, urgency: RenderUrgency, s?: AbortSignal) => {
    await (r.linksOnly ? r.segment(index, 1, s) : scheduled(engine, w, r, index, urgency, s));
    done[index] = true;
    await publishProgress();
  };
  const todo = done.flatMap((d, i) => (d ? [] : [i]));
  // The opening segments are rendered one after the other with every core of this machine: the playlist becomes
  // playable as early as possible. On demand, the opening is the lead (one GOP of video), and players ask for the rest.
  // In full, it is the first segment only: the rest follow in order, one thread each, which keeps every core busy
  // (two GOPs one after the other at two threads cost a 60 s 720p job 1.4 s of wall) and still has each next
  // segment ready before the one before has played out.
  // On a render farm each segment is a task for a one-thread worker, so the opening goes out at once (the queue hands
  // its segments out in order, to as many workers as are free) and the rest queues behind it at a lower priority.
  const opening = w.render === 'on-demand' ? openingSegments(video.segments, SEGMENT_SECONDS) : 1;
  const first = todo.filter((i) => i < opening);
  const rest = w.render === 'full' ? todo.filter((i) => i >= opening) : [];
  if (!engine.farm) for (const i of first) await put(i, 'now', signal);
  const pending = [...(engine.farm ? first.map((i) => [i, 'now'] as const) : []), ...rest.map((i) => [i, 'background'] as const)];
  if (pending.length) {
    // One failed segment stops the rest of this job's queue, and the job ends once every render it started has
    // stopped: no ffmpeg of a FAILED job is still running (or writing) when its failure is reported.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let failure: { error: unknown } | undefined;
    try {
      await Promise.all(
        pending.map(([i, urgency]) =>
          put(i, urgency, stop.signal).catch((error: unknown) => {
            failure ??= { error };
            stop.abort();
          }),
        ),
      );
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (failure) throw failure.error;
  }
  await publishing;

  const current = engine.store.getWatermark(w.id)!;
  if (current.containers.includes('mp4') && !(await isThere(engine, path.join(dir, MP4_NAME)))) {
    progress('joining mp4');
    if (engine.media) {
      await joinMp4InStore(engine, engine.media, { dir, segments: count, hasAudio: video.hasAudio, mp4: path.join(dir, MP4_NAME) }, signal);
      return markCompleteIfDone(engine, w.id, dir, count);
    }
    const part = path.join(WORK_DIR, `${MP4_NAME}.part`);
    await engine.runner.ffmpeg(joinMp4Args(video.segments.map((_, i) => segmentFileName(i)), part, video.hasAudio), { signal, cwd: dir });
    await rename(path.join(dir, part), path.join(dir, MP4_NAME));
  }
  return markCompleteIfDone(engine, w.id, dir, count);
}

/** READY (every output written) once every segment is there; an on-demand watermark gets there as players ask. */
async function markCompleteIfDone(engine: Engine, id: string, dir: string, count: number): Promise<WatermarkRecord> {
  const w = engine.store.getWatermark(id)!;
  const complete = (await doneSegments(engine, dir, count)).every(Boolean) && (!w.containers.includes('mp4') || (await isThere(engine, path.join(dir, MP4_NAME))));
  if (complete && w.status !== 'READY') {
    engine.store.updateWatermark(id, { status: 'READY', readyOn: engine.now(), error: null });
    // Every segment is there, so no render of this watermark is under way: parts left by a killed process go.
    await rm(path.join(dir, WORK_DIR), { recursive: true, force: true });
  }
  return engine.store.getWatermark(id)!;
}

/** How many segments past the one a player asks for are rendered ahead, at low urgency. */
export const RENDER_AHEAD_SEGMENTS = 2;
const renderers = new WeakMap<Engine, Map<string, Promise<WatermarkRenderer>>>();
const RENDERERS_KEPT = 64;

/** One renderer per watermark for a while: a player asks for segment after segment. */
function cachedRenderer(engine: Engine, w: WatermarkRecord): Promise<WatermarkRenderer> {
  let cache = renderers.get(engine);
  if (!cache) renderers.set(engine, (cache = new Map()));
  let r = cache.get(w.id);
  if (!r) {
    r = watermarkRenderer(engine, w);
    r.catch(() => cache.delete(w.id));
    cache.set(w.id, r);
    if (cache.size > RENDERERS_KEPT) cache.delete(cache.keys().next().value!);
  }
  return r;
}

/**
 * A player asks for segment `index` of a watermark that is not complete: renders it now unless it is there (sharing a
 * render already under way), and queues the next few of an on-demand watermark as render-ahead. Resolves when the
 * segment's file is in place; false when the watermark has no such segment.
 */
export async function ensureSegment(engine: Engine, w: WatermarkRecord, index: number): Promise<boolean> {
  if (w.status === 'FAILED') return false;
  const r = await cachedRenderer(engine, w);
  const count = r.video.segments.length;
  if (index >= count) return false;
  const file = path.join(r.dir, segmentFileName(index));
  // Asked for first, so that the render-ahead queued next never takes the threads it needs.
  const asked = (await isThere(engine, file)) ? undefined : scheduled(engine, w, r, index, 'now');
  if (w.render === 'on-demand') {
    for (let k = index + 1; k < Math.min(count, index + 1 + RENDER_AHEAD_SEGMENTS); k++) {
      // A failed render-ahead costs nothing but time: the player's own request renders it again and reports the error.
      const ahead = () => scheduled(engine, w, r, k, 'ahead').then(() => markCompleteIfDone(engine, w.id, r.dir, count));
      void Promise.resolve(isThere(engine, path.join(r.dir, segmentFileName(k)))).then((there) => (there ? undefined : ahead())).catch(() => undefined);
    }
  }
  if (!asked) return true;
  await asked;
  if (w.render === 'on-demand') await markCompleteIfDone(engine, w.id, r.dir, count);
  return true;
}

async function playlistListsAll(dir: string, count: number): Promise<boolean> {
  const text = await readFile(path.join(dir, PLAYLIST_NAME), 'utf8').catch(() => '');
  return text.includes('#EXT-X-ENDLIST') && text.includes(segmentFileName(count - 1));
}

/** Removes part files left by a process that was killed mid-render (a live render keeps writing to its own). */
async function removeStaleParts(work: string, olderThanMs: number): Promise<void> {
  const names = existsSync(work) ? await readdir(work) : [];
  await Promise.all(
    names.map(async (name) => {
      const file = path.join(work, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < olderThanMs) await rm(file, { force: true });
    }),
  );
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
  await cp(src, staging, { recursive: true, filter: (s) => ![WORK_DIR, DRAW_DIR].includes(path.relative(src, s).split(path.sep)[0]!) });
  // On a render farm with a shared store, the rendered segments and the mp4 are only there.
  await fetchStoredFolder(engine, src, staging);
  // The data folder is private; a copy handed to the user gets the modes their own umask gives.
  await applyUserModes(staging);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  return target;
}
