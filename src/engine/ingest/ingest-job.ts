// A video's ingest job: its source is read again (downloaded again, after a restart) and handed to the engine's ingest
// path, which makes the working media; the video is INGESTED once that is complete, or FAILED_ENCODING with the reason.
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { isWmarkError, leavesJobQueued, WmarkError } from '../../core/errors.js';
import { isHttpUrl } from '../../core/http-url.js';
import { scratch } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import { holdLease } from '../jobs/job-lease.js';
import type { VideoRecord } from '../state/state-store.js';
import { checkLocalSource, downloadSource } from './fetch-source.js';
import { assertSourceUnchanged } from './source-identity.js';
import type { SourcePolicy } from './source-policy.js';

/**
 * Runs (or resumes, from the start) a video's ingest job. Resolves with the INGESTED record, or undefined when another
 * process holds the job; a failure marks the video FAILED_ENCODING and rejects. Ctrl-C, or a dependency that does not
 * answer, leaves it PENDING and queued.
 */
export async function runIngestJob(engine: Engine, videoId: string, signal?: AbortSignal, policy?: SourcePolicy): Promise<VideoRecord | undefined> {
  const initial = await engine.store.getVideo(videoId);
  if (!initial) throw new WmarkError('VIDEO_NOT_FOUND', `no video with id "${videoId}"`);
  const downloaded = scratch.downloadedSource(engine.paths, videoId);
  return holdLease(engine, 'ingest', videoId, async (report) => {
    // Already over (a job row left running by an older process): nothing to redo, and the job ends.
    const current = await engine.store.getVideo(videoId);
    if (current?.status !== 'PENDING') return current;
    try {
      const input = await sourceFile(engine, initial, policy);
      const made = await engine.ingest.normalise(initial, input, report, signal);
      await engine.store.updateVideo(videoId, made);
      await rm(downloaded, { force: true });
      return (await engine.store.getVideo(videoId))!;
    } catch (error) {
      if (!leavesJobQueued(error)) {
        const reason = error instanceof Error ? error.message : String(error);
        await engine.store.updateVideo(videoId, { status: 'FAILED_ENCODING', error: reason });
        await rm(downloaded, { force: true });
        if (!isWmarkError(error)) throw new WmarkError('INGEST_FAILED', `ingest of ${initial.sourceUrl} failed: ${reason}`, { cause: error });
      }
      throw error;
    }
  });
}

/**
 * The source as a local file. A remote one was downloaded when it was registered; a job resumed after a restart
 * downloads it again. A local file is checked again (it may have gone, or the policy may refuse it now, or it may
 * hold other bytes than were registered).
 */
async function sourceFile(engine: Engine, video: VideoRecord, policy?: SourcePolicy): Promise<string> {
  if (!isHttpUrl(video.sourceUrl)) {
    const file = await checkLocalSource(video.sourceUrl, policy);
    await assertSourceUnchanged(video, file);
    return file;
  }
  const input = scratch.downloadedSource(engine.paths, video.id);
  if (!existsSync(input)) await rename(await downloadSource(engine.paths.tmp, video.sourceUrl, policy), input);
  return input;
}
