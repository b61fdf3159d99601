// The hard leaks' report: which parts it prints, each part's verdict against its target, and F7's innocents.
import { describe, expect, it } from 'vitest';
import { type HardLeakResults, hardLeaksReport, type NamedOutcome, type Outcome } from '../forensic-hard-leaks-report.js';

const outcome = (truth: number[], accused: number[], z: number): Outcome => ({
  truth,
  accused,
  trueZ: truth.map(() => z),
  trueRank: truth.map(() => 1),
  segmentsRead: 59,
  detectS: 2,
  readings: [],
  verdict: accused.length && accused.every((u) => truth.includes(u)) ? 'correct' : 'missed',
  bestZ: z,
});
const leak = (name: string, z: number, accused = [7]): NamedOutcome => ({ name, o: outcome([7], accused, z) });
const noTrials = { trials: 0, accusations: 0, maxZ: -Infinity, minEstimate: 1, bookTrials: 0, books: 0, setCount: 0, seconds: 0 };

function results(over: Partial<HardLeakResults>): HardLeakResults {
  return { want: () => false, firstViewer: 7, trio: [7, 8, 9], f2: [], f9: [], f9s: [], f10: [], f7: undefined, f6: noTrials, ...over };
}

describe('hard leaks report', () => {
  it("prints only the parts that ran, F2' met only when all three excerpts name the viewer at the threshold", () => {
    const r = hardLeaksReport(results({ want: (p) => p === 'f2b', f2: [leak('a', 7.1), leak('b', 6.8), leak('c', 6.6)] }));
    const text = r.lines.join('\n');
    expect(text).toContain("-- F2': 2-minute excerpts");
    expect(text).not.toContain('F9');
    expect(text).toMatch(/F2' MET: 3\/3 named/);
    expect(r.summary).toEqual([["F2' 2-min leaks", 'MET', 'z 7.10, 6.80, 6.60']]);
    // Named, but under the threshold of 6.5: not met.
    const weak = hardLeaksReport(results({ want: (p) => p === 'f2b', f2: [leak('a', 7.1), leak('b', 6.2), leak('c', 6.6)] }));
    expect(weak.summary[0]![1]).toBe('MISSED');
  });

  it("names F7's innocents and the colluders it did not find", () => {
    const f7 = outcome([7, 8, 9], [7, 12], 4);
    const r = hardLeaksReport(results({ want: (p) => p === 'f7b', f7 }));
    const text = r.lines.join('\n');
    expect(text).toContain('innocents named: 1; not named: 8, 9');
    expect(text).toContain("F7' MISSED");
    expect(r.summary).toEqual([["F7' three colluders", 'MISSED', 'accused 7, 12, innocents 1']]);
    expect(r.json).toMatchObject({ f7: { accused: [7, 12] }, f6: { trials: 0 } });
  });

  it("meets F6' with 10,000 null trials and no accusation, not fewer", () => {
    const f6 = { ...noTrials, trials: 10000, bookTrials: 4000, books: 40, setCount: 25, maxZ: 4.1, minEstimate: 0.2 };
    expect(hardLeaksReport(results({ want: (p) => p === 'f6b', f6 })).summary).toEqual([["F6' null trials", 'MET', '0/10000']]);
    const few = hardLeaksReport(results({ want: (p) => p === 'f6b', f6: { ...f6, trials: 9999 } }));
    expect(few.summary[0]![1]).toBe('MISSED');
    expect(few.lines.join('\n')).toContain('(chance level: nothing to accuse)');
  });
});
