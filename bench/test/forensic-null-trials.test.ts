// The forensic bench's verdicts on its leaks and null trials: a leak's verdict against its makers, a payload's rank,
// the tally of null verdicts, and the noise level drawn from the unmarked copies.
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/core/forensic/score.js';
import { leakVerdict, rankOf } from '../forensic-detect.js';
import { noTrials, readingRms, tally } from '../forensic-null-trials.js';

const verdict = (accused: number[], z: number, collusion = false): Verdict =>
  ({ accused, best: { payload: 1, z }, collusion: { suspected: collusion, payloads: [], z: 0 } }) as unknown as Verdict;

describe('forensic bench verdicts', () => {
  it('calls a leak correct only when its makers and nobody else are accused', () => {
    expect(leakVerdict([7], [7])).toBe('correct');
    expect(leakVerdict([7], [])).toBe('missed');
    expect(leakVerdict([7], [7, 9])).toBe('wrong');
    expect(leakVerdict([7, 8], [7])).toBe('missed');
    expect(leakVerdict([7, 8], [8, 7])).toBe('correct');
    expect(leakVerdict([], [])).toBe('clean');
    expect(leakVerdict([], [3])).toBe('FALSE ACCUSATION');
  });

  it('ranks a payload among all scores, 1 for the highest', () => {
    const scores = Float64Array.from([0.1, 3, -2, 3.5]);
    expect([0, 1, 2, 3].map((u) => rankOf(scores, u))).toEqual([3, 2, 4, 1]);
  });

  it('tallies null verdicts: accusations, collusion flags, the highest best z and those over 5', () => {
    const s = noTrials();
    for (const v of [verdict([], 2.1), verdict([4], 7.2, true), verdict([], 5)]) tally(s, v);
    expect(s).toEqual({ trials: 3, accusations: 1, maxZ: 7.2, over5: 2, collusionFlags: 1, seconds: 0 });
  });

  it('draws noise at the unmarked readings level, 0.3 when there are none', () => {
    const at = (value: number) => ({ segment: 0, value, frames: 60 });
    expect(readingRms([[at(3), at(-4)], [at(0)]])).toBeCloseTo(Math.sqrt(25 / 3));
    expect(readingRms([])).toBe(0.3);
  });
});
