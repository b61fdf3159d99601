// The detector's pipeline on decoded data, pure: align the leak's pieces to the original, register its geometry from
// mean pictures of the aligned stretches, read one soft bit per code slot, and judge every payload.
import { type Alignment, type AlignStats, alignPieces, mapTime, type TimeMap } from './align.js';
import { MAX_CANDIDATES } from './alignment-candidates.js';
import { type CandidateReading, readCandidates } from './candidate-reading.js';
import { registerGeometry } from './crop-search.js';
import type { LeakFrames, Sidecar } from './detect-inputs.js';
import { SIGNATURE_CELLS } from './frame-signature.js';
import { cropWarp, type ImagePair, mapPoint, registerWarp, type Warp, warpBox } from './geometry.js';
import type { PackedCodebook } from './keyed-bits.js';
import type { SegmentReading, Verdict } from './score.js';
import { slotContentResidual } from './slot-reading.js';

export interface LeakAnalysis {
  /** The map the slots were read at: of the candidate alignments, the one whose readings single out a payload best. */
  map: TimeMap;
  /** Every candidate alignment read (the aligned one first), with its best payload. */
  candidates: CandidateReading[];
  alignStats: AlignStats;
  warp: Warp;
  box: { x0: number; y0: number; w: number; h: number };
  /** liveFraction: share of the leak frame that shows the original (the rest is left out of every reading). */
  registration: { cropScore: number; score: number; pairs: number; liveFraction: number };
  readings: SegmentReading[];
  verdict: Verdict;
  /** Seconds of the leak mapped onto the original. */
  alignedSeconds: number;
  /** Seconds spent in each step: align, register, realign (a warped leak aligned again), read, score. */
  timings: { align: number; register: number; realign: number; read: number; score: number };
  /** The pieces were found again from the registered leak (see registeredSignature), and that map was kept. */
  realigned: boolean;
}

/**
 * Per leak frame, the alignment signature the original's frame would give (4x4 cell means of the original's frame
 * grid): each cell averages the live leak pixels the warp maps into it. A camcorder copy's own signature mixes cells
 * (keystone, lens) and a dark border into them; this one does not. Needs every frame kept (no chunks); else undefined.
 */
export function registeredSignature(leak: LeakFrames, frameCount: number, warp: Warp, live?: Uint8Array): Float32Array | undefined {
  if (leak.counts || leak.times.length !== frameCount) return undefined;
  const { width: W, height: H } = leak;
  const n = W * H;
  const cellOf = new Int8Array(n).fill(-1);
  const count = new Float64Array(SIGNATURE_CELLS);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const q = y * W + x;
      if (live && !live[q]) continue;
      const [u, v] = mapPoint(warp, (x + 0.5) / W, (y + 0.5) / H, W / H);
      if (!(u >= 0 && u < 1 && v >= 0 && v < 1)) continue;
      cellOf[q] = Math.floor(v * 4) * 4 + Math.floor(u * 4);
      count[cellOf[q]!]!++;
    }
  }
  if (count.some((c) => c < 8)) return undefined;
  const sig = new Float32Array(frameCount * SIGNATURE_CELLS);
  const acc = new Float64Array(SIGNATURE_CELLS);
  for (let i = 0; i < frameCount; i++) {
    acc.fill(0);
    const base = i * n;
    for (let q = 0; q < n; q++) {
      const c = cellOf[q]!;
      if (c >= 0) acc[c]! += leak.frames[base + q]!;
    }
    for (let c = 0; c < SIGNATURE_CELLS; c++) sig[i * SIGNATURE_CELLS + c] = acc[c]! / count[c]! / 256;
  }
  return sig;
}

const sameMap = (a: TimeMap, b: TimeMap) =>
  a.pieces.length === b.pieces.length &&
  a.pieces.every((p, i) => {
    const q = b.pieces[i]!;
    return Math.abs(p.leakStart - q.leakStart) < 0.05 && Math.abs(p.leakEnd - q.leakEnd) < 0.05 && p.scale === q.scale && Math.abs(p.offset - q.offset) < 0.005;
  });

/** Up to `groups` pairs (original mean, leak mean) over consecutive aligned stretches of the leak. */
export function meanPairs(sidecar: Sidecar, leak: LeakFrames, map: TimeMap, groups = 6): ImagePair[] {
  const n = leak.width * leak.height;
  if (sidecar.width !== leak.width || sidecar.height !== leak.height) throw new Error("leak frames must be at the sidecar's size");
  const mapped: { i: number; slot: number }[] = [];
  for (let i = 0; i < leak.times.length; i++) {
    const t = mapTime(map, leak.times[i]!);
    if (Number.isNaN(t)) continue;
    let lo = 0,
      hi = sidecar.slotStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (sidecar.slotStarts[mid]! <= t) lo = mid;
      else hi = mid - 1;
    }
    if (t >= sidecar.slotStarts[lo]! && t < sidecar.slotStarts[lo]! + sidecar.slotDurations[lo]!) mapped.push({ i, slot: lo });
  }
  const pairs: ImagePair[] = [];
  const per = Math.ceil(mapped.length / groups);
  for (let g = 0; g * per < mapped.length; g++) {
    const part = mapped.slice(g * per, (g + 1) * per);
    const leakMean = new Float64Array(n);
    const origMean = new Float64Array(n);
    let w = 0;
    for (const { i, slot } of part) {
      const c = leak.counts ? leak.counts[i]! : 1;
      for (let p = 0; p < n; p++) {
        leakMean[p]! += (leak.frames[i * n + p]! / 256) * c;
        origMean[p]! += sidecar.mean[slot * n + p]! * c;
      }
      w += c;
    }
    if (w === 0) continue;
    pairs.push({ leak: Float32Array.from(leakMean, (v) => v / w), original: Float32Array.from(origMean, (v) => v / w) });
  }
  return pairs;
}

/** The warp is (about) the identity and (nearly) every pixel is live: the leak's own signature already is the original's. */
function isPlainFrame(w: Warp, live?: Uint8Array): boolean {
  const crop = Math.abs(w.h[1]!) < 1e-3 && Math.abs(w.h[3]!) < 1e-3 && Math.abs(w.h[6]!) < 1e-3 && Math.abs(w.h[7]!) < 1e-3 && Math.abs(w.k1) < 1e-3;
  return crop && Math.abs(w.h[0]! - 1) < 0.02 && Math.abs(w.h[4]! - 1) < 0.02 && (!live || live.reduce((a, v) => a + v, 0) >= 0.97 * live.length);
}

/**
 * Aligns, registers and reads a leak against its title. `clock` (ms) times the steps (`timings`); core reads no clock
 * of its own, so without one every step takes 0 s.
 */
export function analyseLeak(
  sidecar: Sidecar,
  leak: LeakFrames,
  frameTimes: Float64Array,
  frameSignature: Float32Array,
  book: PackedCodebook,
  clock: () => number = () => 0,
): LeakAnalysis {
  let alignStats: AlignStats = { windows: 0, windowsAligned: 0, votes: 0, stretchesSearched: 0, stretchesFound: 0 };
  let mark = clock();
  const lap = () => {
    const now = clock();
    const seconds = (now - mark) / 1000;
    mark = now;
    return seconds;
  };
  let map: Alignment = alignPieces(
    { originalTimes: sidecar.signatureTimes, originalSig: sidecar.signature, leakTimes: frameTimes, leakSig: frameSignature },
    alignStats,
  );
  const align = lap();
  const aspect = leak.width / leak.height;
  let warp: Warp = cropWarp({ x0: 0, y0: 0, w: 1, h: 1 }, aspect);
  let registration = { cropScore: 0, score: 0, pairs: 0, liveFraction: 1 };
  let live: Uint8Array | undefined;
  const pairs = map.pieces.length ? meanPairs(sidecar, leak, map) : [];
  if (pairs.length) {
    // The best crop of the overall mean picture first (a wide, cheap search), then the projective + lens refinement.
    const all = { original: new Float32Array(pairs[0]!.original.length), leak: new Float32Array(pairs[0]!.leak.length) };
    for (const p of pairs)
      for (let q = 0; q < all.leak.length; q++) {
        all.original[q]! += p.original[q]! / pairs.length;
        all.leak[q]! += p.leak[q]! / pairs.length;
      }
    const crop = registerGeometry(all.original, all.leak, leak.width, leak.height);
    const fine = registerWarp(pairs, leak.width, leak.height, cropWarp(crop, aspect));
    warp = fine.warp;
    live = fine.live;
    registration = { cropScore: fine.startScore, score: fine.score, pairs: pairs.length, liveFraction: live.reduce((a, v) => a + v, 0) / live.length };
  }
  const register = lap();
  // Alignment again, from the registered leak's signature, when the leak is warped: the map whose slot pictures fit
  // the original's better is kept (a judgement on the pictures alone, the same for every payload). A camcorder copy's
  // own signature can split the leak into pieces a fraction of a second off, enough to misread much of each 2-s slot.
  let realigned = false;
  let candidates = map.candidates;
  if (pairs.length && !isPlainFrame(warp, live)) {
    const sig = registeredSignature(leak, frameTimes.length, warp, live);
    const stats2: AlignStats = { windows: 0, windowsAligned: 0, votes: 0, stretchesSearched: 0, stretchesFound: 0 };
    const map2 = sig
      ? alignPieces({ originalTimes: sidecar.signatureTimes, originalSig: sidecar.signature, leakTimes: frameTimes, leakSig: sig }, stats2)
      : undefined;
    if (map2?.pieces.length && !sameMap(map, map2)) {
      const before = slotContentResidual(sidecar, leak, map, warp, live);
      const after = slotContentResidual(sidecar, leak, map2, warp, live);
      const other = map;
      if (after.slots >= 0.9 * before.slots && after.residual < before.residual) {
        map = map2;
        alignStats = stats2;
        realigned = true;
      }
      // On repeating content the two signatures can rank the places differently: the payload hears both.
      candidates = [...map.candidates, ...(realigned ? other : map2).candidates]
        .filter((c, i, all) => all.findIndex((d) => sameMap(d.map, c.map)) === i)
        .slice(0, MAX_CANDIDATES);
    }
  }
  const realign = lap();
  let read = 0;
  const chosen = readCandidates(sidecar, leak, candidates.length ? candidates : [{ map, score: 0 }], warp, live, book, () => {
    read = lap();
  });
  const { readings, verdict } = chosen;
  const score = lap();
  let alignedSeconds = 0;
  for (const p of chosen.map.pieces) {
    const end = Math.min(p.leakEnd, leak.times.length ? leak.times[leak.times.length - 1]! : 0);
    if (end > p.leakStart) alignedSeconds += end - p.leakStart;
  }
  return {
    map: chosen.map,
    candidates: chosen.candidates,
    alignStats,
    warp,
    box: warpBox(warp, aspect),
    registration,
    readings,
    verdict,
    alignedSeconds,
    realigned,
    timings: { align, register, realign, read, score },
  };
}
