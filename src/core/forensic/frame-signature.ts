// Frame signatures (4x4 cell means), by which both alignments compare the leak's timeline with the original's, and
// the legacy single-offset alignment of a leak.
import type { Sidecar } from './detect-inputs.js';

export const SIGNATURE_CELLS = 16;
const SIGNATURE_RATE = 10;

/** 4x4 cell means of one frame (the alignment signature). */
export function frameSignature(frame: Float32Array | Uint16Array, width: number, height: number, out: Float32Array, at = 0): void {
  const sums = new Float64Array(SIGNATURE_CELLS);
  const counts = new Float64Array(SIGNATURE_CELLS);
  for (let y = 0; y < height; y++) {
    const cy = Math.min(3, Math.floor((y * 4) / height));
    for (let x = 0; x < width; x++) {
      const c = cy * 4 + Math.min(3, Math.floor((x * 4) / width));
      sums[c]! += frame[y * width + x]!;
      counts[c]!++;
    }
  }
  for (let c = 0; c < SIGNATURE_CELLS; c++) out[at + c] = sums[c]! / counts[c]!;
}

/** Averages per-frame signatures into bins of 1/SIGNATURE_RATE s; empty bins are NaN. */
function binSignature(times: Float64Array, sig: Float32Array, origin: number, bins: number): Float64Array {
  const out = new Float64Array(bins * SIGNATURE_CELLS);
  const counts = new Float64Array(bins);
  for (let i = 0; i < times.length; i++) {
    const b = Math.floor((times[i]! - origin) * SIGNATURE_RATE);
    if (b < 0 || b >= bins) continue;
    counts[b]!++;
    for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c]! += sig[i * SIGNATURE_CELLS + c]!;
  }
  for (let b = 0; b < bins; b++)
    for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c] = counts[b] ? out[b * SIGNATURE_CELLS + c]! / counts[b]! : NaN;
  return out;
}

/** Temporal differences of each cell: robust to brightness/contrast changes and to the leak's own gain. */
function temporalDiff(binned: Float64Array, bins: number): Float64Array {
  const out = new Float64Array(bins * SIGNATURE_CELLS).fill(NaN);
  for (let b = 1; b < bins; b++) {
    for (let c = 0; c < SIGNATURE_CELLS; c++) out[b * SIGNATURE_CELLS + c] = binned[b * SIGNATURE_CELLS + c]! - binned[(b - 1) * SIGNATURE_CELLS + c]!;
  }
  return out;
}

export interface SignatureOffset {
  /** original time = leak time + offset */
  offset: number;
  /** Pearson correlation of the signatures at that offset. */
  score: number;
  overlapSeconds: number;
}

/** Finds where the leak sits on the original timeline by correlating signature changes at every 0.1 s lag. */
export function alignLeak(sidecar: Pick<Sidecar, 'signatureTimes' | 'signature'>, leakTimes: Float64Array, leakSig: Float32Array): SignatureOffset {
  const origEnd = sidecar.signatureTimes[sidecar.signatureTimes.length - 1] ?? 0;
  const leakEnd = leakTimes[leakTimes.length - 1] ?? 0;
  const oBins = Math.ceil(origEnd * SIGNATURE_RATE) + 1;
  const lBins = Math.ceil(leakEnd * SIGNATURE_RATE) + 1;
  const o = temporalDiff(binSignature(sidecar.signatureTimes, sidecar.signature, 0, oBins), oBins);
  const l = temporalDiff(binSignature(leakTimes, leakSig, 0, lBins), lBins);
  let best: SignatureOffset = { offset: 0, score: -Infinity, overlapSeconds: 0 };
  const minOverlap = Math.min(lBins, 10 * SIGNATURE_RATE);
  for (let lag = -(lBins - minOverlap); lag <= oBins - minOverlap; lag++) {
    let sx = 0,
      sy = 0,
      sxx = 0,
      syy = 0,
      sxy = 0,
      n = 0;
    const from = Math.max(0, -lag);
    const to = Math.min(lBins, oBins - lag);
    for (let b = from; b < to; b++) {
      const lb = b * SIGNATURE_CELLS;
      const ob = (b + lag) * SIGNATURE_CELLS;
      for (let c = 0; c < SIGNATURE_CELLS; c++) {
        const x = l[lb + c]!;
        const y = o[ob + c]!;
        if (Number.isNaN(x) || Number.isNaN(y)) continue;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
        n++;
      }
    }
    if (n < SIGNATURE_CELLS * 20) continue;
    const cov = sxy - (sx * sy) / n;
    const den = Math.sqrt((sxx - (sx * sx) / n) * (syy - (sy * sy) / n));
    const r = den > 0 ? cov / den : 0;
    if (r > best.score) best = { offset: lag / SIGNATURE_RATE, score: r, overlapSeconds: (to - from) / SIGNATURE_RATE };
  }
  return best;
}
