// The forensic-long bench's in-process look at alignment: whether the title's content can be aligned at all (how many
// of its 10-Hz bins carry a fingerprint, how they spread over the 65,536 hashes, whether stretches of its own signature
// align back to their place), and how alignPieces' cost grows with the original's length.
import { performance } from 'node:perf_hooks';
import { ALIGN_RATE, type AlignStats, alignPieces, binFeatures, fingerprints } from '../src/core/forensic/align.js';
import type { Sidecar } from '../src/core/forensic/detect-inputs.js';
import { SIDECAR_HEIGHT, SIDECAR_WIDTH } from '../src/core/forensic/variant-plan.js';
import { readLeak } from '../src/engine/forensic/leak-reader.js';
import type { Leak } from './forensic-long-copies.js';

/** How the title's fingerprints spread, and the self-check's result. */
export interface ContentCheck {
  bins: number;
  informative: number;
  distinct: number;
  /** Bucket sizes, largest first. */
  bucketSizes: number[];
  /** Lookups skip buckets larger than this. */
  skipAbove: number;
  selfOk: number;
  selfChecks: number;
  selfSeconds: number;
}

/** alignPieces on the shortest leak against the first `originalMin` minutes of the original: best of 3. */
export interface VsOriginal {
  originalMin: number;
  bins: number;
  alignS: number;
  votes: number;
  windows: number;
  aligned: number;
  pieces: number;
  offset: number;
}

/** The first frame of the signature at or after `t` seconds. */
function frameAt(times: Float64Array, t: number): number {
  let lo = 0,
    hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The title's fingerprints, and 24 stretches of 30 s of its own signature aligned back (nothing may repeat). */
export function contentCheck(sidecar: Sidecar): ContentCheck {
  const times = sidecar.signatureTimes;
  const oEnd = times[times.length - 1]!;
  const oBins = Math.ceil(oEnd * ALIGN_RATE) + 1;
  const prints = fingerprints(binFeatures(times, sidecar.signature, oBins));
  const buckets = new Map<number, number>();
  let informative = 0;
  for (const h of prints.hash)
    if (h >= 0) {
      informative++;
      buckets.set(h, (buckets.get(h) ?? 0) + 1);
    }
  const selfChecks = 24,
    selfSeconds = 30;
  let selfOk = 0;
  for (let i = 0; i < selfChecks; i++) {
    const at = Math.round(((i + 0.5) / selfChecks) * (oEnd - selfSeconds));
    const [f0, f1] = [frameAt(times, at), frameAt(times, at + selfSeconds)];
    const leakTimes = Float64Array.from(times.subarray(f0, f1), (t) => t - at);
    const map = alignPieces({ originalTimes: times, originalSig: sidecar.signature, leakTimes, leakSig: sidecar.signature.subarray(f0 * 16, f1 * 16) });
    if (map.pieces.length === 1 && Math.abs(map.pieces[0]!.offset + ((map.pieces[0]!.scale - 1) * selfSeconds) / 2 - at) < 0.5) selfOk++;
  }
  return {
    bins: prints.hash.length,
    informative,
    distinct: buckets.size,
    bucketSizes: [...buckets.values()].sort((a, b) => b - a),
    skipAbove: Math.max(40, Math.ceil((informative / 65536) * 30)),
    selfOk,
    selfChecks,
    selfSeconds,
  };
}

/**
 * The shortest scaling leak's own frames (decoded by the real leak reader), aligned against the first 15, 30, 60 and
 * 120 minutes of the original (those that hold the excerpt) and the whole title.
 */
export async function alignmentVsOriginal(ffmpeg: string, fps: number, minutes: number, sidecar: Sidecar, small: Leak): Promise<VsOriginal[]> {
  const decoded = await readLeak({
    ffmpeg,
    file: small.file,
    fps: { num: fps, den: 1 },
    durationSeconds: small.minutes * 60,
    width: SIDECAR_WIDTH,
    height: SIDECAR_HEIGHT,
    budgetBytes: 64 * 1024 * 1024,
  });
  const origLengths = [...new Set([15, 30, 60, 120, minutes].filter((m) => m <= minutes && m * 60 >= small.start + small.minutes * 60 + 30))].sort(
    (a, b) => a - b,
  );
  const vsOriginal: VsOriginal[] = [];
  for (const om of origLengths) {
    const f1 = frameAt(sidecar.signatureTimes, om * 60);
    const input = {
      originalTimes: sidecar.signatureTimes.subarray(0, f1),
      originalSig: sidecar.signature.subarray(0, f1 * 16),
      leakTimes: decoded.times,
      leakSig: decoded.signature,
    };
    let best = Infinity;
    const stats: AlignStats = { windows: 0, windowsAligned: 0, votes: 0 };
    let pieces = 0,
      offset = NaN;
    for (let rep = 0; rep < 3; rep++) {
      const t0 = performance.now();
      const map = alignPieces(input, stats);
      best = Math.min(best, (performance.now() - t0) / 1000);
      pieces = map.pieces.length;
      offset = map.pieces[0]?.offset ?? NaN;
    }
    const { votes, windows, windowsAligned: aligned } = stats;
    vsOriginal.push({ originalMin: om, bins: Math.ceil(om * 60 * ALIGN_RATE), alignS: best, votes, windows, aligned, pieces, offset });
  }
  return vsOriginal;
}
