// The plan of a two-slot segment's variants: four whole-segment encodes, each one GOP, each carrying
// its two slots' signs on the right halves; and the reordering of the aa + bb decode into the order the measurement reads.
// The other layouts: 'split' halves with GOPs of their own joined by stream copy, and 'single' one slot per segment.
import { describe, expect, it } from 'vitest';
import { parseVideoRequest } from '../../../src/core/api-requests.js';
import { segmentPatterns } from '../../../src/core/forensic/title-layout.js';
import {
  halfVariantArgs,
  joinHalvesArgs,
  measureSegment,
  SIDECAR_HEIGHT,
  SIDECAR_WIDTH,
  slotOrderFromWhole,
  slotsOfSegments,
  wholeVariantArgs,
} from '../../../src/core/forensic/variant-plan.js';

const out = { aa: 'aa.ts', ab: 'ab.ts', ba: 'ba.ts', bb: 'bb.ts' };
const plan = (hasAudio: boolean) =>
  wholeVariantArgs({
    input: 'seg.ts',
    patterns: ['p1.yuv', 'p2.yuv'],
    width: 320,
    height: 180,
    split: 60,
    out,
    gop: 120,
    encode: { preset: 'veryfast', crf: 23 },
    hasAudio,
  });

/** The output files in argument order, each with the arguments that apply to it (from the previous output on). */
function outputs(args: string[]): Map<string, string[]> {
  const files = new Map<string, string[]>();
  let from = args.indexOf('-filter_complex') + 2;
  for (let i = from; i < args.length; i++) {
    if (args[i]!.endsWith('.ts') && args[i - 1] !== '-i') {
      files.set(args[i]!, args.slice(from, i));
      from = i + 1;
    }
  }
  return files;
}

describe('wholeVariantArgs', () => {
  it('decodes the working segment once and encodes aa, ab, ba, bb each as one closed GOP of the whole segment', () => {
    const args = plan(false);
    const inputs = args.flatMap((a, i) => (a === '-i' ? [args[i + 1]] : []));
    // The working segment once, and each blend its own one-frame pattern input (a one-frame input split four ways
    // deadlocks ffmpeg once it ends).
    expect(inputs).toEqual(['seg.ts', ...Array.from({ length: 4 }, () => ['p1.yuv', 'p2.yuv']).flat()]);
    expect(args[args.indexOf('-filter_complex') + 1]).toMatch(/^\[0:v\]split=4\[v0\]\[v1\]\[v2\]\[v3\];/);
    const files = outputs(args);
    expect([...files.keys()]).toEqual(['aa.ts', 'ab.ts', 'ba.ts', 'bb.ts']);
    for (const [, a] of files) {
      expect(a[a.indexOf('-g') + 1]).toBe('120');
      expect(a[a.indexOf('-keyint_min') + 1]).toBe('120');
      expect(a[a.indexOf('-sc_threshold') + 1]).toBe('0');
      expect(a[a.indexOf('-x264-params') + 1]).toBe('open-gop=0');
      expect(a).not.toContain('0:a:0');
    }
  });

  it("each variant adds (a) or subtracts (b) slot 1's pattern before the split frame and slot 2's from it", () => {
    const args = plan(false);
    const graph = args[args.indexOf('-filter_complex') + 1]!;
    const files = outputs(args);
    const mode = { a: 'grainmerge', b: 'grainextract' } as const;
    for (const v of ['aa', 'ab', 'ba', 'bb'] as const) {
      const label = files.get(`${v}.ts`)![files.get(`${v}.ts`)!.indexOf('-map') + 1]!;
      expect(label).toBe(`[${v}]`);
      // Walk back from the output label: the second-half blend, then the first-half blend it reads.
      const second = graph.split(';').find((c) => c.endsWith(label))!;
      expect(second).toContain(`c0_mode=${mode[v[1] as 'a' | 'b']}`);
      expect(second).toContain("enable='gte(n,60)'");
      expect(second).toMatch(/^\[h\d\]\[[2468]:v\]/);
      const first = graph.split(';').find((c) => c.endsWith(second.slice(0, second.indexOf(']') + 1)))!;
      expect(first).toContain(`c0_mode=${mode[v[0] as 'a' | 'b']}`);
      expect(first).toContain("enable='lt(n,60)'");
      expect(first).toMatch(/^\[v\d\]\[[1357]:v\]/);
      // Only luma carries the mark.
      for (const c of [first, second]) expect(c).toContain('c1_mode=normal:c2_mode=normal');
    }
  });

  it("copies the working segment's audio into every variant when it has audio", () => {
    const files = outputs(plan(true));
    for (const [, a] of files) {
      expect(a.slice(a.indexOf('0:a:0') - 1, a.indexOf('0:a:0') + 3)).toEqual(['-map', '0:a:0', '-c:a', 'copy']);
    }
  });
});

describe('slotOrderFromWhole', () => {
  it("turns A1 A2 B1 B2 (aa then bb) into A1 B1 A2 B2, and measureSegment then reads each slot's sign", () => {
    const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
    const split = 3,
      rest = 4;
    // Frame values: base 100 levels; slot 1 +2 on A, -2 on B; slot 2 +1 on A, -1 on B (as 8.8 fixed point).
    const frame = (level: number) => new Uint16Array(n).fill(level * 256);
    const aa = [...Array(split).fill(102), ...Array(rest).fill(101)];
    const bb = [...Array(split).fill(98), ...Array(rest).fill(99)];
    const decoded = new Uint16Array([...aa, ...bb].length * n);
    for (const [f, level] of [...aa, ...bb].entries()) decoded.set(frame(level), f * n);
    const ordered = slotOrderFromWhole(decoded, n, split);
    const levels = Array.from({ length: ordered.length / n }, (_, f) => ordered[f * n]! / 256);
    expect(levels).toEqual([102, 102, 102, 98, 98, 98, 101, 101, 101, 101, 99, 99, 99, 99]);
    const m = measureSegment(ordered, 2, split);
    expect(m.frames).toBe(split + rest);
    const dn = m.diff.length / 2;
    expect(m.diff[0]).toBeCloseTo(2, 6);
    expect(m.diff[dn]).toBeCloseTo(1, 6);
    expect(m.mean[0]).toBeCloseTo(100, 6);
    expect(m.mean[n]).toBeCloseTo(100, 6);
  });
});

describe('the layouts', () => {
  it("'whole' and 'split' give two slots to segments of 3 s or more; 'single' gives every segment one", () => {
    const durations = [4, 4, 3, 2.9, 1.2];
    expect(slotsOfSegments(durations, 30)).toEqual([2, 2, 2, 1, 1]);
    expect(slotsOfSegments(durations, 30, 'whole')).toEqual([2, 2, 2, 1, 1]);
    expect(slotsOfSegments(durations, 30, 'split')).toEqual([2, 2, 2, 1, 1]);
    expect(slotsOfSegments(durations, 30, 'single')).toEqual([1, 1, 1, 1, 1]);
  });

  it('segmentPatterns numbers the slots through the title and marks halves only for two-slot segments of a split title', () => {
    const secret = Buffer.alloc(32, 7);
    const durations = [4, 4, 2];
    const whole = segmentPatterns(secret, 'v1', durations, 30);
    const split = segmentPatterns(secret, 'v1', durations, 30, 'split');
    const single = segmentPatterns(secret, 'v1', durations, 30, 'single');
    expect(whole.map((s) => [s.grids.length, s.halves, s.split])).toEqual([
      [2, false, 60],
      [2, false, 60],
      [1, false, 60],
    ]);
    expect(split.map((s) => [s.grids.length, s.halves])).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    expect(single.map((s) => [s.grids.length, s.halves])).toEqual([
      [1, false],
      [1, false],
      [1, false],
    ]);
    // The same keyed grid for the same slot number: segment 1's first slot is slot 2 in whole and split, slot 1 in single.
    expect(split[1]!.grids[0]).toEqual(whole[1]!.grids[0]);
    expect(single[1]!.grids[0]).toEqual(whole[0]!.grids[1]);
    expect(single[1]!.grids[0]).not.toEqual(whole[1]!.grids[0]);
  });

  it("'split': one decode cut at the split frame, four video-only encodes of a half each, each half its own GOP", () => {
    const args = halfVariantArgs({
      input: 'seg.ts',
      patterns: ['p1.yuv', 'p2.yuv'],
      width: 320,
      height: 180,
      split: 60,
      out: ['a1.ts', 'b1.ts', 'a2.ts', 'b2.ts'],
      gop: 120,
      encode: { preset: 'veryfast', crf: 23 },
    });
    expect(args.filter((a) => a === '-i')).toHaveLength(3);
    const graph = args[args.indexOf('-filter_complex') + 1]!.split(';');
    expect(graph).toContain('[h1]trim=end_frame=60,split[x1][y1]');
    expect(graph).toContain('[h2]trim=start_frame=60,split[x2][y2]');
    // First halves read slot 1's pattern (input 1), second halves slot 2's (input 2); A adds, B subtracts.
    expect(graph).toContain('[x1][p1]blend=c0_mode=grainmerge:c1_mode=normal:c2_mode=normal[a1]');
    expect(graph).toContain('[y1][q1]blend=c0_mode=grainextract:c1_mode=normal:c2_mode=normal[b1]');
    expect(graph).toContain('[x2][p2]blend=c0_mode=grainmerge:c1_mode=normal:c2_mode=normal[a2]');
    expect(graph).toContain('[y2][q2]blend=c0_mode=grainextract:c1_mode=normal:c2_mode=normal[b2]');
    expect(graph).toContain('[1:v]split[p1][q1]');
    expect(graph).toContain('[2:v]split[p2][q2]');
    const files = outputs(args);
    expect([...files.keys()]).toEqual(['a1.ts', 'b1.ts', 'a2.ts', 'b2.ts']);
    for (const [file, a] of files) {
      expect(a[a.indexOf('-map') + 1]).toBe(`[${file.slice(0, 2)}]`);
      expect(a).toContain('-an');
      expect(a[a.indexOf('-g') + 1]).toBe('120');
      expect(a[a.indexOf('-x264-params') + 1]).toBe('open-gop=0');
    }
  });

  it("'split': each of aa, ab, ba, bb joins its first half to its second by stream copy, with the segment's audio", () => {
    const out = { aa: 'aa.ts', ab: 'ab.ts', ba: 'ba.ts', bb: 'bb.ts' };
    const args = joinHalvesArgs({ halves: ['a1.ts', 'b1.ts', 'a2.ts', 'b2.ts'], audioFrom: 'seg.ts', out });
    const inputs = args.flatMap((a, i) => (args[i - 1] === '-i' ? [a] : []));
    expect(inputs).toEqual(['concat:a1.ts|a2.ts', 'concat:a1.ts|b2.ts', 'concat:b1.ts|a2.ts', 'concat:b1.ts|b2.ts', 'seg.ts']);
    for (const [i, v] of (['aa', 'ab', 'ba', 'bb'] as const).entries()) {
      const at = args.indexOf(`${v}.ts`);
      expect(args.slice(at - 10, at)).toEqual(['-map', `${i}:v:0`, '-map', '4:a:0', '-c', 'copy', '-muxdelay', '0', '-f', 'mpegts']);
    }
    const silent = joinHalvesArgs({ halves: ['a1.ts', 'b1.ts', 'a2.ts', 'b2.ts'], out });
    expect(silent).not.toContain('4:a:0');
    expect(silent.filter((a) => a === '-i')).toHaveLength(4);
  });
});

describe('the video request', () => {
  it('takes forensicLayout with enableForensic, and names the field when it is unknown or alone', () => {
    expect(parseVideoRequest({ sourceUrl: '/v.mp4', enableForensic: true, forensicLayout: 'split' })).toMatchObject({ forensicLayout: 'split' });
    expect(parseVideoRequest({ sourceUrl: '/v.mp4', enableForensic: true })).not.toHaveProperty('forensicLayout');
    expect(() => parseVideoRequest({ sourceUrl: '/v.mp4', enableForensic: true, forensicLayout: 'diagonal' })).toThrow(
      /forensicLayout: expected whole, split, single, got the string "diagonal"/,
    );
    expect(() => parseVideoRequest({ sourceUrl: '/v.mp4', enableForensic: true, forensicLayout: 2 })).toThrow(
      /forensicLayout: expected whole, split, single, got 2/,
    );
    for (const body of [
      { sourceUrl: '/v.mp4', forensicLayout: 'single' },
      { sourceUrl: '/v.mp4', enableForensic: false, forensicLayout: 'whole' },
    ]) {
      expect(() => parseVideoRequest(body)).toThrow(/forensicLayout: applies to forensic videos only/);
    }
  });
});
