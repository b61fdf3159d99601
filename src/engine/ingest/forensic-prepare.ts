// A forensic title's preparation at ingest, in this process: the variants of every working segment (spread over the
// engine's workers), then the detection sidecar and the layout file measured from their encodes.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { forEachBounded } from '../../core/for-each-bounded.js';
import { forensicFiles, segmentPatterns } from '../../core/forensic/title-layout.js';
import type { SegmentMeasure } from '../../core/forensic/variant-plan.js';
import type { ForensicLayoutChoice } from '../../core/forensic-layout.js';
import { segmentFileName } from '../../core/plan/segment-timing.js';
import type { EncodeOptions } from '../../core/plan/x264.js';
import { prepareSegmentVariants } from '../../ffmpeg/forensic-variants.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { FORENSIC_DIR, LAYOUT_NAME, SIDECAR_NAME } from '../data-folder/layout.js';

export interface ForensicPlan {
  videoId: string;
  /** Folder with the working segments; variants and sidecar go to its forensic/ subfolder. */
  dir: string;
  width: number;
  height: number;
  fps: number;
  gop: number;
  hasAudio: boolean;
  segmentDurations: number[];
  encode: EncodeOptions;
  workers: number;
  secret: Buffer;
  /** How segments carry the code (default 'whole'). */
  layout?: ForensicLayoutChoice;
}

export async function prepareForensic(
  runner: ProcessRunner,
  plan: ForensicPlan,
  onProgress?: (done: number, total: number) => void,
): Promise<{ sidecarBytes: number; slots: number }> {
  const out = path.join(plan.dir, FORENSIC_DIR);
  await mkdir(out, { recursive: true });
  const count = plan.segmentDurations.length;
  const patterns = segmentPatterns(plan.secret, plan.videoId, plan.segmentDurations, plan.fps, plan.layout);
  const measures: SegmentMeasure[] = new Array<SegmentMeasure>(count);
  let done = 0;

  await forEachBounded(
    Array.from({ length: count }, (_, k) => k),
    plan.workers,
    async (k) => {
      const { split, grids, halves } = patterns[k]!;
      measures[k] = await prepareSegmentVariants(runner, {
        input: path.join(plan.dir, segmentFileName(k)),
        outDir: out,
        index: k,
        width: plan.width,
        height: plan.height,
        gop: plan.gop,
        hasAudio: plan.hasAudio,
        encode: plan.encode,
        split,
        grids,
        halves,
      });
      onProgress?.(++done, count);
    },
  );

  const files = forensicFiles(plan.segmentDurations, plan.fps, measures);
  await writeFile(path.join(out, SIDECAR_NAME), files.sidecar);
  await writeFile(path.join(out, LAYOUT_NAME), files.layout);
  return { sidecarBytes: files.sidecar.length, slots: files.slots };
}
