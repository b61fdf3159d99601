// Managing a watermark after it is made: where its outputs are, a copy of them for the user, and forgetting it.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { forEachBounded } from '../../core/for-each-bounded.js';
import { applyUserModes } from '../data-folder/file-modes.js';
import { MP4_NAME, mediaKeys, PLAYLIST_NAME } from '../data-folder/layout.js';
import { deleteMediaFolder, withEveryStore } from '../data-folder/shared-media.js';
import type { Engine } from '../engine.js';
import { isLeaseLive, jobId } from '../jobs/job-lease.js';
import type { WatermarkRecord } from '../state/state-store.js';
import { ENGINE_NOTES } from './band-strategy.js';
import { forgetSegments } from './on-demand.js';
import { doneSegments } from './watermark-job.js';

/** Files copied from a store at once for an export. */
const TRANSFERS_AT_ONCE = 4;

export interface WatermarkFiles {
  dir: string;
  /** Present once the playlist exists. */
  m3u8?: string;
  /** Present once the mp4 is joined. */
  mp4?: string;
  /** Every output is written (a 2.0 watermark is READY once playable, while later segments are still rendering). */
  complete: boolean;
}

/** Where a watermark's outputs are: files on this machine, or (a shared store) their place in the store. */
export async function watermarkFiles(engine: Engine, w: WatermarkRecord): Promise<WatermarkFiles> {
  const folder = mediaKeys.watermark(w.videoId, w.id);
  const present = async (name: string) => (await engine.media.exists(`${folder}/${name}`)) && engine.media.describe(`${folder}/${name}`);
  const m3u8 = await present(PLAYLIST_NAME);
  const mp4 = w.containers.includes('mp4') && (await present(MP4_NAME));
  return { dir: engine.media.describe(folder), ...(m3u8 ? { m3u8 } : {}), ...(mp4 ? { mp4 } : {}), complete: w.status === 'READY' };
}

/** How many of a watermark's segments are rendered, of how many: a rerun's count of what it rendered itself. */
export async function renderedSegments(engine: Engine, w: WatermarkRecord): Promise<{ done: number; total: number }> {
  const total = (await engine.store.getVideo(w.videoId))?.segments.length ?? 0;
  const done = await doneSegments(engine.media, mediaKeys.watermark(w.videoId, w.id), total);
  return { done: done.filter(Boolean).length, total };
}

/**
 * Forgets a watermark: its row and job, then its files. Refused while a process renders it (that process would write
 * into the folder being removed). Its links stop working at once.
 */
export async function deleteWatermark(engine: Engine, watermark: WatermarkRecord): Promise<void> {
  if (isLeaseLive(await engine.store.getJob(jobId('watermark', watermark.id)), engine.now())) {
    throw new WmarkError('WATERMARK_BUSY', `watermark ${watermark.id} is being rendered right now, so it cannot be removed`, {
      hint: 'Wait until it is READY or FAILED, then remove it.',
    });
  }
  await engine.store.deleteWatermark(watermark.id);
  // The same settings later make the same id again, and its plan must be made anew.
  forgetSegments(engine, watermark.id);
  const video = await engine.store.getVideo(watermark.videoId);
  const outputs = (video?.segments ?? []).map((_, i) => mediaKeys.segment(watermark.videoId, watermark.id, i));
  await engine.renderer.discard(outputs).catch(() => undefined);
  await deleteMediaFolder(engine, mediaKeys.watermark(watermark.videoId, watermark.id));
}

/** Copies a finished watermark's HLS folder and mp4 to `dest/<id>/` (for CI pipelines collecting outputs). */
export async function exportWatermark(engine: Engine, w: WatermarkRecord, dest: string): Promise<string> {
  const folder = mediaKeys.watermark(w.videoId, w.id);
  const target = path.join(dest, w.id);
  const staging = `${target}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  // The engine's store first; a data folder whose serve rendered on a farm with a shared store finds the rest there.
  await withEveryStore(engine, async (store) => {
    const wanted = (await store.list(`${folder}/`))
      .filter((key) => !ENGINE_NOTES.includes(key.slice(folder.length + 1)))
      .map((key) => ({ key, file: path.join(staging, ...key.slice(folder.length + 1).split('/')) }))
      .filter(({ file }) => !existsSync(file));
    await forEachBounded(wanted, TRANSFERS_AT_ONCE, async ({ key, file }) => {
      await mkdir(path.dirname(file), { recursive: true });
      await store.getFile(key, file);
    });
  });
  // The data folder is private; a copy handed to the user gets the modes their own umask gives.
  await applyUserModes(staging);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  return target;
}
