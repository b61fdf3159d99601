// Normalising a source into closed-GOP working segments with one ffmpeg run: the segment muxer cuts at exact frame
// numbers and the audio is encoded once. The same steps whether the engine or a render-farm worker runs them.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../core/errors.js';
import { type IngestPlan, ingestArgs, parseSegmentList } from '../core/plan/ingest-args.js';
import { segmentFileName } from '../core/plan/segment-timing.js';
import { firstVideoTime } from './probe-media.js';
import type { ProcessRunner } from './run-ffmpeg.js';

/** What a transcode made: the frames written (for exact segment durations), the segment count and the time origin. */
export interface TranscodeResult {
  frames: number | undefined;
  segments: number;
  timeOrigin: number;
}

/** What an ingest transcode needs besides where its source and output are. */
export type TranscodePlan = Omit<IngestPlan, 'source' | 'outDir'>;

/**
 * Normalises `source` into closed-GOP working segments in `outDir` (ingestArgs), checks the muxer's list against the
 * files written, and reads the first frame's time: the same steps whether this process or a worker runs them.
 */
export async function transcodeToSegments(
  runner: ProcessRunner,
  plan: TranscodePlan & { source: string; outDir: string; label: string },
  options: { durationSeconds?: number; onProgress?: (fraction: number) => void; signal?: AbortSignal } = {},
): Promise<TranscodeResult> {
  const { frames } = await runner.ffmpeg(ingestArgs(plan), {
    durationSeconds: options.durationSeconds,
    onProgress: options.onProgress,
    signal: options.signal,
  });
  const list = parseSegmentList(await readFile(path.join(plan.outDir, 'segments.csv'), 'utf8'));
  if (list.length === 0) throw new WmarkError('NO_FRAMES', `${plan.label} has no decodable video frames`);
  list.forEach((entry, i) => {
    if (entry.file !== segmentFileName(i) || !existsSync(path.join(plan.outDir, entry.file))) {
      throw new WmarkError('SEGMENT_LIST_MISMATCH', `segment list does not match the files written (${entry.file})`);
    }
  });
  const timeOrigin = await firstVideoTime(runner, path.join(plan.outDir, segmentFileName(0)), options.signal);
  return { frames, segments: list.length, timeOrigin };
}
