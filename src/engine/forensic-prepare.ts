// Forensic preparation at ingest: the variants of every working segment (pattern added / subtracted in luma), the
// layout that says which variant file carries which code bits, and the detection sidecar measured from the encodes.
//
// Code slots (sidecar v2): in the 'whole' and 'split' layouts (variant-plan.ts) a segment of 3 s or more carries two
// slots, one per half, in four segment files aa/ab/ba/bb; shorter segments, and every segment in the 'single' layout,
// carry one slot in files a/b. Videos ingested before slots have no layout file: one slot per segment, files a/b
// (layout v1). Serving and detection read the layout file and the sidecar, never the layout choice: every title
// prepared any way is served and read alike.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { prepareSegmentVariants } from '../cluster/forensic-task.js';
import { forensicKey, patternGrid } from '../core/forensic/keyed-bits.js';
import { encodeSidecar } from '../core/forensic/sidecar-format.js';
import { buildSidecar, DEFAULT_FORENSIC_LAYOUT, slotsOfSegments, splitFrame, variantFileName, type ForensicLayoutChoice, type SegmentMeasure } from '../core/forensic/variant-plan.js';
import { segmentFileName } from '../core/plan/segment-timing.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import type { ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import { forEachBounded } from './for-each-bounded.js';

export {
  SIDECAR_DIFF_HEIGHT,
  SIDECAR_DIFF_WIDTH,
  SIDECAR_HEIGHT,
  SIDECAR_WIDTH,
  splitFrame,
  SPLIT_MIN_SECONDS,
  variantArgs,
  variantFileName,
  wholeVariantArgs,
} from '../core/forensic/variant-plan.js';

export const FORENSIC_DIR = 'forensic';
export const SIDECAR_NAME = 'sidecar.bin.gz';
export const LAYOUT_NAME = 'layout.json';

export interface ForensicLayout {
  version: 1 | 2;
  /** Code slots per segment (1 or 2). */
  slotsPerSegment: number[];
  /** Index of each segment's first slot (derived). */
  firstSlot: number[];
  /** Total code bits of the title. */
  slots: number;
}

export function makeLayout(version: 1 | 2, slotsPerSegment: number[]): ForensicLayout {
  const firstSlot: number[] = [];
  let at = 0;
  for (const s of slotsPerSegment) {
    firstSlot.push(at);
    at += s;
  }
  return { version, slotsPerSegment, firstSlot, slots: at };
}

/** The layout of a prepared video; a folder without a layout file is a v1 video (one slot per segment). */
export async function readForensicLayout(forensicDir: string, segments: number): Promise<ForensicLayout> {
  const file = path.join(forensicDir, LAYOUT_NAME);
  if (!existsSync(file)) return makeLayout(1, new Array<number>(segments).fill(1));
  const json = JSON.parse(await readFile(file, 'utf8')) as { version: 2; slotsPerSegment: number[] };
  return makeLayout(json.version, json.slotsPerSegment);
}

/** The variant file a viewer with codeword `code` (±1 per slot) receives for segment `index`. */
export function variantFileFor(layout: ForensicLayout, code: ArrayLike<number>, index: number): string {
  const first = layout.firstSlot[index]!;
  let letters = '';
  for (let s = 0; s < layout.slotsPerSegment[index]!; s++) letters += code[first + s]! > 0 ? 'a' : 'b';
  return variantFileName(letters, index);
}

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

/**
 * Each segment's split frame, the pattern grids of its code slots (derived from the secret, which stays here), and
 * whether its halves are encoded as GOPs of their own.
 */
export function segmentPatterns(secret: Buffer, videoId: string, segmentDurations: readonly number[], fps: number, choice: ForensicLayoutChoice = DEFAULT_FORENSIC_LAYOUT): { split: number; grids: Int8Array[]; halves: boolean }[] {
  const key = forensicKey(secret);
  const layout = makeLayout(2, slotsOfSegments(segmentDurations, fps, choice));
  return segmentDurations.map((d, k) => ({
    split: splitFrame(d, fps),
    grids: Array.from({ length: layout.slotsPerSegment[k]! }, (_, s) => patternGrid(key, videoId, layout.firstSlot[k]! + s)),
    halves: choice === 'split' && layout.slotsPerSegment[k] === 2,
  }));
}

/** The sidecar's bytes and the layout file, from every segment's measurement (in this process or from workers). */
export function forensicFiles(segmentDurations: readonly number[], fps: number, measures: readonly SegmentMeasure[]): { sidecar: Buffer; layout: string; slots: number } {
  const slotsPerSegment = measures.map((m) => m.slots);
  return {
    sidecar: encodeSidecar(buildSidecar(segmentDurations, fps, measures)),
    layout: JSON.stringify({ version: 2, slotsPerSegment }),
    slots: slotsPerSegment.reduce((a, b) => a + b, 0),
  };
}

export async function prepareForensic(runner: ProcessRunner, plan: ForensicPlan, onProgress?: (done: number, total: number) => void): Promise<{ sidecarBytes: number; slots: number }> {
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
