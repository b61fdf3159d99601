// A title's band media, made at ingest when the patched x264 is here: the shared encode of every working segment
// (HLS segments on the same GOP, slices at the bands, the band clamp), the qpfile of its frame types, and each band's
// source rows (lossless, with the segment's timestamps), so that a viewer's band render never decodes a whole frame.
// The bands are recorded in band.json beside them; a title without that file has no band encode.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { forEachBounded } from '../../core/for-each-bounded.js';
import { frameTypesOf } from '../../core/h264/frame-types.js';
import type { BandRows } from '../../core/h264/splice-band.js';
import { bandLayout } from '../../core/plan/band-fit.js';
import { BAND_REFS, type BandEncodeOptions, bandIngestArgs, bandSegmentMuxArgs, qpfileFor } from '../../core/plan/band-plan.js';
import { segmentFileName } from '../../core/plan/segment-timing.js';
import type { EncodeOptions } from '../../core/plan/x264.js';
import type { ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { isMediaNotFound, type MediaStore } from '../../media/media-store.js';
import { encodeShared } from './encode-band.js';

/** The folder of a video's band media, beside its working segments. */
export const BAND_DIR = 'band';
export const BAND_META_NAME = 'band.json';

/** Whether the patched x264 takes several bands in one shared encode (a top and a bottom band), or one. */
export const SEVERAL_BANDS = true;

export interface BandMeta {
  /** The bands, in macroblock rows (top included, bottom excluded). */
  bands: BandRows[];
  width: number;
  height: number;
  /** The shared encode's settings, which every band encode repeats. */
  encode: { preset: string; crf: number; refs: number };
  /** How the bands' rows are kept: `nut` (Ut Video, BAND_ROWS_OUTPUT); absent in titles made before, whose rows are lossless H.264 in MPEG-TS. */
  rows?: 'nut';
}

export const bandKeys = {
  meta: (videoId: string) => `videos/${videoId}/${BAND_DIR}/${BAND_META_NAME}`,
  /** The shared encode of working segment `index`, an HLS segment. */
  shared: (videoId: string, index: number) => `videos/${videoId}/${BAND_DIR}/${segmentFileName(index)}`,
  /** x264's qpfile with the frame types of that shared segment. */
  qpfile: (videoId: string, index: number) => `videos/${videoId}/${BAND_DIR}/${segmentFileName(index).replace(/\.ts$/, '.qp')}`,
  /** Band `band`'s source rows of that segment, in the form `meta.rows` names. */
  rows: (videoId: string, band: number, index: number, form: BandMeta['rows']) =>
    `videos/${videoId}/${BAND_DIR}/rows${band}_${segmentFileName(index).replace(/\.ts$/, form === 'nut' ? '.nut' : '.ts')}`,
};

/** The title's band record, or undefined when it has no band encode. */
export async function readBandMeta(media: MediaStore, videoId: string): Promise<BandMeta | undefined> {
  return media.read(bandKeys.meta(videoId)).then(
    (bytes) => JSON.parse(bytes.toString('utf8')) as BandMeta,
    (error: unknown) => (isMediaNotFound(error) ? undefined : Promise.reject(error)),
  );
}

/** The band encode options a title's band record fixes, for a segment of `gop` frames. */
export function bandEncodeOptions(meta: BandMeta, gop: number, threads?: number): BandEncodeOptions {
  return { preset: meta.encode.preset, crf: meta.encode.crf, refs: meta.encode.refs, gop, ...(threads ? { threads } : {}) };
}

export interface BandIngestPlan {
  /** The staging folder with the working segments; the band media go to its band/ subfolder. */
  dir: string;
  width: number;
  height: number;
  fps: { num: number; den: number };
  gop: number;
  hasAudio: boolean;
  segmentDurations: number[];
  timeOrigin: number;
  encode: EncodeOptions;
  workers: number;
  /** Whether the patched x264 takes several bands (--band-rows T1,B1,T2,B2); otherwise the bottom band alone. */
  severalBands: boolean;
}

/**
 * Makes the band media of a staged title: per working segment one decode (whole frames for the shared encode, the
 * bands' rows for keeping), the shared encode, and its mux with the segment's audio. Returns the band record written.
 */
export async function prepareBandMedia(
  x264: string,
  runner: ProcessRunner,
  plan: BandIngestPlan,
  onProgress?: (done: number, total: number) => void,
  signal?: AbortSignal,
): Promise<BandMeta> {
  const out = path.join(plan.dir, BAND_DIR);
  await mkdir(out, { recursive: true });
  const bands = bandLayout(plan.height, { top: plan.severalBands });
  const meta: BandMeta = {
    bands,
    width: plan.width,
    height: plan.height,
    encode: { preset: plan.encode.preset, crf: plan.encode.crf, refs: BAND_REFS },
    rows: 'nut',
  };
  const count = plan.segmentDurations.length;
  const starts = plan.segmentDurations.map((_, k) => plan.timeOrigin + plan.segmentDurations.slice(0, k).reduce((a, b) => a + b, 0));
  // Keys below the video's folder, as files of the staging folder.
  const file = (key: string) => path.join(out, key.slice(key.lastIndexOf('/') + 1));
  let done = 0;
  await forEachBounded(
    Array.from({ length: count }, (_, k) => k),
    plan.workers,
    async (k) => {
      const working = path.join(plan.dir, segmentFileName(k));
      const y4m = path.join(out, `full_${k}.y4m`);
      const raw = path.join(out, `shared_${k}.264`);
      const videoOnly = path.join(out, `video_${k}.ts`);
      try {
        const cuts = bands.map((rows, b) => ({ cut: { rows, width: plan.width, height: plan.height }, output: file(bandKeys.rows('', b, k, meta.rows)) }));
        await runner.ffmpeg(bandIngestArgs(working, y4m, cuts), { signal });
        await encodeShared(
          { x264, runner },
          { source: y4m, output: raw, rows: bands, height: plan.height, options: { ...bandEncodeOptions(meta, plan.gop), threads: 1 }, signal },
        );
        await writeFile(file(bandKeys.qpfile('', k)), qpfileFor(frameTypesOf(await readFile(raw))));
        const fps = `${plan.fps.num}/${plan.fps.den}`;
        const runs = bandSegmentMuxArgs(raw, working, file(bandKeys.shared('', k)), { start: starts[k]!, fps, hasAudio: plan.hasAudio, videoOnly });
        for (const args of runs) await runner.ffmpeg(args, { signal });
      } finally {
        await Promise.all([y4m, raw, videoOnly].map((f) => rm(f, { force: true })));
      }
      onProgress?.(++done, count);
    },
  );
  await writeFile(path.join(out, BAND_META_NAME), JSON.stringify(meta));
  return meta;
}
