// The one solver of small dense linear systems: the normal equations of the detector's least-squares fits.

/**
 * A pivot smaller than this counts as zero: the system is singular. An absolute bound suits the callers, whose entries
 * are sums over pixels or readings; refineWarp's damping (1e-9 on the diagonal) stays well above it.
 */
const SINGULAR_PIVOT = 1e-12;

/**
 * Solves A x = b (n x n) by Gauss-Jordan elimination with partial pivoting: each column's pivot is its largest entry
 * among the rows not yet used, so a small diagonal entry is never divided by. Undefined when singular; A and b are
 * left unchanged.
 */
export function solveLinear(A: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    if (Math.abs(m[pivot]![c]!) < SINGULAR_PIVOT) return undefined;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}
