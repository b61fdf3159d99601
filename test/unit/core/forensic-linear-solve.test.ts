// The linear solver the forensic fits share: known systems, singular ones (exactly and within rounding), systems that
// need their rows swapped, and the normal equations of a least-squares fit like the ones the detector solves.
import { describe, expect, it } from 'vitest';
import { solveLinear } from '../../../src/core/forensic/linear-solve.js';

/** A x, for checking a solution by its residual. */
const times = (A: number[][], x: number[]) => A.map((row) => row.reduce((s, a, j) => s + a * x[j]!, 0));

describe('solveLinear', () => {
  it('solves known systems', () => {
    expect(solveLinear([[2]], [3])).toEqual([1.5]);
    const x2 = solveLinear(
      [
        [2, 1],
        [1, 3],
      ],
      [3, 5],
    )!;
    expect(x2[0]).toBeCloseTo(0.8, 12);
    expect(x2[1]).toBeCloseTo(1.4, 12);
    const x3 = solveLinear(
      [
        [4, -2, 1],
        [-2, 4, -2],
        [1, -2, 4],
      ],
      [11, -16, 17],
    )!;
    expect(x3.map((v) => Number(v.toFixed(12)))).toEqual([1, -2, 3]);
  });

  it('leaves A and b as they were', () => {
    const A = [
      [0, 1],
      [1, 0],
    ];
    const b = [2, 3];
    solveLinear(A, b);
    expect(A).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(b).toEqual([2, 3]);
  });

  it('returns undefined for a singular system', () => {
    expect(
      solveLinear(
        [
          [1, 2],
          [2, 4],
        ],
        [3, 6],
      ),
    ).toBeUndefined();
    expect(
      solveLinear(
        [
          [0, 0],
          [0, 0],
        ],
        [0, 0],
      ),
    ).toBeUndefined();
    // Two equal codewords in the colluder projection: a Gram matrix of rank 1.
    expect(
      solveLinear(
        [
          [150, 150],
          [150, 150],
        ],
        [12, 12],
      ),
    ).toBeUndefined();
    // A third column that is the sum of the first two: its pivot is left at rounding size.
    expect(
      solveLinear(
        [
          [1, 0.1, 1.1],
          [0.2, 1, 1.2],
          [0.3, 0.7, 1],
        ],
        [1, 2, 3],
      ),
    ).toBeUndefined();
  });

  it('treats a pivot within rounding of zero as singular', () => {
    expect(
      solveLinear(
        [
          [1, 1],
          [1, 1 + 1e-13],
        ],
        [1, 2],
      ),
    ).toBeUndefined();
    expect(
      solveLinear(
        [
          [1, 1],
          [1, 1 + 1e-9],
        ],
        [1, 2],
      ),
    ).toBeDefined();
  });

  it('swaps rows when a diagonal entry is zero', () => {
    expect(
      solveLinear(
        [
          [0, 1],
          [1, 0],
        ],
        [2, 3],
      ),
    ).toEqual([3, 2]);
    const x = solveLinear(
      [
        [0, 2, 1],
        [1, 0, 0],
        [0, 0, 3],
      ],
      [5, 7, 3],
    )!;
    expect(x).toEqual([7, 2, 1]);
  });

  it('pivots on the largest entry, so a tiny diagonal entry does not wreck the answer', () => {
    // Eliminating with 1e-20 as the pivot would give x0 = 0; the exact answer is x0 = 1 / (1 - 1e-20), x1 = 1 - 1e-20.
    const x = solveLinear(
      [
        [1e-20, 1],
        [1, 1],
      ],
      [1, 2],
    )!;
    expect(x[0]).toBeCloseTo(1, 12);
    expect(x[1]).toBeCloseTo(1, 12);
  });

  it('solves the normal equations of a quadratic least-squares fit', () => {
    // y = 2 - 0.5 x + 0.25 x^2 sampled exactly: A = sum of row row^T over rows [1, x, x^2], b = sum of row y.
    const A = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    const b = [0, 0, 0];
    for (let k = -20; k <= 20; k++) {
      const x = k / 10;
      const row = [1, x, x * x];
      const y = 2 - 0.5 * x + 0.25 * x * x;
      for (let i = 0; i < 3; i++) {
        b[i]! += row[i]! * y;
        for (let j = 0; j < 3; j++) A[i]![j]! += row[i]! * row[j]!;
      }
    }
    const c = solveLinear(A, b)!;
    expect(c[0]).toBeCloseTo(2, 10);
    expect(c[1]).toBeCloseTo(-0.5, 10);
    expect(c[2]).toBeCloseTo(0.25, 10);
  });

  it('solves a 9 x 9 system (the size of the warp refinement) to a small residual', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed / 2147483647) * 2 - 1;
    };
    const A = Array.from({ length: 9 }, () => Array.from({ length: 9 }, rnd));
    const truth = Array.from({ length: 9 }, rnd);
    const x = solveLinear(A, times(A, truth))!;
    for (const [i, v] of x.entries()) expect(v).toBeCloseTo(truth[i]!, 9);
  });
});
