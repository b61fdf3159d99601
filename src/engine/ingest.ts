// Ingest: probe a source, record the video, normalise it once into closed-GOP working segments, publish by rename.
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { readFile, rm, stat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { WmarkError, isWmarkError } from '../core/errors.js';
import { framesPerSegment, ingestArgs, parseSegmentList, segmentFileName } from '../core/ffmpeg-plan.js';
import { probeMedia } from '../ffmpeg/probe-media.js';
import { publishDir } from './atomic-fs.js';
import { prepareForensic } from './forensic-prepare.js';
import { LEASE_STALE_MS } from './job-pool.js';
import type { Engine, EngineEvents } from './engine.js';
import type { VideoRecord } from './store.js';

/** High quality working form: it is decoded and encoded again for every watermark. */
// CRF 15 keeps the second generation within ~0.5 dB of a one-shot encode (CRF 18 cost 2.4 dB on grainy 720p).
const WORKING_ENCODE = { preset: 'veryfast', crf: 15 } as const;
export const FORENSIC_MIN_SECONDS = 300;

export interface IngestRequest {
  source: string;
  key?: string;
  name?: string;
  enableForensic?: boolean;
}

export interface IngestResult {
  video: VideoRecord;
  created: boolean;
}

export function isRemoteSource(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

export function videoDir(engine: Engine, videoId: string): string {
  return path.join(engine.paths.videos, videoId);
}

export function workingSegment(engine: Engine, videoId: string, index: number): string {
  return path.join(videoDir(engine, videoId), segmentFileName(index));
}

async function checkLocalSource(file: string): Promise<string> {
  const absolute = path.resolve(file);
  let info;
  try {
    info = await stat(absolute);
  } catch {
    throw new WmarkError('SOURCE_NOT_FOUND', `source file not found: ${file}`, { hint: 'Check the path, or pass an http(s) URL.' });
  }
  if (!info.isFile()) throw new WmarkError('SOURCE_NOT_A_FILE', `source is not a regular file: ${file}`);
  if (info.size === 0) throw new WmarkError('SOURCE_EMPTY', `source file is empty (0 bytes): ${file}`);
  return absolute;
}

/** Streams an http(s) source into the data dir's tmp folder (same filesystem as media) and returns the file. */
async function downloadSource(engine: Engine, url: string): Promise<string> {
  let ext = '';
  try {
    ext = path.extname(new URL(url).pathname);
  } catch {
    // fetch below reports the malformed URL.
  }
  const file = path.join(engine.paths.tmp, `download-${randomUUID()}${/^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext : ''}`);
  const unreachable = (why: string) => new WmarkError('SOURCE_UNREACHABLE', `could not read ${url}: ${why}`, { hint: 'Check the URL, and that the server is up and reachable from here.' });
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw unreachable(cause?.message ?? cause?.code ?? (error as Error).message);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw unreachable(`the server answered ${response.status} ${response.statusText}`.trim());
  }
  try {
    await mkdir(engine.paths.tmp, { recursive: true });
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), createWriteStream(file));
  } catch (error) {
    await rm(file, { force: true });
    throw unreachable(`the download failed (${(error as Error).message})`);
  }
  if ((await stat(file)).size === 0) {
    await rm(file, { force: true });
    throw new WmarkError('SOURCE_EMPTY', `source is empty (0 bytes): ${url}`);
  }
  return file;
}

/**
 * Registers and prepares a video. The same key again returns the stored video without any work; a key whose
 * earlier ingest failed is tried again.
 */
export async function ingestVideo(engine: Engine, request: IngestRequest, events: EngineEvents = {}): Promise<IngestResult> {
  const source = request.source.trim();
  if (!source) throw new WmarkError('SOURCE_REQUIRED', 'a source file or URL is required');
  const remote = isRemoteSource(source);
  // The default key is the absolute path, so the same file named two ways is one video and two files named alike are two.
  const key = request.key ?? (remote ? source : path.resolve(source));
  let existing = engine.store.getVideoByKey(key);
  if (existing?.status === 'PENDING' && !ingestIsAlive(engine, existing.id)) {
    // The process that was ingesting it died: its half-made work is discarded and the ingest starts over.
    engine.store.updateVideo(existing.id, { status: 'FAILED_ENCODING', error: 'the ingesting process stopped before finishing' });
    existing = engine.store.getVideo(existing.id);
  }
  if (existing && !existing.status.startsWith('FAILED')) {
    if (request.enableForensic && !existing.enableForensic) {
      throw new WmarkError('KEY_EXISTS', `a video with key "${key}" was already ingested without forensic preparation`, {
        hint: 'Ingest it again under another --key with --forensic.',
      });
    }
    return { video: existing.status === 'PENDING' ? await waitForIngest(engine, existing.id) : existing, created: false };
  }
  if (existing) {
    engine.store.deleteVideo(existing.id);
    await rm(videoDir(engine, existing.id), { recursive: true, force: true });
    await rm(path.join(engine.paths.tmp, `ingest-${existing.id}`), { recursive: true, force: true });
  }

  // A remote source is downloaded first: the bundled static ffmpeg cannot resolve host names (static glibc has no
  // working DNS), so it is only ever given local files.
  const input = remote ? await downloadSource(engine, source) : await checkLocalSource(source);
  try {
    events.onStage?.('probing');
    const info = await probeMedia(engine.runner, input, source);
    if (request.enableForensic && info.durationSeconds < FORENSIC_MIN_SECONDS) {
      throw new WmarkError('FORENSIC_TOO_SHORT', `forensic watermarking needs a video of at least 5 minutes; ${source} lasts ${formatDuration(info.durationSeconds)}`);
    }

    const video: VideoRecord = {
      id: engine.newId(),
      key,
      sourceUrl: isRemoteSource(source) ? source : input,
      name: request.name ?? null,
      status: 'PENDING',
      enableForensic: Boolean(request.enableForensic),
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
      const winner = engine.store.getVideoByKey(key)!;
      return { video: await waitForIngest(engine, winner.id), created: false };
    }

    events.onRegistered?.(video);
    const staging = path.join(engine.paths.tmp, `ingest-${video.id}`);
    const jobId = `ingest:${video.id}`;
    engine.store.ensureJob('ingest', video.id, engine.now());
    engine.store.acquireJob(jobId, engine.owner, engine.now(), LEASE_STALE_MS);
    const heartbeat = setInterval(() => engine.store.heartbeatJob(jobId, engine.owner, engine.now()), 4_000);
    heartbeat.unref();
    try {
      await mkdir(staging, { recursive: true });
      events.onStage?.('normalising');
      const { frames } = await engine.runner.ffmpeg(
        ingestArgs({ source: input, outDir: staging, fps: info.fps, width: info.width, height: info.height, hasAudio: info.hasAudio, encode: WORKING_ENCODE }),
        { durationSeconds: info.durationSeconds, onProgress: events.onProgress, countFrames: true },
      );
      const list = parseSegmentList(await readFile(path.join(staging, 'segments.csv'), 'utf8'));
      if (list.length === 0) throw new WmarkError('NO_FRAMES', `${source} has no decodable video frames`);
      list.forEach((entry, i) => {
        if (entry.file !== segmentFileName(i) || !existsSync(path.join(staging, entry.file))) {
          throw new WmarkError('SEGMENT_LIST_MISMATCH', `segment list does not match the files written (${entry.file})`);
        }
      });
      const timeOrigin = await firstVideoTime(engine, path.join(staging, segmentFileName(0)));
      const durations = segmentDurations(list.length, frames, info.fps);
      if (video.enableForensic) {
        events.onStage?.('preparing forensic variants A and B');
        await prepareForensic(
          engine.runner,
          {
            videoId: video.id,
            dir: staging,
            width: video.width!,
            height: video.height!,
            fps: info.fps.num / info.fps.den,
            gop: framesPerSegment(info.fps),
            hasAudio: info.hasAudio,
            segmentDurations: durations,
            encode: engine.encode,
            workers: engine.workers,
            secret: engine.secret,
          },
          (done, total) => events.onProgress?.(done / total),
        );
      }
      const published = await publishDir(staging, videoDir(engine, video.id));
      if (published !== 'published') throw new WmarkError('PUBLISH_FAILED', `video folder ${video.id} already exists`);
      engine.store.updateVideo(video.id, {
        status: 'INGESTED',
        segments: durations,
        timeOrigin,
        durationSeconds: Number(durations.reduce((a, b) => a + b, 0).toFixed(6)),
      });
      engine.store.finishJob(jobId, engine.owner, engine.now(), { status: 'done' });
      return { video: engine.store.getVideo(video.id)!, created: true };
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const reason = error instanceof Error ? error.message : String(error);
      engine.store.updateVideo(video.id, { status: 'FAILED_ENCODING', error: reason });
      engine.store.finishJob(jobId, engine.owner, engine.now(), { status: 'failed', error: reason });
      throw isWmarkError(error) ? error : new WmarkError('INGEST_FAILED', `ingest of ${source} failed: ${reason}`);
    } finally {
      clearInterval(heartbeat);
    }
  } finally {
    if (remote) await rm(input, { force: true });
  }
}

/**
 * Exact segment durations from frame counts: every segment holds one full GOP except the last. The segment muxer's
 * own list measures from the muxer's clock origin, not the first frame, so it is only used for the file names.
 */
export function segmentDurations(count: number, totalFrames: number | undefined, fps: { num: number; den: number }): number[] {
  const gop = framesPerSegment(fps);
  if (!totalFrames || totalFrames <= gop * (count - 1) || totalFrames > gop * count) {
    throw new WmarkError('FRAME_COUNT_MISMATCH', `ffmpeg reported ${totalFrames ?? 'no'} frames for ${count} segments of ${gop} frames`);
  }
  const frameSeconds = fps.den / fps.num;
  return Array.from({ length: count }, (_, i) => Number(((i < count - 1 ? gop : totalFrames - gop * (count - 1)) * frameSeconds).toFixed(6)));
}

/** Presentation time of the first video frame, read with showinfo (the bundled ffprobe cannot read MPEG-TS). */
async function firstVideoTime(engine: Engine, segment: string): Promise<number> {
  const { stderr } = await engine.runner.ffmpeg(['-copyts', '-i', segment, '-map', '0:v:0', '-frames:v', '1', '-vf', 'showinfo', '-f', 'null', '-']);
  const m = /pts_time:\s*(-?[\d.]+)/.exec(stderr);
  if (!m) throw new WmarkError('PROBE_FAILED', 'could not read the first frame time of the working segments');
  return Number(m[1]);
}

/** True while some process holds a live lease on this video's ingest (a dead one's heartbeat goes stale). */
function ingestIsAlive(engine: Engine, videoId: string): boolean {
  const job = engine.store.getJob(`ingest:${videoId}`);
  // Rows from before ingest leases existed, or a process between insert and lease, count as alive for a moment.
  if (!job) return engine.now() - (engine.store.getVideo(videoId)?.createdOn ?? 0) < LEASE_STALE_MS;
  return job.status === 'running' && job.owner !== null && (job.heartbeat ?? 0) >= engine.now() - LEASE_STALE_MS;
}

async function waitForIngest(engine: Engine, id: string, timeoutMs = 30 * 60_000): Promise<VideoRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = engine.store.getVideo(id);
    if (!v) throw new WmarkError('INGEST_VANISHED', `video ${id} disappeared while another process was ingesting it`);
    if (v.status === 'INGESTED') return v;
    if (v.status.startsWith('FAILED')) throw new WmarkError('INGEST_FAILED', `ingest of ${v.key} failed: ${v.error ?? v.status}`);
    if (!ingestIsAlive(engine, id)) throw new WmarkError('INGEST_ABANDONED', `the process ingesting ${v.key} stopped before finishing`, { hint: 'Run the same ingest again: it starts over.' });
    if (Date.now() > deadline) throw new WmarkError('INGEST_TIMEOUT', `timed out waiting for another process to ingest ${v.key}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'an unknown duration';
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${m}:${s.toFixed(2).padStart(5, '0')}`;
}
