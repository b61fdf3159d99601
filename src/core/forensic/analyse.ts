// The detector's pipeline on decoded data, pure: align the leak's pieces to the original, register its geometry from
// mean pictures of the aligned stretches, read one soft bit per code slot, and judge every payload.
import { alignPieces, mapTime, pieceAt, type AlignStats, type TimeMap } from './align.js';
import { registerGeometry, readSlots, type LeakFrames, type Sidecar } from './detect-math.js';
import { cropWarp, registerWarp, warpBox, type ImagePair, type Warp } from './geometry.js';
import type { PackedCodebook } from './keyed-bits.js';
import { scorePayloads, type SegmentReading, type Verdict } from './score.js';

export interface LeakAnalysis {
  map: TimeMap;
  alignStats: AlignStats;
  warp: Warp;
  box: { x0: number; y0: number; w: number; h: number };
  registration: { cropScore: number; score: number; pairs: number };
  readings: SegmentReading[];
  verdict: Verdict;
  /** Seconds of the leak mapped onto the original. */
  alignedSeconds: number;
  /** Seconds spent in each step: align, register, read, score (what a long leak's cost is made of). */
  timings: { align: number; register: number; read: number; score: number };
}

/** Up to `groups` pairs (original mean, leak mean) over consecutive aligned stretches of the leak. */
export function meanPairs(sidecar: Sidecar, leak: LeakFrames, map: TimeMap, groups = 6): ImagePair[] {
  const n = leak.width * leak.height;
  if (sidecar.width !== leak.width || sidecar.height !== leak.height) throw new Error('leak frames must be at the sidecar\'s size');
  const mapped: { i: number; slot: number }[] = [];
  for (let i = 0; i < leak.times.length; i++) {
    const t = mapTime(map, leak.times[i]!);
    if (Number.isNaN(t)) continue;
    let lo = 0, hi = sidecar.slotStarts.length - 1;
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

export function analyseLeak(sidecar: Sidecar, leak: LeakFrames, frameTimes: Float64Array, frameSignature: Float32Array, book: PackedCodebook): LeakAnalysis {
  const alignStats: AlignStats = { windows: 0, windowsAligned: 0, votes: 0 };
  let mark = performance.now();
  const lap = () => {
    const now = performance.now();
    const seconds = (now - mark) / 1000;
    mark = now;
    return seconds;
  };
  const map = alignPieces({ originalTimes: sidecar.signatureTimes, originalSig: sidecar.signature, leakTimes: frameTimes, leakSig: frameSignature }, alignStats);
  const align = lap();
  const aspect = leak.width / leak.height;
  let warp: Warp = cropWarp({ x0: 0, y0: 0, w: 1, h: 1 }, aspect);
  let registration = { cropScore: 0, score: 0, pairs: 0 };
  const pairs = map.pieces.length ? meanPairs(sidecar, leak, map) : [];
  if (pairs.length) {
    // The best crop of the overall mean picture first (a wide, cheap search), then the projective + lens refinement.
    const all = { original: new Float32Array(pairs[0]!.original.length), leak: new Float32Array(pairs[0]!.leak.length) };
    for (const p of pairs) for (let q = 0; q < all.leak.length; q++) {
      all.original[q]! += p.original[q]! / pairs.length;
      all.leak[q]! += p.leak[q]! / pairs.length;
    }
    const crop = registerGeometry(all.original, all.leak, leak.width, leak.height);
    const fine = registerWarp(pairs, leak.width, leak.height, cropWarp(crop, aspect));
    warp = fine.warp;
    registration = { cropScore: fine.startScore, score: fine.score, pairs: pairs.length };
  }
  const register = lap();
  const readings = map.pieces.length ? readSlots(sidecar, leak, map, warp) : [];
  const read = lap();
  const verdict = scorePayloads(readings, book);
  const score = lap();
  let alignedSeconds = 0;
  for (const p of map.pieces) {
    const end = Math.min(p.leakEnd, leak.times.length ? leak.times[leak.times.length - 1]! : 0);
    if (end > p.leakStart) alignedSeconds += end - p.leakStart;
  }
  void pieceAt;
  return { map, alignStats, warp, box: warpBox(warp, aspect), registration, readings, verdict, alignedSeconds, timings: { align, register, read, score } };
}
