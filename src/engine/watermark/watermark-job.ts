// A watermark's job: render its segments (the opening first, so it plays as early as possible), publish a playlist as
// they land, join the mp4 when asked for, and mark it READY once every output is there. Killed, it resumes where it
// stopped: finished segments are never rendered again.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { isWmarkError, leavesJobQueued, WmarkError } from '../../core/errors.js';
import { joinMp4Args } from '../../core/plan/render-args.js';
import { SEGMENT_SECONDS, segmentFileName } from '../../core/plan/segment-timing.js';
import { writeMediaPlaylist } from '../../core/playlist.js';
import { tail } from '../../ffmpeg/run-ffmpeg.js';
import { isMediaNotFound, type MediaStore } from '../../media/media-store.js';
import { MP4_NAME, PLAYLIST_NAME } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import { holdLease, LEASE_STALE_MS, type Lease, topicOf } from '../jobs/job-lease.js';
import type { JobReporter } from '../jobs/job-reporter.js';
import type { RenderUrgency } from '../render/segment-renderer.js';
import type { VideoRecord, WatermarkRecord } from '../state/state-store.js';
import { rendersEverySegment } from './request.js';
import { dropDeleted, type WatermarkSegments, watermarkSegments } from './watermark-segments.js';

/**
 * Runs (or resumes) a watermark's job to completion. Resolves with the final record, or undefined when another process
 * holds the job (its progress shows in the store); a failed render marks the watermark FAILED and rejects with the
 * ffmpeg reason. Interrupted, or stopped by a dependency that does not answer, it keeps the finished segments and stays
 * queued.
 */
export async function runWatermarkJob(engine: Engine, watermarkId: string, signal?: AbortSignal): Promise<WatermarkRecord | undefined> {
  // Its video comes with it: the segments to render (a video does not change once its watermarks exist).
  const found = await engine.store.getWatermarkWithVideo(watermarkId);
  if (!found) throw new WmarkError('WATERMARK_NOT_FOUND', `no watermark ${watermarkId}`);
  const initial = found.watermark;
  if (initial.status === 'READY') return initial;
  return holdLease(engine, 'watermark', watermarkId, async (report, lease) => {
    // Taken at once, nobody finished the job since the record was read (a lease held meanwhile would have stopped it),
    // so it is not read again; a status another process wrote since only moves on (PLAYABLE is written from PENDING).
    const current = lease.taken === 'at-once' ? initial : (await engine.store.getWatermark(watermarkId))!;
    if (current.status === 'READY') return current;
    try {
      return await renderWatermark(engine, current, found.video, report, lease, signal);
    } catch (error) {
      if (!leavesJobQueued(error)) {
        const reason = isWmarkError(error) ? (error.details[0] ? tail(error.details[0], 1500) : error.message) : String(error);
        await engine.store.updateWatermark(watermarkId, { status: 'FAILED', error: reason });
      }
      throw error;
    }
  });
}

/** The playlist of the first `listed` segments; ended once it lists them all. */
function playlistFor(video: VideoRecord, listed: number): string {
  return writeMediaPlaylist({
    segments: video.segments.slice(0, listed).map((duration, i) => ({ uri: segmentFileName(i), duration })),
    ended: listed === video.segments.length,
    // The target duration must not change while the playlist grows, so it is computed from all planned segments.
    targetDuration: Math.max(1, Math.ceil(Math.max(...video.segments.map((d) => Number(d.toFixed(6)))))),
  });
}

/** Which of `count` segments a listing of keys holds (`seg_00000.ts`… directly under `prefix`). */
export function segmentsListed(keys: readonly string[], prefix: string, count: number): boolean[] {
  const names = new Set(keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)));
  return Array.from({ length: count }, (_, i) => names.has(segmentFileName(i)));
}

/** Which of a watermark's `count` segments are in place. */
export async function doneSegments(media: MediaStore, folder: string, count: number): Promise<boolean[]> {
  return segmentsListed(await media.list(`${folder}/seg_`), `${folder}/`, count);
}

function contiguousPrefix(done: boolean[]): number {
  const i = done.indexOf(false);
  return i < 0 ? done.length : i;
}

/** How many segments from the start it takes to cover `seconds` of video (at least one). */
export function openingSegments(durations: number[], seconds: number): number {
  let covered = 0;
  let n = 0;
  while (n < durations.length && covered < seconds - 1e-6) covered += durations[n++]!;
  return Math.max(1, n);
}

async function readText(media: MediaStore, key: string): Promise<string> {
  return media.read(key).then(
    (bytes) => bytes.toString('utf8'),
    (error: unknown) => (isMediaNotFound(error) ? '' : Promise.reject(error)),
  );
}

async function playlistListsAll(media: MediaStore, folder: string, count: number): Promise<boolean> {
  const text = await readText(media, `${folder}/${PLAYLIST_NAME}`);
  return text.includes('#EXT-X-ENDLIST') && text.includes(segmentFileName(count - 1));
}

async function renderWatermark(
  engine: Engine,
  w: WatermarkRecord,
  video: VideoRecord,
  report: JobReporter,
  lease: Lease,
  signal?: AbortSignal,
): Promise<WatermarkRecord> {
  // A watermark deleted meanwhile is noticed once the renders are over (the read below), not after every segment.
  const segments = await watermarkSegments(engine, w, { deletionCheckedAtEnd: true, video });
  const { folder } = segments;
  await engine.renderer.tidy(folder, engine.now() - LEASE_STALE_MS);
  const count = video.segments.length;
  const done = await doneSegments(engine.media, folder, count);
  // An on-demand watermark lists every segment from the start (players ask for the ones they need), and so does one
  // turned full later: its playlist must not shrink.
  const listsAll = w.render === 'on-demand' || (await playlistListsAll(engine.media, folder, count));
  let listedAll = false;
  let playable = false;
  const progress = (stage: string) => report(done.filter(Boolean).length, count, stage);
  // Segments finish concurrently. Publishing is serialised and reads `done` when its turn comes, so an older, shorter
  // playlist can never replace a newer one.
  let publishing: Promise<void> = Promise.resolve();
  const publishProgress = (): Promise<void> =>
    (publishing = publishing.then(async () => {
      const prefix = contiguousPrefix(done);
      if (prefix > 0) {
        if (!listedAll) await engine.media.put(`${folder}/${PLAYLIST_NAME}`, playlistFor(video, listsAll ? count : prefix));
        listedAll = listsAll;
      }
      // Reported first, so the PLAYABLE write below carries it.
      progress('rendering');
      if (prefix > 0 && !playable) {
        playable = true;
        // Whoever waits for it to play is woken now, not by a progress report (those are thinned out); other
        // processes by a notice the write itself sends, which also writes the job's progress and renews its lease.
        const topic = topicOf('watermark', w.id);
        if (w.status === 'PENDING') {
          const notice = engine.changes.busMessage(topic);
          await lease.write((job) => engine.store.updateWatermark(w.id, { status: 'PLAYABLE' }, { from: 'PENDING', notice, job }));
          engine.changes.notifyHere(topic);
        } else {
          engine.changes.notify(topic);
        }
      }
    }));
  await publishProgress();

  // The opening is rendered first, as urgent work: the renderer gives each opening segment all it has in turn (every
  // core here, or the farm's free workers at once), so the playlist plays as early as possible. On demand, the opening
  // is the lead (one GOP of video) and players ask for the rest; in full, or for an mp4, the rest follow in order in
  // the background, which keeps every core busy and each next segment ready before the last has played, while a
  // player's own request still goes first.
  const opening = w.render === 'on-demand' ? openingSegments(video.segments, SEGMENT_SECONDS) : 1;
  const todo = done.flatMap((d, i) => (d ? [] : [i]));
  // On demand, players' requests render segments too: one that is there by its turn is not rendered again.
  const place = w.render === 'on-demand' ? segments.put : segments.make;
  await renderSegments(
    place,
    [
      ...todo.filter((i) => i < opening).map((i) => [i, 'now'] as [number, RenderUrgency]),
      ...(rendersEverySegment(w) ? todo.filter((i) => i >= opening).map((i) => [i, 'background'] as [number, RenderUrgency]) : []),
    ],
    async (i) => {
      done[i] = true;
      await publishProgress();
    },
    signal,
  );
  await publishing;

  const current = (await engine.store.getWatermark(w.id)) ?? (await dropDeleted(engine, w.id, folder));
  const joining = current.containers.includes('mp4') && !(await engine.media.exists(`${folder}/${MP4_NAME}`));
  if (joining) {
    // An mp4 asked for while this job rendered the opening only: the rest first.
    const rest = (await doneSegments(engine.media, folder, count)).flatMap((d, i) => (d ? [] : [[i, 'background'] as [number, RenderUrgency]]));
    await renderSegments(segments.put, rest, async () => undefined, signal);
    progress('joining mp4');
    await joinMp4(engine, folder, video, signal);
  }
  // Read again only after a join: what was asked for while it ran is seen.
  return markCompleteIfDone(engine, w.id, folder, count, joining ? undefined : current, lease);
}

/**
 * Places the listed segments, asked for in this order, at once: the renderer sees the opening before the rest, and never has to stop a render it started too early. One failed segment stops
 * the rest, and this ends once every render it started has stopped: no ffmpeg of a FAILED job is still running (or
 * writing) when its failure is reported.
 */
async function renderSegments(
  place: WatermarkSegments['make'],
  pending: [number, RenderUrgency][],
  onDone: (index: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  if (!pending.length) return;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let failure: { error: unknown } | undefined;
  try {
    await Promise.all(
      pending.map(async ([i, urgency]) => {
        try {
          await place(i, urgency, stop.signal);
          await onDone(i);
        } catch (error) {
          failure ??= { error };
          stop.abort();
        }
      }),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure.error;
}

/**
 * Joins a watermark's segments into its mp4 by stream copy, from files on this machine: the store's own where it keeps
 * them as files here, else copies it makes in the scratch folder.
 */
async function joinMp4(engine: Engine, folder: string, video: VideoRecord, signal?: AbortSignal): Promise<void> {
  const scratch = await mkdtemp(path.join(engine.paths.tmp, 'mp4-'));
  try {
    const keys = video.segments.map((_, i) => `${folder}/${segmentFileName(i)}`);
    const output = path.join(scratch, MP4_NAME);
    await engine.media.withLocalFiles(keys, { scratch, ...(signal ? { signal } : {}) }, async (files) => {
      // Plain names from the segments' folder: a long title's list would not fit one argument as full paths.
      const names = files.map((file) => path.basename(file));
      await engine.runner.ffmpeg(joinMp4Args(names, output, video.hasAudio), { signal, cwd: path.dirname(files[0]!) });
    });
    await engine.media.putFile(`${folder}/${MP4_NAME}`, output, { move: true });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * READY (every output written) once every segment is there; an on-demand watermark gets there as players ask. The
 * record is read here, after the segments are, so a container asked for meanwhile is seen, unless the caller `read` it
 * after them. Under the job's `lease`, READY and the job's end are one write: a watermark is never READY with its job
 * still running, nor its job done while it is not READY.
 */
export async function markCompleteIfDone(
  engine: Engine,
  id: string,
  folder: string,
  count: number,
  read?: WatermarkRecord,
  lease?: Lease,
): Promise<WatermarkRecord> {
  const w = read ?? (await engine.store.getWatermark(id)) ?? (await dropDeleted(engine, id, folder));
  const complete =
    (await doneSegments(engine.media, folder, count)).every(Boolean) && (!w.containers.includes('mp4') || (await engine.media.exists(`${folder}/${MP4_NAME}`)));
  if (!complete || w.status === 'READY') return w;
  const readyOn = engine.now();
  const ready = { status: 'READY', readyOn, error: null } as const;
  if (lease) await lease.end((job, notice) => engine.store.updateWatermark(id, ready, { job, notice }));
  else await engine.store.updateWatermark(id, ready);
  // Every segment is there, so no render of this watermark is under way: what a killed process left goes.
  await engine.renderer.tidy(folder);
  await engine.media.dropUnfinished(`${folder}/`);
  return { ...w, status: 'READY', readyOn, error: null };
}
