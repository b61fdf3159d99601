// The forensic detector's maths on synthetic data (no ffmpeg): a made-up sidecar (smooth random means M_k, the real
// keyed pattern fields as D_k) and leaks built as gain * (M_k + s_k * D_k + noise) + offset. Checks exact recovery,
// trimmed leaks, two averaged viewers (collusion), no accusation on noise, timeline alignment and crop registration.
import { beforeAll, describe, expect, it } from 'vitest';
import { leakMeanImage, registerGeometry, warp } from '../../../src/core/forensic/crop-search.js';
import type { LeakFrames } from '../../../src/core/forensic/detect-inputs.js';
import { alignLeak, type SignatureOffset } from '../../../src/core/forensic/frame-signature.js';
import { codeword, PAYLOAD_COUNT, type PackedCodebook, packedCodebook } from '../../../src/core/forensic/keyed-bits.js';
import { type SegmentReading, scorePayloads, Z_THRESHOLD } from '../../../src/core/forensic/score.js';
import { fitSegment, readSegments } from '../../../src/core/forensic/slot-reading.js';
import {
  leakSignatures,
  noiseReadings,
  rng,
  type SyntheticTitle,
  smoothImage,
  syntheticLeak,
  syntheticSignatures,
  syntheticTitle,
} from '../../helpers/forensic-helpers.js';

const SEGMENTS = 75; // a 5-minute title in 4-second segments
const IDENTITY = { x0: 0, y0: 0, w: 1, h: 1 };
const at = (offset: number): SignatureOffset => ({ offset, score: 1, overlapSeconds: 0 });

let title: SyntheticTitle;
let codes: PackedCodebook;

beforeAll(() => {
  title = syntheticTitle({ seed: 7, segments: SEGMENTS });
  codes = packedCodebook(title.key, title.videoId, SEGMENTS);
}, 60_000);

function read(leak: LeakFrames, offset = 0): SegmentReading[] {
  return readSegments(title.sidecar, leak, at(offset), IDENTITY);
}

function signsOf(payload: number): Int8Array {
  return codeword(title.key, title.videoId, payload, SEGMENTS);
}

describe('readSegments + scorePayloads: one viewer', () => {
  it('reads every segment as A or B exactly and accuses only the viewer', () => {
    const payload = 0x4142;
    const { leak } = syntheticLeak(title, { signs: signsOf(payload), noise: 4, seed: 1 });
    const readings = read(leak);
    expect(readings.map((r) => r.segment)).toEqual(Array.from({ length: SEGMENTS }, (_, k) => k));
    const code = signsOf(payload);
    for (const r of readings) {
      expect(Math.sign(r.value), `segment ${r.segment}`).toBe(code[r.segment]);
      expect(Math.abs(r.value - code[r.segment]!)).toBeLessThan(0.3);
    }
    const v = scorePayloads(readings, codes);
    expect(v.accused).toEqual([payload]);
    expect(v.best).toMatchObject({ payload, rank: 1 });
    // All 75 soft bits agree with the codeword: z is near its ceiling sqrt(75) = 8.66, far above the rest.
    expect(v.best!.z).toBeGreaterThan(8);
    expect(v.best!.gap).toBeGreaterThan(2.5);
    expect(v.collusion.suspected).toBe(false);
    expect(v.segmentsRead).toBe(SEGMENTS);
    expect(v.threshold).toBe(Z_THRESHOLD);
  });

  it('recovers payloads at the edges of the range (0 and 65535)', () => {
    for (const payload of [0, PAYLOAD_COUNT - 1]) {
      const { leak } = syntheticLeak(title, { signs: signsOf(payload), noise: 4, seed: payload + 3 });
      expect(scorePayloads(read(leak), codes).accused).toEqual([payload]);
    }
  });

  it("fits the leak's own gain and offset (contrast/brightness change) before reading the mark", () => {
    const payload = 0x7a31;
    const { leak } = syntheticLeak(title, { signs: signsOf(payload), noise: 5, gain: 0.8, offset: 14, seed: 2 });
    const readings = read(leak);
    for (const r of readings) expect(Math.abs(r.value - signsOf(payload)[r.segment]!)).toBeLessThan(0.35);
    expect(scorePayloads(readings, codes).accused).toEqual([payload]);
  });

  it('a trimmed leak (3:20 starting off a segment boundary) reads only the segments it covers and still names the viewer', () => {
    const payload = 0x1234;
    const { leak, offset } = syntheticLeak(title, { signs: signsOf(payload), from: 37.3, to: 236.9, seed: 3 });
    expect(leak.times[0]).toBe(0);
    const readings = read(leak, offset);
    const segs = readings.map((r) => r.segment);
    // Segment 9 (36-40 s) is seen for 2.5 s, enough; 59 (236-240 s) for under a second, too little to read.
    expect(segs[0]).toBe(9);
    expect(segs.at(-1)).toBe(58);
    expect(segs).toEqual(Array.from({ length: 50 }, (_, i) => 9 + i));
    const v = scorePayloads(readings, codes);
    expect(v.accused).toEqual([payload]);
    expect(v.best!.z).toBeGreaterThanOrEqual(Z_THRESHOLD);
  });

  it('reading with the wrong alignment (a whole segment off) finds nothing', () => {
    const payload = 0x1234;
    const { leak, offset } = syntheticLeak(title, { signs: signsOf(payload), from: 40, to: 280, seed: 4 });
    expect(scorePayloads(read(leak, offset), codes).accused).toEqual([payload]);
    expect(scorePayloads(read(leak, offset + 4), codes).accused).toEqual([]);
  });

  it('skips a segment seen for less than a second', () => {
    // Segment 9's inner part (36.15-39.85 s) is seen for 0.65 s, segment 11's for 0.35 s.
    const { leak, offset } = syntheticLeak(title, { signs: signsOf(1), from: 39.2, to: 44.5, seed: 5 });
    expect(read(leak, offset).map((r) => r.segment)).toEqual([10]);
  });

  it('too short a leak (1 minute, 15 segments) accuses nobody rather than guess', () => {
    const payload = 0x2222;
    const { leak, offset } = syntheticLeak(title, { signs: signsOf(payload), from: 100, to: 160, seed: 6 });
    const v = scorePayloads(read(leak, offset), codes);
    expect(v.segmentsRead).toBe(15);
    // 15 perfect soft bits cannot reach z = 6.5 (ceiling sqrt(15) = 3.9), and 2^15 patterns are shared by 65,536 payloads.
    expect(v.best!.z).toBeLessThan(Z_THRESHOLD);
    expect(v.accused).toEqual([]);
  });

  it('reports nothing at all for an empty reading', () => {
    const v = scorePayloads([], codes);
    expect(v).toMatchObject({ segmentsRead: 0, accused: [], collusion: { suspected: false } });
    expect(v.best).toBeUndefined();
  });
});

describe('readSegments + scorePayloads: two viewers averaged', () => {
  it('flags collusion and lists both payloads', () => {
    const [p1, p2] = [0x4142, 0x5a5a];
    const c1 = signsOf(p1);
    const c2 = signsOf(p2);
    const { leak } = syntheticLeak(title, { signs: Array.from(c1, (v, k) => (v + c2[k]!) / 2), noise: 4, seed: 8 });
    const readings = read(leak);
    // Where the two codewords agree the mark survives, where they differ it cancels out.
    for (const r of readings) expect(Math.abs(r.value - (c1[r.segment]! + c2[r.segment]!) / 2)).toBeLessThan(0.3);
    const v = scorePayloads(readings, codes);
    expect(v.collusion.suspected).toBe(true);
    expect([...v.collusion.payloads].sort()).toEqual([p1, p2].sort());
    expect([...v.accused].sort()).toEqual([p1, p2].sort());
    expect(v.collusion.z).toBeGreaterThanOrEqual(Z_THRESHOLD);
    expect(
      v.candidates
        .slice(0, 2)
        .map((c) => c.payload)
        .sort(),
    ).toEqual([p1, p2].sort());
  });

  it('flags collusion for several different pairs', { timeout: 60_000 }, () => {
    const r = rng(99);
    for (let trial = 0; trial < 4; trial++) {
      const p1 = r.int(PAYLOAD_COUNT);
      const p2 = (p1 + 1 + r.int(PAYLOAD_COUNT - 1)) % PAYLOAD_COUNT;
      const c1 = signsOf(p1);
      const c2 = signsOf(p2);
      const { leak } = syntheticLeak(title, { signs: Array.from(c1, (v, k) => (v + c2[k]!) / 2), noise: 4, seed: 100 + trial });
      const v = scorePayloads(read(leak), codes);
      expect({ trial, suspected: v.collusion.suspected, accused: [...v.accused].sort() }).toEqual({ trial, suspected: true, accused: [p1, p2].sort() });
    }
  });
});

describe('no false accusations', () => {
  it("200 null trials (unmarked leaks, other titles' marks, pure noise, trimmed) accuse nobody", { timeout: 120_000 }, () => {
    // Two frames a second are plenty for a null trial (same seed as `title`: same key, means and codewords).
    const same = syntheticTitle({ seed: 7, segments: SEGMENTS, fps: 2 });
    const other = syntheticTitle({ seed: 1234, segments: SEGMENTS, fps: 2 });
    const r = rng(2024);
    let accusations = 0;
    let collusions = 0;
    let maxZ = -Infinity;
    const tally = (readings: SegmentReading[]) => {
      const v = scorePayloads(readings, codes);
      accusations += v.accused.length;
      if (v.collusion.suspected) collusions++;
      maxZ = Math.max(maxZ, v.best?.z ?? -Infinity);
    };
    for (let trial = 0; trial < 200; trial++) {
      const kind = trial % 4;
      if (kind === 0) {
        // An unmarked copy of this title (e.g. the source itself), possibly trimmed.
        const from = r.int(100);
        const { leak, offset } = syntheticLeak(same, { signs: new Int8Array(SEGMENTS), from, to: from + 180 + r.int(300 - 180 - from), noise: 4, seed: trial });
        tally(readSegments(same.sidecar, leak, at(offset), IDENTITY));
      } else if (kind === 1) {
        // A copy marked for another title: its pattern fields and codewords share nothing with this title's.
        const p = r.int(PAYLOAD_COUNT);
        const { leak } = syntheticLeak(other, { signs: codeword(other.key, other.videoId, p, SEGMENTS), noise: 4, seed: trial });
        const readings = readSegments(title.sidecar, { ...leak }, at(0), IDENTITY);
        tally(readings);
      } else {
        // Pure noise readings over a random contiguous stretch of at least 43 segments.
        const length = 43 + r.int(SEGMENTS - 43 + 1);
        const start = r.int(SEGMENTS - length + 1);
        tally(
          noiseReadings(
            r,
            Array.from({ length }, (_, i) => start + i),
            kind === 2 ? 0.05 : 1,
          ),
        );
      }
    }
    expect({ accusations, collusions }).toEqual({ accusations: 0, collusions: 0 });
    expect(maxZ).toBeLessThan(Z_THRESHOLD);
    // Under the null the best of 65,536 scores sits near 4.3 sigma: the threshold leaves a wide margin.
    expect(maxZ).toBeLessThan(5.8);
  });
});

describe('fitSegment', () => {
  it('returns s for leak = g*(m + s*d) + o', () => {
    const r = rng(5);
    const m = smoothImage(r, 32, 18);
    const d = Float32Array.from(title.sidecar.diff.subarray(0, 32 * 18));
    for (const [s, g, o] of [
      [1, 1, 0],
      [-1, 1, 0],
      [0.5, 0.7, 20],
      [-0.25, 1.3, -15],
    ] as const) {
      const leak = Float32Array.from(m, (v, p) => g * (v + s * d[p]!) + o);
      expect(fitSegment(m, d, leak)).toBeCloseTo(s, 5);
    }
  });

  it('on a flat picture fits only offset and s (gain taken as 1)', () => {
    const m = new Float32Array(32 * 18).fill(90);
    const d = Float32Array.from(title.sidecar.diff.subarray(0, 32 * 18));
    const leak = Float32Array.from(m, (v, p) => v + 0.7 * d[p]! + 3);
    expect(fitSegment(m, d, leak)).toBeCloseTo(0.7, 5);
  });

  it('clamps to [-2, 2] and gives up without a pattern', () => {
    const r = rng(6);
    const m = smoothImage(r, 32, 18);
    const d = Float32Array.from(title.sidecar.diff.subarray(0, 32 * 18));
    expect(
      fitSegment(
        m,
        d,
        Float32Array.from(m, (v, p) => v + 9 * d[p]!),
      ),
    ).toBe(2);
    expect(
      fitSegment(
        m,
        d,
        Float32Array.from(m, (v, p) => v - 9 * d[p]!),
      ),
    ).toBe(-2);
    expect(fitSegment(m, new Float32Array(m.length).fill(1), m)).toBeUndefined();
  });
});

describe('alignLeak', () => {
  const FPS = 30;
  let original: { times: Float64Array; sig: Float32Array };

  beforeAll(() => {
    const frames = 200 * FPS;
    original = { times: Float64Array.from({ length: frames }, (_, i) => i / FPS), sig: syntheticSignatures(rng(11), frames) };
  });

  function cut(fromFrame: number, frames: number, transform: (v: number) => number, seed: number) {
    const r = rng(seed);
    const sig = Float32Array.from(original.sig.subarray(fromFrame * 16, (fromFrame + frames) * 16), (v) => transform(v) + 0.5 * r.gauss());
    return { times: Float64Array.from({ length: frames }, (_, i) => i / FPS), sig };
  }

  it('finds a known offset to the 0.1 s bin, through a brightness/contrast change', { timeout: 60_000 }, () => {
    for (const [fromFrame, frames] of [
      [2502, 90 * FPS],
      [0, 60 * FPS],
      [4000, 2000],
      [173, 12 * FPS],
    ] as const) {
      const leak = cut(fromFrame, frames, (v) => 0.85 * v + 20, fromFrame);
      const a = alignLeak({ signatureTimes: original.times, signature: original.sig }, leak.times, leak.sig);
      expect(Math.abs(a.offset - fromFrame / FPS), `leak from frame ${fromFrame}: ${JSON.stringify(a)}`).toBeLessThanOrEqual(0.1 + 1e-9);
      expect(a.score).toBeGreaterThan(0.5);
    }
  });

  it('aligns a leak from its frames as the detector decodes them', () => {
    const t = syntheticTitle({ seed: 21, segments: 20, fps: 10 });
    const { leak, offset } = syntheticLeak(t, { signs: new Int8Array(20), from: 23.4, to: 63.4, seed: 3 });
    // The sidecar's signatures are those of the original frames: the same picture without the leak's noise.
    const { leak: orig } = syntheticLeak(t, { signs: new Int8Array(20), noise: 0, seed: 4 });
    // A static mean per segment gives signature changes only at segment boundaries: still enough to lock on.
    const a = alignLeak({ signatureTimes: orig.times, signature: leakSignatures(orig) }, leak.times, leakSignatures(leak));
    expect(Math.abs(a.offset - offset)).toBeLessThanOrEqual(0.1 + 1e-9);
  });

  it('a different title correlates poorly', () => {
    const stranger = syntheticSignatures(rng(12), 60 * FPS);
    const a = alignLeak(
      { signatureTimes: original.times, signature: original.sig },
      Float64Array.from({ length: 60 * FPS }, (_, i) => i / FPS),
      stranger,
    );
    expect(a.score).toBeLessThan(0.2);
  });
});

describe('registerGeometry + readSegments on a cropped leak', () => {
  it('finds an 8 % crop and reads the mark through it', { timeout: 60_000 }, () => {
    const W = 64,
      H = 36;
    const t = syntheticTitle({ seed: 31, segments: SEGMENTS, width: W, height: H, fps: 2, videoId: 'crop' });
    const tc = packedCodebook(t.key, t.videoId, SEGMENTS);
    const payload = 0x0bad;
    const { leak } = syntheticLeak(t, { signs: codeword(t.key, t.videoId, payload, SEGMENTS), noise: 2, seed: 9 });
    // The pirate keeps the region x 4..63 %, y 6..98 % (8 % cut from the width) and scales it back to full frame.
    const crop = { x0: 0.04, y0: 0.06, w: 0.92, h: 0.92 };
    const n = W * H;
    const cropped = new Uint16Array(leak.frames.length);
    const frame = new Float32Array(n);
    for (let i = 0; i < leak.times.length; i++) {
      for (let p = 0; p < n; p++) frame[p] = leak.frames[i * n + p]!;
      cropped.set(
        Uint16Array.from(warp(frame, W, H, crop), (v) => Math.round(v)),
        i * n,
      );
    }
    const cLeak = { ...leak, frames: cropped };
    const origMean = new Float32Array(n);
    for (let k = 0; k < SEGMENTS; k++) for (let p = 0; p < n; p++) origMean[p]! += t.sidecar.mean[k * n + p]! / SEGMENTS;
    const g = registerGeometry(origMean, leakMeanImage(cLeak), W, H);
    expect(g.w).toBeCloseTo(crop.w, 1);
    expect(g.h).toBeCloseTo(crop.h, 1);
    expect(Math.abs(g.x0 - crop.x0)).toBeLessThan(0.03);
    expect(Math.abs(g.y0 - crop.y0)).toBeLessThan(0.04);
    expect(g.score).toBeGreaterThan(0.99);
    const v = scorePayloads(readSegments(t.sidecar, cLeak, at(0), g), tc);
    expect(v.accused).toEqual([payload]);
    // Read as if uncropped, the pattern no longer lines up: far weaker evidence.
    const naive = scorePayloads(readSegments(t.sidecar, cLeak, at(0), IDENTITY), tc);
    expect(naive.candidates.find((c) => c.payload === payload)?.z ?? 0).toBeLessThan(v.best!.z);
  });
});
