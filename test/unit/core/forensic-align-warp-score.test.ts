// The detector maths on synthetic data (no ffmpeg): piecewise alignment (speed changes, shuffled excerpts),
// warp registration (perspective + lens), byte-table scoring, peeling of averaged colluders and the false-accusation
// bound.
import { describe, expect, it } from 'vitest';
import { alignPieces, mapTime } from '../../../src/core/forensic/align.js';
import { meanPairs, registeredSignature } from '../../../src/core/forensic/analyse.js';
import type { LeakFrames } from '../../../src/core/forensic/detect-inputs.js';
import { frameSignature, SIGNATURE_CELLS } from '../../../src/core/forensic/frame-signature.js';
import { cropWarp, liveMask, mapPoint, registerWarp, type Warp, warpImage } from '../../../src/core/forensic/geometry.js';
import { codeword, packedBit, packedCodebook } from '../../../src/core/forensic/keyed-bits.js';
import { falseAccusation, normalTail, pairThreshold, type SegmentReading, scoreBook, scorePayloads, Z_THRESHOLD } from '../../../src/core/forensic/score.js';
import { readSlots, slotContentResidual } from '../../../src/core/forensic/slot-reading.js';
import { rng, slope, smoothImage, syntheticSignatures, syntheticTitle } from '../../helpers/forensic-helpers.js';

const FPS = 10;

/** Signature of the original at time t (linear interpolation between frames) plus noise and a gain change. */
function leakFrom(
  orig: Float32Array,
  frames: number,
  mapping: (t: number) => number,
  seconds: number,
  seed: number,
  noise = 0.8,
): { times: Float64Array; sig: Float32Array } {
  const r = rng(seed);
  const count = Math.floor(seconds * 25);
  const times = Float64Array.from({ length: count }, (_, i) => i / 25);
  const sig = new Float32Array(count * SIGNATURE_CELLS);
  for (let i = 0; i < count; i++) {
    const f = Math.min(frames - 1.001, Math.max(0, mapping(times[i]!) * FPS));
    const f0 = Math.floor(f),
      a = f - f0;
    for (let c = 0; c < SIGNATURE_CELLS; c++) {
      const v = orig[f0 * SIGNATURE_CELLS + c]! * (1 - a) + orig[(f0 + 1) * SIGNATURE_CELLS + c]! * a;
      sig[i * SIGNATURE_CELLS + c] = 0.9 * v + 10 + noise * r.gauss();
    }
  }
  return { times, sig };
}

describe('alignPieces', () => {
  const frames = 900 * FPS;
  const orig = syntheticSignatures(rng(5), frames);
  const origTimes = Float64Array.from({ length: frames }, (_, i) => i / FPS);

  it('finds a 2-minute excerpt played at 1.04x and at 0.96x: its start and its time scale', () => {
    for (const speed of [1.04, 0.96]) {
      const start = 312.3;
      const leak = leakFrom(orig, frames, (t) => start + speed * t, 120, 1);
      const map = alignPieces({ originalTimes: origTimes, originalSig: orig, leakTimes: leak.times, leakSig: leak.sig });
      // One piece carries (almost) all of it; a stray window at the very end may form a short second one.
      const p = [...map.pieces].sort((a, b) => b.leakEnd - b.leakStart - (a.leakEnd - a.leakStart))[0]!;
      expect(p.leakEnd - p.leakStart).toBeGreaterThan(110);
      expect(Math.abs(p.scale - speed), `speed ${speed}`).toBeLessThan(0.003);
      for (const t of [5, 60, 105]) expect(Math.abs(mapTime(map, t) - (start + speed * t))).toBeLessThan(0.1);
    }
  });

  it('maps a straight excerpt of grainy, slow content at exactly 1x, not a few per cent off (a drift of seconds)', () => {
    // Grain 4 (the features are mostly noise, as in a slow pan): the windows' least squares alone said 0.994x and
    // 0.992x here, which left only 33 and 26 of 149 s within 0.1 s of the truth.
    const grainy = syntheticSignatures(rng(5), frames, 4);
    for (const seed of [2, 3]) {
      const start = 200.4;
      const leak = leakFrom(grainy, frames, (t) => start + t, 150, seed, 4);
      const map = alignPieces({ originalTimes: origTimes, originalSig: grainy, leakTimes: leak.times, leakSig: leak.sig });
      expect(
        map.pieces.map((p) => p.scale),
        `seed ${seed}`,
      ).toEqual([1]);
      let good = 0;
      for (let t = 1; t < 150; t++) if (Math.abs(mapTime(map, t) - (start + t)) < 0.1) good++;
      expect(good, `seed ${seed}`).toBe(149);
    }
  });

  const starts = [610, 40, 400, 200, 760, 505];
  /** Six 40-s excerpts of the original in shuffled order, each played at `speed` (40 / speed seconds of the leak). */
  const shuffled = (speed: number) => (t: number) => {
    const k = Math.min(5, Math.floor((t * speed) / 40));
    return starts[k]! + speed * t - 40 * k;
  };
  const coverage = (map: ReturnType<typeof alignPieces>, mapping: (t: number) => number, seconds: number) => {
    let good = 0,
      unread = 0,
      total = 0;
    for (let t = 0.25; t < seconds; t += 0.5) {
      total++;
      const m = mapTime(map, t);
      if (Number.isNaN(m)) unread++;
      else if (Math.abs(m - mapping(t)) < 0.15) good++;
    }
    return { good: good / total, unread: unread / total };
  };

  it('finds six 40-second excerpts in shuffled order, each with its own place in the original', () => {
    // Seed 2's windows find 5 of the 6 (83 % of the leak within 0.15 s: no window voted for the last excerpt); the
    // search of the stretch its neighbour's mapping does not explain finds the sixth (100 %).
    for (const seed of [2, 3, 4]) {
      const mapping = shuffled(1);
      const leak = leakFrom(orig, frames, mapping, 240, seed);
      const map = alignPieces({ originalTimes: origTimes, originalSig: orig, leakTimes: leak.times, leakSig: leak.sig });
      expect(map.pieces.length, `seed ${seed}`).toBe(6);
      for (let k = 0; k < 6; k++) expect(Math.abs(mapTime(map, 40 * k + 20) - (starts[k]! + 20)), `seed ${seed}, excerpt ${k}`).toBeLessThan(0.15);
      expect(coverage(map, mapping, 240).good, `seed ${seed}`).toBeGreaterThan(0.98);
    }
  });

  it('finds shuffled excerpts played at 1.04x and at 0.96x, each with its own place and speed', () => {
    for (const speed of [1.04, 0.96]) {
      const mapping = shuffled(speed);
      const seconds = 240 / speed;
      const leak = leakFrom(orig, frames, mapping, seconds, 2);
      const map = alignPieces({ originalTimes: origTimes, originalSig: orig, leakTimes: leak.times, leakSig: leak.sig });
      expect(map.pieces.length, `speed ${speed}`).toBe(6);
      for (const p of map.pieces) expect(Math.abs(p.scale - speed), `speed ${speed}`).toBeLessThan(0.003);
      expect(coverage(map, mapping, seconds).good, `speed ${speed}`).toBeGreaterThan(0.98);
    }
  });

  it('leaves a stretch from no part of the original unread, and maps the excerpts around it', () => {
    // Excerpt 2 (leak 80-120 s) replaced by 40 s of another title: read under a neighbour's mapping it would only be noise.
    const other = syntheticSignatures(rng(77), frames);
    const mapping = shuffled(1);
    const foreign = (t: number) => t >= 80 && t < 120;
    const leak = leakFrom(orig, frames, mapping, 240, 3);
    const stranger = leakFrom(other, frames, (t) => 300 + t, 240, 4);
    for (let i = 0; i < leak.times.length; i++) {
      if (foreign(leak.times[i]!)) leak.sig.set(stranger.sig.subarray(i * SIGNATURE_CELLS, (i + 1) * SIGNATURE_CELLS), i * SIGNATURE_CELLS);
    }
    const map = alignPieces({ originalTimes: origTimes, originalSig: orig, leakTimes: leak.times, leakSig: leak.sig });
    for (let t = 80.25; t < 120; t += 0.5) expect(mapTime(map, t), `leak ${t} s`).toBeNaN();
    const { good, unread } = coverage(map, (t) => (foreign(t) ? NaN : mapping(t)), 240);
    expect(unread).toBeLessThan(40 / 240 + 0.01);
    expect(good).toBeGreaterThan(200 / 240 - 0.01);
  });

  it('still reads a stretch of weak footage inside one excerpt (nothing there says it is another)', () => {
    // Leak 60-90 s drowned in noise: its own correlation is too low to vouch for the mapping, and no search finds a
    // better one, but the mappings on both sides agree, so it is the same excerpt (its slots carry the mark as well).
    for (const seed of [2, 3]) {
      const start = 200.4;
      const leak = leakFrom(orig, frames, (t) => start + t, 150, seed);
      const r = rng(seed + 100);
      for (let i = 0; i < leak.times.length; i++) {
        if (leak.times[i]! >= 60 && leak.times[i]! < 90) for (let c = 0; c < SIGNATURE_CELLS; c++) leak.sig[i * SIGNATURE_CELLS + c]! += 6 * r.gauss();
      }
      const map = alignPieces({ originalTimes: origTimes, originalSig: orig, leakTimes: leak.times, leakSig: leak.sig });
      expect(coverage(map, (t) => start + t, 150).good, `seed ${seed}`).toBe(1);
    }
  });

  it('maps nothing for a title that is not this one', () => {
    const other = syntheticSignatures(rng(77), 120 * FPS);
    const map = alignPieces({
      originalTimes: origTimes,
      originalSig: orig,
      leakTimes: Float64Array.from({ length: 120 * FPS }, (_, i) => i / FPS),
      leakSig: other,
    });
    const covered = map.pieces.reduce((a, p) => a + (p.leakEnd - p.leakStart), 0);
    expect(covered).toBeLessThan(20);
  });
});

describe('registerWarp', () => {
  it('recovers a few degrees of perspective and a barrel lens from mean pictures, to a fraction of a pixel', { timeout: 60_000 }, () => {
    const W = 128,
      H = 72;
    const r = rng(11);
    const truth: Warp = { h: [0.93, 0.03, 0.01, -0.02, 0.94, -0.005, 0.09, -0.05, 1], k1: 0.25 };
    const pairs = Array.from({ length: 3 }, () => {
      const original = smoothImage(r, W, H);
      // Finer detail so the fit has edges to hold on to.
      for (let p = 0; p < W * H; p++) original[p]! += 12 * Math.sin(p * 0.37) * Math.cos((p % W) * 0.21);
      const leak = warpImage(original, W, H, truth, W, H);
      for (let p = 0; p < W * H; p++) leak[p] = 0.8 * leak[p]! + 12 + 0.5 * r.gauss();
      return { original, leak };
    });
    const { warp, score } = registerWarp(pairs, W, H, cropWarp({ x0: 0.03, y0: 0.03, w: 0.94, h: 0.94 }, W / H));
    expect(score).toBeGreaterThan(0.98);
    let worst = 0;
    for (const [u, v] of [
      [0.1, 0.1],
      [0.9, 0.1],
      [0.5, 0.5],
      [0.1, 0.9],
      [0.9, 0.9],
    ] as const) {
      const a = mapPoint(warp, u, v, W / H),
        b = mapPoint(truth, u, v, W / H);
      worst = Math.max(worst, Math.abs(a[0] - b[0]) * W, Math.abs(a[1] - b[1]) * H);
    }
    expect(worst).toBeLessThan(0.5);
  });
});

/** Finer detail than smoothImage alone, so a registration has edges to hold on to. */
function addDetail(img: Float32Array, W: number): void {
  for (let p = 0; p < img.length; p++) img[p]! += 12 * Math.sin(p * 0.37) * Math.cos((p % W) * 0.21);
}

/**
 * A camcorder's view of a screen showing `original`: the warp `truth` (perspective after a barrel lens), and black
 * where the lens looks past the screen's picture (as ffmpeg's lenscorrection fills it: the bench's F9 loses 8 % of
 * its frame that way), then a gamma of 1.2, a gain and sensor noise.
 */
function camcorderView(
  original: Float32Array,
  W: number,
  H: number,
  truth: Warp,
  r: ReturnType<typeof rng>,
  noise = 0.5,
): { view: Float32Array; dark: Uint8Array } {
  const view = warpImage(original, W, H, truth, W, H);
  const dark = new Uint8Array(W * H);
  const aspect = W / H;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const X = (x + 0.5) / W - 0.5,
        Y = ((y + 0.5) / H - 0.5) / aspect;
      const f = 1 + truth.k1 * (X * X + Y * Y);
      const q = y * W + x;
      if (Math.abs(X * f) > 0.5 || Math.abs(Y * f) > 0.5 / aspect) {
        dark[q] = 1;
        view[q] = 0;
      }
      view[q] = 0.9 * 255 * (Math.max(0, view[q]!) / 255) ** (1 / 1.2) + 8 + noise * r.gauss();
    }
  }
  return { view, dark };
}

describe('a camcorder copy with a dark lens border', () => {
  const W = 128,
    H = 72;
  const truth: Warp = { h: [0.93, 0.03, 0.01, -0.02, 0.94, -0.005, 0.09, -0.05, 1], k1: 0.25 };

  it('registers the warp to a fraction of a pixel and leaves the border out (liveMask)', { timeout: 60_000 }, () => {
    const r = rng(12);
    let dark: Uint8Array = new Uint8Array(0);
    const pairs = Array.from({ length: 4 }, () => {
      const original = smoothImage(r, W, H);
      addDetail(original, W);
      const v = camcorderView(original, W, H, truth, r);
      dark = v.dark;
      return { original, leak: v.view };
    });
    const darkCount = dark.reduce((a, v) => a + v, 0);
    expect(darkCount / (W * H)).toBeGreaterThan(0.04);
    const { warp, live } = registerWarp(pairs, W, H, cropWarp({ x0: 0.03, y0: 0.03, w: 0.94, h: 0.94 }, W / H));
    let worst = 0;
    for (const [u, v] of [
      [0.15, 0.15],
      [0.85, 0.15],
      [0.5, 0.5],
      [0.15, 0.85],
      [0.85, 0.85],
    ] as const) {
      const a = mapPoint(warp, u, v, W / H),
        b = mapPoint(truth, u, v, W / H);
      worst = Math.max(worst, Math.abs(a[0] - b[0]) * W, Math.abs(a[1] - b[1]) * H);
    }
    expect(worst).toBeLessThan(0.5);
    // Every dark pixel is left out; of the picture, only a thin band along the border goes with them.
    let darkLive = 0,
      pictureDead = 0;
    for (let q = 0; q < W * H; q++) {
      if (dark[q] && live[q]) darkLive++;
      if (!dark[q] && !live[q]) pictureDead++;
    }
    expect(darkLive).toBe(0);
    expect(pictureDead / (W * H - darkCount)).toBeLessThan(0.12);
    // A picture that shows the original everywhere keeps (nearly) every pixel.
    const clean = pairs.map((p) => ({
      original: p.original,
      leak: Float32Array.from(warpImage(p.original, W, H, truth, W, H), (v) => 0.8 * v + 12 + 0.5 * r.gauss()),
    }));
    const cleanLive = liveMask(clean, W, H, truth);
    expect(cleanLive.reduce((a, v) => a + v, 0) / (W * H)).toBeGreaterThan(0.97);
  });

  it("reads every slot right once the border is left out (with it, the border drowns the mark); a map half a slot off fits worse; the registered signature follows the original's", {
    timeout: 120_000,
  }, () => {
    const slots = 50;
    const t = syntheticTitle({ seed: 21, segments: slots, width: W, height: H, fps: 5, videoId: 'camcorder' });
    const n = W * H;
    for (let k = 0; k < slots; k++) addDetail(t.sidecar.mean.subarray(k * n, (k + 1) * n), W);
    const book = packedCodebook(t.key, t.videoId, slots);
    const payload = 40961;
    const code = codeword(t.key, t.videoId, payload, slots);
    const r = rng(5);
    const perSlot = 20;
    const frames = new Uint16Array(slots * perSlot * n);
    const times = new Float64Array(slots * perSlot);
    const shown = new Float32Array(n);
    for (let k = 0; k < slots; k++) {
      for (let p = 0; p < n; p++) shown[p] = t.sidecar.mean[k * n + p]! + code[k]! * t.sidecar.diff[k * n + p]!;
      const { view } = camcorderView(shown, W, H, truth, r, 0);
      for (let f = 0; f < perSlot; f++) {
        const i = k * perSlot + f;
        times[i] = i / 5;
        for (let p = 0; p < n; p++) frames[i * n + p] = Math.max(0, Math.min(65535, Math.round((view[p]! + 3 * r.gauss()) * 256)));
      }
    }
    const leak: LeakFrames = { width: W, height: H, times, frames };
    const map = { pieces: [{ leakStart: -Infinity, leakEnd: Infinity, scale: 1, offset: 0, score: 1 }] };
    const reg = registerWarp(meanPairs(t.sidecar, leak, map), W, H, cropWarp({ x0: 0.03, y0: 0.03, w: 0.94, h: 0.94 }, W / H));
    const soft = (rs: SegmentReading[]) => rs.reduce((a, x) => a + x.value * code[x.segment]!, 0) / rs.length;
    const read = readSlots(t.sidecar, leak, map, reg.warp, 0.15, 1, reg.live);
    expect(read).toHaveLength(slots);
    expect(read.filter((x) => Math.sign(x.value) !== code[x.segment]).length).toBe(0);
    expect(soft(read)).toBeGreaterThan(0.8);
    expect(scorePayloads(read, book).accused).toEqual([payload]);
    // The same warp with the dark border in every fit: most of what is read is the border, not the mark.
    const blind = readSlots(t.sidecar, leak, map, reg.warp);
    expect(soft(blind)).toBeLessThan(soft(read) / 2);

    // A map 1 s off (half a slot) reads mixed pictures: the slot pictures fit the original's far worse.
    const right = slotContentResidual(t.sidecar, leak, map, reg.warp, reg.live);
    const off = slotContentResidual(t.sidecar, leak, { pieces: [{ ...map.pieces[0]!, offset: 1 }] }, reg.warp, reg.live);
    expect(right.slots).toBe(slots);
    expect(off.residual).toBeGreaterThan(3 * right.residual);

    // The registered signature follows the original's 4x4 cells (keystone, lens and border undone) at least as well
    // as the leak's own, which mixes them.
    const orig = new Float32Array(slots * SIGNATURE_CELLS);
    const own = new Float32Array(slots * SIGNATURE_CELLS);
    const frame = new Float32Array(n);
    for (let k = 0; k < slots; k++) {
      for (let p = 0; p < n; p++) frame[p] = t.sidecar.mean[k * n + p]! + code[k]! * t.sidecar.diff[k * n + p]!;
      frameSignature(frame, W, H, orig, k * SIGNATURE_CELLS);
      for (let p = 0; p < n; p++) frame[p] = frames[k * perSlot * n + p]! / 256;
      frameSignature(frame, W, H, own, k * SIGNATURE_CELLS);
    }
    const registered = registeredSignature(leak, times.length, reg.warp, reg.live)!;
    const changes = (sig: Float32Array, stride: number) =>
      Array.from({ length: (slots - 1) * SIGNATURE_CELLS }, (_, i) => {
        const k = Math.floor(i / SIGNATURE_CELLS) + 1,
          c = i % SIGNATURE_CELLS;
        return sig[k * stride * SIGNATURE_CELLS + c]! - sig[(k - 1) * stride * SIGNATURE_CELLS + c]!;
      });
    const truthChanges = changes(orig, 1);
    const corr = (x: number[]) => slope(truthChanges, x) * Math.sqrt(variance(truthChanges) / variance(x));
    expect(corr(changes(registered, perSlot))).toBeGreaterThan(0.98);
    expect(corr(changes(registered, perSlot))).toBeGreaterThan(corr(changes(own, 1)));
  });
});

const variance = (x: number[]) => {
  const m = x.reduce((a, v) => a + v, 0) / x.length;
  return x.reduce((a, v) => a + (v - m) ** 2, 0) / x.length;
};

describe('scoring with a packed codebook', () => {
  const key = Buffer.alloc(32, 9);
  const BITS = 300;
  const book = packedCodebook(key, 'v', BITS);

  it('holds the bits codeword() spells, and scoreBook equals the plain sum', () => {
    const c = codeword(key, 'v', 1234, BITS);
    for (let j = 0; j < BITS; j++) expect(packedBit(book, 1234, j)).toBe(c[j]);
    const r = rng(3);
    const bits = [0, 5, 7, 8, 100, 299];
    const values = bits.map(() => r.gauss());
    const scores = scoreBook(bits, values, book);
    for (const u of [0, 1234, 65535]) {
      const cu = codeword(key, 'v', u, BITS);
      expect(scores[u]).toBeCloseTo(
        bits.reduce((a, b, i) => a + values[i]! * cu[b]!, 0),
        9,
      );
    }
  });

  it('three colluders averaged are all named by peeling, and nobody else', () => {
    const r = rng(21);
    for (const trio of [
      [11, 22222, 60000],
      [7, 8, 9],
    ]) {
      const codes = trio.map((u) => codeword(key, 'v', u, BITS));
      const readings: SegmentReading[] = Array.from({ length: BITS }, (_, j) => ({
        segment: j,
        value: (codes[0]![j]! + codes[1]![j]! + codes[2]![j]!) / 3 + 0.15 * r.gauss(),
        frames: 60,
      }));
      const v = scorePayloads(readings, book);
      expect([...v.accused].sort((a, b) => a - b)).toEqual([...trio].sort((a, b) => a - b));
      expect(v.collusion.suspected).toBe(true);
      // The search stops at a stage that accuses nobody (the fourth).
      expect(v.stages.at(-1)!.accused).toBe(false);
      expect(v.stages.at(-1)!.z).toBeLessThan(Z_THRESHOLD);
      expect(v.falseAccusation.bound).toBeLessThan(1e-3);
    }
  });

  it('noise readings accuse nobody, and the verdict says how likely such a best score is by chance', () => {
    const r = rng(4);
    const readings: SegmentReading[] = Array.from({ length: BITS }, (_, j) => ({ segment: j, value: r.gauss(), frames: 60 }));
    const v = scorePayloads(readings, book);
    expect(v.accused).toEqual([]);
    expect(v.falseAccusation.estimate).toBeGreaterThan(0.01);
  });

  it('two innocents that noise lifts to z 5.0 and 4.7 are not named as a colluding pair (the pair test needs z ~7.9)', () => {
    // Before the pair test counted its ~2 x 10^9 pairs, 2 of 400 noise leaks of 300 slots named two innocents.
    const noiseBook = packedCodebook(Buffer.alloc(32, 5), 'title-x', BITS);
    const r = rng(7);
    const trials = Array.from({ length: 3 }, () => Array.from({ length: BITS }, (_, j) => ({ segment: j, value: r.gauss(), frames: 60 })));
    const v = scorePayloads(trials[2]!, noiseBook);
    expect(v.candidates[0]!.z).toBeGreaterThan(4.9);
    expect(v.candidates[1]!.z).toBeGreaterThan(4.6);
    expect(v.accused).toEqual([]);
    expect(v.collusion.suspected).toBe(false);
    const t = pairThreshold(Z_THRESHOLD, 65536);
    expect(t).toBeCloseTo(7.92, 2);
    expect(((65536 * 65535) / 2) * normalTail(t)).toBeLessThanOrEqual(65536 * normalTail(Z_THRESHOLD) * 1.000001);
  });

  it('the false-accusation figures follow Hoeffding and the normal tail', () => {
    expect(normalTail(0)).toBeCloseTo(0.5, 7);
    expect(normalTail(6.5) / 4.016e-11).toBeCloseTo(1, 2);
    const fa = falseAccusation(6.5, 6.5, 65535);
    expect(fa.bound).toBeCloseTo(65535 * Math.exp(-21.125), 12);
    expect(fa.estimate).toBeCloseTo(65535 * 4.016e-11, 9);
    expect(fa.estimate).toBeLessThan(fa.bound);
  });
});
