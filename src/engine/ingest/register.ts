// Registering a video: the source is checked and probed, and the video recorded (PENDING) at once, so a bad source
// fails before anything is kept. Its ingest job (ingest-job.ts) then makes the working media. The same key and source
// again is the same video (a local file only while it holds the same bytes: source-identity.ts); `replace` takes the
// key over from another video, which is forgotten with its watermarks.
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { DEFAULT_FORENSIC_LAYOUT, type ForensicLayoutChoice } from '../../core/forensic-layout.js';
import { isHttpUrl } from '../../core/http-url.js';
import { probeMedia } from '../../ffmpeg/probe-media.js';
import { mediaKeys, scratch } from '../data-folder/layout.js';
import { deleteMediaFolder } from '../data-folder/shared-media.js';
import type { Engine } from '../engine.js';
import { isLeaseLive, jobId } from '../jobs/job-lease.js';
import type { VideoRecord } from '../state/state-store.js';
import { checkLocalSource, downloadSource } from './fetch-source.js';
import { compareSource, hashFile } from './source-identity.js';
import { checkNotAPlaylist, type SourcePolicy } from './source-policy.js';

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

/** The source as stored: a URL as given, a local path made absolute (another process has another working folder). */
export function normaliseSource(source: string): string {
  const trimmed = source.trim();
  return isHttpUrl(trimmed) ? trimmed : path.resolve(trimmed);
}

/**
 * Records a video and returns it PENDING; the same key again returns the stored video without any work, and a key
 * whose earlier ingest failed is tried again. Nothing is recorded for a source that cannot be read or is no video.
 */
export async function recordVideo(engine: Engine, request: IngestRequest, policy?: SourcePolicy): Promise<Registration> {
  if (!request.source.trim()) throw new WmarkError('SOURCE_REQUIRED', 'a source file or URL is required');
  const source = request.source.trim();
  const remote = isHttpUrl(source);
  const sourceUrl = normaliseSource(source);
  // The default key is the absolute path, so the same file named two ways is one video and two files named alike are two.
  const key = request.key ?? sourceUrl;
  const existing = await engine.store.getVideoByKey(key);
  let replaced: Registration['replaced'];
  const replacing = existing && request.replace ? existing : undefined;
  if (replacing) await assertIdle(engine, replacing);
  else if (existing && !existing.status.startsWith('FAILED')) {
    if (existing.sourceUrl !== sourceUrl) throw keyTaken(key, `the key "${key}" already names another source (${existing.sourceUrl})`);
    if (request.enableForensic && !existing.enableForensic) {
      throw new WmarkError('KEY_EXISTS', `a video with key "${key}" was already ingested without forensic preparation`, {
        hint: 'Ingest it again with --forensic and --replace (or under another --key).',
      });
    }
    if (
      request.enableForensic &&
      request.forensicLayout &&
      existing.enableForensic &&
      request.forensicLayout !== (existing.forensicLayout ?? DEFAULT_FORENSIC_LAYOUT)
    ) {
      const how = existing.forensicLayout ? `with the '${existing.forensicLayout}' forensic layout` : 'by a wmark that had no choice of forensic layout';
      throw new WmarkError('KEY_EXISTS', `a video with key "${key}" was already prepared ${how}, not '${request.forensicLayout}'`, {
        hint: `Ingest it again with --forensic-layout ${request.forensicLayout} and --replace (or under another --key).`,
      });
    }
    // The same path names the same source only while it holds the same bytes (read last: the checks above read nothing).
    // A file that cannot be read now (gone, or refused) has nothing to compare: the key's video stands, as it always did.
    const compared = remote
      ? undefined
      : await checkLocalSource(source, policy)
          .then((file) => compareSource(existing, file))
          .catch(() => undefined);
    if (!compared) return { video: existing, created: false };
    const { same, adopt } = compared;
    if (!same) throw keyTaken(key, `the key "${key}" names ${sourceUrl} as it was when ingested, and the file has changed since`);
    if (!adopt) return { video: existing, created: false };
    await engine.store.updateVideo(existing.id, { sourceSha256: adopt });
    return { video: { ...existing, sourceSha256: adopt }, created: false };
  } else if (existing) await forgetVideo(engine, existing.id);

  // A remote source is downloaded first: the bundled static ffmpeg cannot resolve host names (static glibc has no
  // working DNS), so it is only ever given local files.
  const input = remote ? await downloadSource(engine.paths.tmp, source, policy) : await checkLocalSource(source, policy);
  try {
    await checkNotAPlaylist(policy, input, source);
    const info = await probeMedia(engine.runner, input, source);
    if (request.enableForensic && info.durationSeconds < FORENSIC_MIN_SECONDS) {
      throw new WmarkError(
        'FORENSIC_TOO_SHORT',
        `forensic watermarking needs a video of at least 5 minutes; ${source} lasts ${formatDuration(info.durationSeconds)}`,
        {
          hint: 'Ingest it without --forensic (visible marks work on any length), or a longer cut of the title: a leak is traced from 2 minutes of it.',
        },
      );
    }
    const sourceSha256 = remote ? null : await hashFile(input);
    // Only now, with the new source read and probed, is the old video forgotten: a bad source leaves it as it was.
    if (replacing) replaced = await forgetReplacedVideo(engine, replacing);
    const video: VideoRecord = {
      id: engine.newId(),
      key,
      sourceUrl,
      sourceSha256,
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
    if (!(await engine.store.insertVideo(video))) {
      // Another process registered the same key between our check and insert: theirs wins.
      return { video: (await engine.store.getVideoByKey(key))!, created: false };
    }
    await engine.store.ensureJob('ingest', video.id, engine.now());
    if (remote) await rename(input, scratch.downloadedSource(engine.paths, video.id));
    return { video, created: true, ...(replaced ? { replaced } : {}) };
  } finally {
    if (remote) await rm(input, { force: true });
  }
}

/** The key names another source (another path or URL, or the same file with other bytes). */
function keyTaken(key: string, message: string): WmarkError {
  return new WmarkError('KEY_EXISTS', message, {
    hint: `Choose another key, or re-ingest under "${key}" with \`wmark ingest <source> --key ${key} --replace\` (the old video, its watermarks and their links are deleted).`,
  });
}

/** Removes a failed video's row and files so its key can be ingested again. */
async function forgetVideo(engine: Engine, videoId: string): Promise<void> {
  await engine.store.deleteVideo(videoId);
  await rm(scratch.ingestStaging(engine.paths, videoId), { recursive: true, force: true });
  await rm(scratch.downloadedSource(engine.paths, videoId), { force: true });
  await deleteMediaFolder(engine, mediaKeys.video(videoId));
  await deleteMediaFolder(engine, mediaKeys.videoWatermarks(videoId));
}

/**
 * Forgets the video a replacing ingest takes the key from: rows first (one transaction, so no reader sees half of it),
 * then its working media and watermark files. Refused while any process is still working on it or its watermarks,
 * since that process would write into folders being removed.
 */
async function forgetReplacedVideo(engine: Engine, video: VideoRecord): Promise<NonNullable<Registration['replaced']>> {
  const watermarks = await assertIdle(engine, video);
  await engine.store.deleteVideoAndWatermarks(video.id);
  await forgetVideo(engine, video.id);
  return { videoId: video.id, sourceUrl: video.sourceUrl, watermarks: watermarks.length };
}

async function assertIdle(engine: Engine, video: VideoRecord): Promise<unknown[]> {
  const watermarks = await engine.store.listWatermarks(video.id);
  const now = engine.now();
  const jobs = await Promise.all([jobId('ingest', video.id), ...watermarks.map((w) => jobId('watermark', w.id))].map((id) => engine.store.getJob(id)));
  const busy = jobs.some((j) => isLeaseLive(j, now));
  if (busy) {
    throw new WmarkError(
      'KEY_EXISTS',
      `the video under key "${video.key}" is still being worked on (an ingest or watermark job is running), so it cannot be replaced now`,
      {
        hint: 'Wait for its jobs to finish (see `wmark video show`), then run the same command again.',
      },
    );
  }
  return watermarks;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'an unknown duration';
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${m}:${s.toFixed(2).padStart(5, '0')}`;
}
