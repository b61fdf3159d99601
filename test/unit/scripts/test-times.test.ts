// The suite's timing summary: projects by their wall time, files by their own time, read from vitest's JSON report.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script with no type declarations
import { timingLines } from '../../../scripts/test-times.mjs';

const root = '/repo';
const file = (name: string, start: number, ms: number) => ({ name: `${root}/${name}`, startTime: start, endTime: start + ms });

describe('timingLines', () => {
  it('gives each project its first-start-to-last-end wall time and the sum of its files, longest wall first', () => {
    const report = {
      testResults: [
        file('test/unit/a.test.ts', 0, 1_000),
        file('test/unit/b.test.ts', 500, 1_000),
        file('bench/test/c.test.ts', 1_000, 500),
        file('test/integration/c.test.ts', 0, 10_000),
        file('test/integration/d.test.ts', 12_000, 3_000),
      ],
    };
    const lines: string[] = timingLines(report, root);
    expect(lines[0]).toMatch(/^time per test project/);
    expect(lines[1]).toMatch(/^ {2}integration +15\.0 s wall; +13\.0 s in 2 files$/);
    expect(lines[2]).toMatch(/^ {2}unit +1\.5 s wall; +2\.5 s in 3 files$/);
    expect(lines[3]).toBe('slowest 5 test files:');
    expect(lines.slice(4).map((l) => l.trim())).toEqual([
      '10.0 s  test/integration/c.test.ts',
      '3.0 s  test/integration/d.test.ts',
      '1.0 s  test/unit/a.test.ts',
      '1.0 s  test/unit/b.test.ts',
      '0.5 s  bench/test/c.test.ts',
    ]);
  });

  it('lists only the slowest ten files, and nothing for a report without timed files', () => {
    const many = Array.from({ length: 14 }, (_, i) => file(`test/e2e/f${i}.test.ts`, 0, (i + 1) * 1_000));
    const lines: string[] = timingLines({ testResults: many }, root);
    expect(lines.filter((l) => l.includes('test/e2e/f'))).toHaveLength(10);
    expect(lines.at(-1)).toMatch(/5\.0 s {2}test\/e2e\/f4\.test\.ts$/);
    expect(timingLines({ testResults: [] }, root)).toEqual([]);
    expect(timingLines({}, root)).toEqual([]);
  });
});
