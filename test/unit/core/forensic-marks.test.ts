// The keyed material of forensic marks and the files that carry it: codewords and pattern grids (deterministic per
// key/video/payload/segment, independent otherwise), the grey pattern frame ffmpeg blends in (mean 128, amplitude a),
// and the detection sidecar's binary round trip.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Sidecar } from '../../../src/core/forensic/detect-inputs.js';
import { SIGNATURE_CELLS } from '../../../src/core/forensic/frame-signature.js';
import { allCodewords, codeword, forensicKey, GRID_COLUMNS, GRID_ROWS, PAYLOAD_COUNT, patternGrid } from '../../../src/core/forensic/keyed-bits.js';
import { gridValue, MARK_AMPLITUDE, patternField, patternFrameYuv420 } from '../../../src/core/forensic/pattern-image.js';
import { decodeSidecar, encodeSidecar, encodeSidecarV1 } from '../../../src/core/forensic/sidecar-format.js';
import { rng, slope, smoothImage } from '../../helpers/forensic-helpers.js';

const KEY = forensicKey(Buffer.from('a service secret of thirty-two b'));
const VIDEO = '0b7c2c1e-6a57-4f0e-9d7b-3f1f2f4a5b6c';

/** Fraction of positions where two ±1 sequences agree. */
function agreement(a: Int8Array, b: Int8Array): number {
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

describe('forensicKey', () => {
  it('is derived from the secret, deterministic, and never the secret itself', () => {
    const secret = Buffer.alloc(32, 1);
    expect(forensicKey(secret).equals(forensicKey(Buffer.alloc(32, 1)))).toBe(true);
    expect(forensicKey(secret).equals(forensicKey(Buffer.alloc(32, 2)))).toBe(false);
    expect(forensicKey(secret).equals(secret)).toBe(false);
    expect(forensicKey(secret)).toHaveLength(32);
  });
});

describe('codeword', () => {
  it('is ±1 per segment and deterministic per key, video and payload', () => {
    const c = codeword(KEY, VIDEO, 0x4142, 75);
    expect(c).toHaveLength(75);
    expect([...new Set(c)].sort()).toEqual([-1, 1]);
    expect(codeword(KEY, VIDEO, 0x4142, 75)).toEqual(c);
    expect(codeword(Buffer.from(KEY), `${VIDEO}`, 16706, 75)).toEqual(c);
  });

  it('changes completely with the payload, the video or the key (about half the bits differ)', () => {
    const n = 4096;
    const base = codeword(KEY, VIDEO, 1000, n);
    const variants = {
      payload: codeword(KEY, VIDEO, 1001, n),
      video: codeword(KEY, `${VIDEO.slice(0, -1)}d`, 1000, n),
      key: codeword(forensicKey(Buffer.from('another secret')), VIDEO, 1000, n),
    };
    for (const [what, c] of Object.entries(variants)) {
      // For independent fair bits the agreement is 0.5 ± 0.008 (1 sigma) over 4096 segments.
      expect(Math.abs(agreement(base, c) - 0.5), what).toBeLessThan(0.04);
    }
    // Balanced: about as many A as B segments.
    expect(Math.abs(base.reduce((a, v) => a + v, 0)) / n).toBeLessThan(0.05);
  });

  it('payloads that differ in one bit, or are byte-swapped, still get unrelated codewords', () => {
    const c = codeword(KEY, VIDEO, 0x4142, 2048);
    for (const other of [0x4143, 0x4042, 0xc142, 0x4241]) expect(Math.abs(agreement(c, codeword(KEY, VIDEO, other, 2048)) - 0.5)).toBeLessThan(0.06);
  });

  it('a longer title extends, never reshuffles, the codeword', () => {
    expect(codeword(KEY, VIDEO, 7, 300).subarray(0, 75)).toEqual(codeword(KEY, VIDEO, 7, 75));
  });

  it("allCodewords holds every payload's codeword, row by row, and no two of a 75-segment title are equal", { timeout: 60_000 }, () => {
    const segments = 75;
    const all = allCodewords(KEY, VIDEO, segments);
    expect(all).toHaveLength(PAYLOAD_COUNT * segments);
    for (const u of [0, 1, 0x4142, 40000, PAYLOAD_COUNT - 1]) expect(all.subarray(u * segments, (u + 1) * segments)).toEqual(codeword(KEY, VIDEO, u, segments));
    const seen = new Set<string>();
    for (let u = 0; u < PAYLOAD_COUNT; u++) seen.add(Buffer.from(all.buffer, u * segments, segments).toString('latin1'));
    expect(seen.size).toBe(PAYLOAD_COUNT);
  });
});

describe('patternGrid', () => {
  it('is a 16x9 ±1 grid, deterministic per key/video/segment and different between segments', () => {
    const g = patternGrid(KEY, VIDEO, 3);
    expect(g).toHaveLength(GRID_COLUMNS * GRID_ROWS);
    expect([...new Set(g)].sort()).toEqual([-1, 1]);
    expect(patternGrid(KEY, VIDEO, 3)).toEqual(g);
    const grids = Array.from({ length: 40 }, (_, k) => patternGrid(KEY, VIDEO, k));
    for (let k = 1; k < grids.length; k++) expect(Math.abs(agreement(grids[0]!, grids[k]!) - 0.5)).toBeLessThan(0.2);
    expect(agreement(g, patternGrid(KEY, 'other-video', 3))).toBeLessThan(0.7);
    expect(agreement(g, patternGrid(forensicKey(Buffer.from('x')), VIDEO, 3))).toBeLessThan(0.7);
  });

  it('the pattern is independent of the codewords (different HMAC domains)', () => {
    const grid = patternGrid(KEY, VIDEO, 0);
    const code = codeword(KEY, VIDEO, 0, GRID_COLUMNS * GRID_ROWS);
    expect(grid).not.toEqual(code);
  });
});

describe('patternField', () => {
  it('passes through every grid value at its cell centre and stays within ±1, smoothly', () => {
    const grid = patternGrid(KEY, VIDEO, 5);
    // 8 pixels per cell: cell (cx, cy) has its centre between pixels 8cx+3 and 8cx+4.
    const field = patternField(grid, 128, 72);
    for (let cy = 0; cy < GRID_ROWS; cy++) {
      for (let cx = 0; cx < GRID_COLUMNS; cx++) {
        expect(gridValue(grid, cx, cy)).toBe(grid[cy * GRID_COLUMNS + cx]);
      }
    }
    let maxStep = 0;
    for (let y = 0; y < 72; y++) {
      for (let x = 0; x < 128; x++) {
        const v = field[y * 128 + x]!;
        expect(Math.abs(v)).toBeLessThanOrEqual(1 + 1e-6);
        if (x > 0) maxStep = Math.max(maxStep, Math.abs(v - field[y * 128 + x - 1]!));
      }
    }
    // From +1 to -1 over one cell (8 px) with a cosine ramp: at most about pi/8 per pixel, no hard edges.
    expect(maxStep).toBeLessThan(0.45);
  });
});

describe('patternFrameYuv420', () => {
  for (const [width, height] of [
    [320, 180],
    [1280, 720],
    [322, 182],
  ] as const) {
    it(`is a mid-grey ${width}x${height} frame carrying amplitude x pattern in luma only`, { timeout: 30_000 }, () => {
      const grid = patternGrid(KEY, VIDEO, 11);
      const frame = patternFrameYuv420(grid, width, height);
      const ySize = width * height;
      const cSize = Math.ceil(width / 2) * Math.ceil(height / 2);
      expect(frame).toHaveLength(ySize + 2 * cSize);
      // Chroma untouched: blend's grainmerge with a 128 layer is the identity there.
      expect(frame.subarray(ySize).every((v) => v === 128)).toBe(true);
      const field = patternField(grid, width, height);
      const luma = Float64Array.from(frame.subarray(0, ySize));
      const meanLuma = luma.reduce((a, v) => a + v, 0) / ySize;
      const meanField = field.reduce((a, v) => a + v, 0) / ySize;
      // Mean 128 up to the pattern's own (small) imbalance, dithering adds no bias.
      expect(Math.abs(meanLuma - 128 - MARK_AMPLITUDE * meanField)).toBeLessThan(0.05);
      expect(Math.abs(meanLuma - 128)).toBeLessThan(0.5);
      // The luma carries a x field: regression slope a, every pixel within one level of 128 + a*field.
      expect(slope(field, luma)).toBeCloseTo(MARK_AMPLITUDE, 1);
      let maxDev = 0;
      let maxErr = 0;
      for (let p = 0; p < ySize; p++) {
        maxDev = Math.max(maxDev, Math.abs(luma[p]! - 128));
        maxErr = Math.max(maxErr, Math.abs(luma[p]! - 128 - MARK_AMPLITUDE * field[p]!));
      }
      expect(maxErr).toBeLessThan(1);
      expect(maxDev).toBeLessThanOrEqual(Math.ceil(MARK_AMPLITUDE + 0.5));
    });
  }

  it('scales with the amplitude, and A (frame) and B (its mirror about 128) cancel', () => {
    const grid = patternGrid(KEY, VIDEO, 2);
    const field = patternField(grid, 160, 90);
    for (const a of [1, 2, 4]) {
      const luma = Float64Array.from(patternFrameYuv420(grid, 160, 90, a).subarray(0, 160 * 90));
      expect(slope(field, luma)).toBeCloseTo(a, 1);
    }
    const minus = Int8Array.from(grid, (v) => -v);
    const a = patternFrameYuv420(grid, 160, 90).subarray(0, 160 * 90);
    const b = patternFrameYuv420(minus, 160, 90).subarray(0, 160 * 90);
    let sum = 0;
    for (let p = 0; p < a.length; p++) sum += a[p]! - 128 + (b[p]! - 128);
    expect(Math.abs(sum / a.length)).toBeLessThan(0.05);
  });

  it('keeps the mark alone at >= 47 dB PSNR-Y over many 720p segments (the mark is invisible), at the designed amplitude', { timeout: 60_000 }, () => {
    const width = 1280,
      height = 720,
      n = width * height;
    let squares = 0;
    let projection = 0;
    let energy = 0;
    for (let k = 0; k < 8; k++) {
      const grid = patternGrid(KEY, VIDEO, k);
      const field = patternField(grid, width, height);
      const luma = patternFrameYuv420(grid, width, height);
      for (let p = 0; p < n; p++) {
        const d = luma[p]! - 128;
        squares += d * d;
        projection += d * field[p]!;
        energy += field[p]! * field[p]!;
      }
    }
    const psnr = 10 * Math.log10((255 * 255) / (squares / (8 * n)));
    expect(psnr).toBeGreaterThanOrEqual(47);
    // The dither costs PSNR but keeps the smooth component (what survives an encode) at the full amplitude.
    expect(projection / energy).toBeCloseTo(MARK_AMPLITUDE, 2);
  });
});

describe('sidecar format', () => {
  function sampleSidecar(segments: number, frames: number): Sidecar {
    const r = rng(3);
    const width = 128,
      height = 72,
      n = width * height;
    const mean = new Float32Array(segments * n);
    const diff = new Float32Array(segments * n);
    for (let k = 0; k < segments; k++) {
      mean.set(smoothImage(r, width, height), k * n);
      const field = patternField(patternGrid(KEY, VIDEO, k), width, height);
      for (let p = 0; p < n; p++) diff[k * n + p] = 1.5 * field[p]! + 0.05 * r.gauss();
    }
    const signature = Float32Array.from({ length: frames * SIGNATURE_CELLS }, () => 16 + r.next() * 220);
    const segmentStarts = Array.from({ length: segments }, (_, k) => Number((k * 4.004).toFixed(6)));
    const segmentDurations = Array.from({ length: segments }, (_, k) => (k === segments - 1 ? 2.4024 : 4.004));
    return {
      version: 1,
      width,
      height,
      diffWidth: width,
      diffHeight: height,
      fps: 30000 / 1001,
      segmentStarts,
      segmentDurations,
      slotStarts: segmentStarts,
      slotDurations: segmentDurations,
      slotSegments: segmentStarts.map((_, k) => k),
      mean,
      diff,
      signatureTimes: Float64Array.from({ length: frames }, (_, i) => (i * 1001) / 30000),
      signature,
    };
  }

  it('round-trips within its fixed-point steps (mean 1/64, diff 1/1024, signature 1/64 level; times exact)', { timeout: 30_000 }, () => {
    const s = sampleSidecar(12, 1400);
    const bytes = encodeSidecar(s);
    const d = decodeSidecar(bytes);
    expect({ width: d.width, height: d.height, fps: d.fps, starts: d.segmentStarts, durations: d.segmentDurations }).toEqual({
      width: s.width,
      height: s.height,
      fps: s.fps,
      starts: s.segmentStarts,
      durations: s.segmentDurations,
    });
    expect(d.mean).toHaveLength(s.mean.length);
    expect(d.diff).toHaveLength(s.diff.length);
    expect(d.signature).toHaveLength(s.signature.length);
    expect(d.signatureTimes).toEqual(s.signatureTimes);
    const maxErr = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);
    expect(maxErr(d.mean, s.mean)).toBeLessThanOrEqual(0.5 / 64 + 1e-6);
    expect(maxErr(d.diff, s.diff)).toBeLessThanOrEqual(0.5 / 1024 + 1e-6);
    expect(maxErr(d.signature, s.signature)).toBeLessThanOrEqual(0.5 / 64 + 1e-4);
    // Encoding what was decoded changes nothing: the format is stable.
    expect(encodeSidecar(d).equals(bytes)).toBe(true);
    expect(d.version).toBe(2);
  });

  it("still reads v1 sidecars (videos ingested before code slots): one slot per segment, diff at the mean's size", () => {
    const s = sampleSidecar(6, 300);
    const d = decodeSidecar(encodeSidecarV1(s));
    expect(d.version).toBe(1);
    expect({ starts: d.slotStarts, durations: d.slotDurations, segments: d.slotSegments, dw: d.diffWidth, dh: d.diffHeight }).toEqual({
      starts: s.segmentStarts,
      durations: s.segmentDurations,
      segments: [0, 1, 2, 3, 4, 5],
      dw: 128,
      dh: 72,
    });
    expect(d.diff[100]).toBeCloseTo(s.diff[100]!, 2);
  });

  it("a 5-minute title's sidecar (75 segments, 9000 frames) stays well under 5 MB", { timeout: 60_000 }, () => {
    const bytes = encodeSidecar(sampleSidecar(75, 9000));
    expect(bytes.length).toBeLessThan(5 * 1024 * 1024);
    expect(decodeSidecar(bytes).segmentStarts).toHaveLength(75);
  });

  it('clamps values outside the fixed-point range instead of wrapping', () => {
    const s = sampleSidecar(1, 2);
    s.mean[0] = -3;
    s.mean[1] = 5000;
    s.diff[0] = 40;
    s.diff[1] = -40;
    const d = decodeSidecar(encodeSidecar(s));
    expect([d.mean[0], d.mean[1]]).toEqual([0, 65535 / 64]);
    expect(d.diff[0]).toBeCloseTo(32767 / 1024, 6);
    expect(d.diff[1]).toBe(-32);
  });

  it('refuses data that is not a sidecar', () => {
    expect(() => decodeSidecar(gzipSync(Buffer.from('WMXX1 something else')))).toThrow(/not a wmark forensic sidecar/);
    expect(() => decodeSidecar(Buffer.from('plain bytes'))).toThrow();
  });
});
