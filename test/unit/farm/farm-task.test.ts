// The kinds of render-farm task: a segment task queued by an older serve (no kind) still parses as a segment render
// with the same job id; ingest and forensic tasks are checked on arrival like segment tasks; a forensic measurement
// travels through the store as exact float32s and joins into the same sidecar as one made in a single process.
import { describe, expect, it } from 'vitest';
import { rng } from '../../../harness/rng.js';
import type { WmarkError } from '../../../src/core/errors.js';
import { SIGNATURE_CELLS } from '../../../src/core/forensic/frame-signature.js';
import {
  buildSidecar,
  decodeMeasure,
  encodeMeasure,
  type SegmentMeasure,
  SIDECAR_DIFF_HEIGHT,
  SIDECAR_DIFF_WIDTH,
  SIDECAR_HEIGHT,
  SIDECAR_WIDTH,
} from '../../../src/core/forensic/variant-plan.js';
import { farmJobId, parseFarmTask, segmentJobId, taskKind, taskOutput } from '../../../src/farm/tasks/farm-task.js';
import type { ForensicTask } from '../../../src/farm/tasks/forensic-task.js';
import type { IngestTask } from '../../../src/farm/tasks/ingest-task.js';
import type { SegmentTask } from '../../../src/farm/tasks/segment-task.js';

const segment: SegmentTask = {
  version: '0.1.0',
  input: 'videos/v1/seg_00000.ts',
  output: 'watermarks/v1/w1/seg_00000.ts',
  filterScript: 'drawtext=fontfile=font.ttf:textfile=text_0.txt',
  textFiles: [{ name: 'text_0.txt', content: 'for alice' }],
  encode: { preset: 'veryfast', crf: 23 },
  gop: 120,
  hasAudio: true,
};

const ingest: IngestTask = {
  kind: 'ingest',
  version: '0.1.0',
  source: 'videos/v1/source.mp4',
  outputPrefix: 'videos/v1',
  fps: { num: 30, den: 1 },
  width: 320,
  height: 180,
  hasAudio: true,
  encode: { preset: 'veryfast', crf: 15 },
  lead: true,
  maxFrames: 1200,
  durationSeconds: 20,
};

const grid = (sign: 1 | -1) => Array.from({ length: 144 }, (_, i) => (i % 3 === 0 ? sign : -sign) as 1 | -1);
const forensic: ForensicTask = {
  kind: 'forensic-variant',
  version: '0.1.0',
  input: 'videos/v1/seg_00003.ts',
  outputPrefix: 'videos/v1/forensic',
  index: 3,
  width: 320,
  height: 180,
  gop: 120,
  hasAudio: true,
  encode: { preset: 'veryfast', crf: 23 },
  split: 60,
  grids: [grid(1), grid(-1)],
};

const problems = (data: unknown) => {
  try {
    parseFarmTask(data);
    return [];
  } catch (error) {
    expect((error as WmarkError).code).toBe('TASK_INVALID');
    return (error as WmarkError).details;
  }
};

describe('render-farm tasks', () => {
  it('a segment task as an older serve queued it (no kind) parses as a segment render, unchanged, with its old job id', () => {
    const parsed = parseFarmTask(JSON.parse(JSON.stringify(segment)));
    expect(parsed).toEqual(segment);
    expect(taskKind(parsed)).toBe('segment');
    expect(farmJobId(parsed)).toBe(segmentJobId(segment.output));
    expect(parseFarmTask({ ...segment, kind: 'segment' })).toEqual(segment);
  });

  it('ingest and forensic tasks round-trip through JSON, each with its own job id', () => {
    expect(parseFarmTask(JSON.parse(JSON.stringify(ingest)))).toEqual(ingest);
    expect(parseFarmTask(JSON.parse(JSON.stringify(forensic)))).toEqual(forensic);
    expect(taskOutput(ingest)).toBe('videos/v1/');
    expect(taskOutput(forensic)).toBe('videos/v1/forensic/measure_00003.bin');
    const ids = [farmJobId(segment), farmJobId(ingest), farmJobId(forensic)];
    expect(new Set(ids).size).toBe(3);
    // The same work asked for twice is one job across the cluster.
    expect(farmJobId({ ...ingest })).toBe(ids[1]);
    expect(ids.every((id) => !id.includes(':'))).toBe(true);
  });

  it('refuse keys that could leave the store, unknown kinds and malformed pattern grids, naming the kind', () => {
    expect(problems({ ...ingest, source: '../../etc/passwd' })).toEqual(['ingest task source: not a media key']);
    expect(problems({ ...ingest, outputPrefix: '/abs' })).toHaveLength(1);
    expect(problems({ ...forensic, input: 'videos/../x.ts' })).toEqual(['forensic-variant task input: not a media key']);
    expect(problems({ ...forensic, grids: [[1, 0, -1]] }).length).toBeGreaterThan(0);
    expect(problems({ ...forensic, grids: [] }).length).toBeGreaterThan(0);
    expect(problems({ ...segment, kind: 'mine-bitcoin' }).length).toBeGreaterThan(0);
    expect(problems(null).length).toBeGreaterThan(0);
  });
});

function randomMeasure(seed: number, slots: number, frames: number): SegmentMeasure {
  const r = rng(seed);
  const fill = (n: number) => Float32Array.from({ length: n }, () => r.next() * 255 - 20);
  return {
    slots,
    frames,
    mean: fill(slots * SIDECAR_WIDTH * SIDECAR_HEIGHT),
    diff: fill(slots * SIDECAR_DIFF_WIDTH * SIDECAR_DIFF_HEIGHT),
    signature: fill(frames * SIGNATURE_CELLS),
  };
}

describe('forensic measurements', () => {
  it('come back from their bytes exactly, and anything else is refused', () => {
    const m = randomMeasure(1, 2, 120);
    const bytes = encodeMeasure(m);
    // An unaligned copy, as a store's stream may hand it over.
    const unaligned = Buffer.concat([Buffer.from([0]), bytes]).subarray(1);
    expect(decodeMeasure(unaligned)).toEqual(m);
    expect(decodeMeasure(bytes.subarray(0, bytes.length - 4))).toBeUndefined();
    expect(decodeMeasure(Buffer.from('not a measurement'))).toBeUndefined();
  });

  it("join into a sidecar with every segment's slots and frames in order", () => {
    const measures = [randomMeasure(2, 2, 120), randomMeasure(3, 2, 120), randomMeasure(4, 1, 60)];
    const sidecar = buildSidecar(
      [4, 4, 2],
      30,
      measures.map((m) => decodeMeasure(encodeMeasure(m))!),
    );
    expect(sidecar.slotSegments).toEqual([0, 0, 1, 1, 2]);
    expect(sidecar.slotStarts).toEqual([0, 2, 4, 6, 8]);
    expect(sidecar.slotDurations).toEqual([2, 2, 2, 2, 2]);
    expect(sidecar.mean.subarray(4 * SIDECAR_WIDTH * SIDECAR_HEIGHT)).toEqual(measures[2]!.mean);
    expect(sidecar.signature.length).toBe(300 * SIGNATURE_CELLS);
    expect(sidecar.signatureTimes[120]).toBe(4);
  });
});
