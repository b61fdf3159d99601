// The forensic bench's hard leaks, as the report prints them: a table and a verdict line per part, the summary's rows
// and the JSON. Pure: the leaks are made and detected in bench/forensic-hard-leaks.ts.
import { type SegmentReading, Z_THRESHOLD } from '../src/core/forensic/score.js';
import type { DetectResult } from '../src/engine/forensic/detect.js';
import { fmt, table } from './lib/suite.js';

/** One leak's detection, as the forensic bench reads it (its own detect keeps the frames for ranks and readings). */
export interface Outcome {
  truth: number[];
  accused: number[];
  trueZ: number[];
  trueRank: number[];
  segmentsRead: number;
  detectS: number;
  readings: SegmentReading[];
  verdict: string;
  bestZ: number;
}

export type HardLeakPart = 'f2b' | 'f9' | 'f9s' | 'f10' | 'f7b' | 'f6b';

/** One detected leak of a part, as its table shows it. */
export interface NamedOutcome {
  name: string;
  o: Outcome;
}

/** One copy of the camcorder's step-by-step table: its soft mark (mean of reading x true bit) and how it spreads. */
export interface StepOutcome extends NamedOutcome {
  soft: number;
  spread: number;
  errors: number;
  live: number;
  fit: number;
}

/** F6' null trials: how many verdicts, of which kind, and the most suspicious of them. */
export interface NullTrials {
  trials: number;
  accusations: number;
  maxZ: number;
  minEstimate: number;
  bookTrials: number;
  books: number;
  setCount: number;
  seconds: number;
}

/** The parts' outcomes: an empty list (or no F7') for a part that did not run. */
export interface HardLeakResults {
  want: (part: HardLeakPart) => boolean;
  firstViewer: number;
  /** F7's three colluders' payloads. */
  trio: number[];
  f2: NamedOutcome[];
  f9: NamedOutcome[];
  f9s: StepOutcome[];
  f10: NamedOutcome[];
  f7: (Outcome & { raw?: DetectResult }) | undefined;
  f6: NullTrials;
}

const ok = (b: boolean) => (b ? 'MET' : 'MISSED');
const header = ['leak', 'slots read', 'z (true)', 'rank', 'accused', 'verdict', 'detect s'];
const rows = (list: NamedOutcome[]) =>
  list.map(({ name, o: x }) => [
    name,
    String(x.segmentsRead),
    x.trueZ.map((z) => fmt(z)).join(' / '),
    x.trueRank.join(' / '),
    x.accused.join(', ') || 'nobody',
    x.verdict,
    fmt(x.detectS, 1),
  ]);
const named = (list: NamedOutcome[]) => list.filter((x) => x.o.verdict === 'correct').length;
const zs = (list: NamedOutcome[]) => list.map((x) => fmt(x.o.trueZ[0]!)).join(', ');

/** Each part's target: met or not. */
function verdicts(r: HardLeakResults) {
  const { f2, f9, f10, f7, f6, trio } = r;
  const f7Innocent = f7 ? f7.accused.filter((u) => !trio.includes(u)) : [];
  const f7All = !!f7 && trio.every((u) => f7.accused.includes(u));
  return {
    f2Ok: f2.every((x) => x.o.verdict === 'correct' && x.o.trueZ[0]! >= Z_THRESHOLD),
    f9Ok: f9.every((x) => x.o.verdict === 'correct'),
    f10Ok: f10.every((x) => x.o.verdict === 'correct'),
    f7Innocent,
    f7All,
    f7Ok: !!f7 && f7Innocent.length === 0 && (f7All || f7.accused.length > 0),
    f6Ok: f6.accusations === 0 && f6.trials >= 10000,
  };
}

/** F7's lines: who was accused, the peeling's stages, and whether an innocent was named. */
function colluderLines(r: HardLeakResults, v: ReturnType<typeof verdicts>): string[] {
  const f7 = r.f7;
  if (!f7) return [];
  const stages = f7.raw?.stages ?? [];
  return [
    '',
    "-- F7': three viewers averaged (CRF 23) --",
    `colluders ${r.trio.join(', ')}: accused ${f7.accused.join(', ') || 'nobody'}; their z in the first stage ${f7.trueZ.map((z) => fmt(z)).join(' / ')} (ranks ${f7.trueRank.join(' / ')}); ${f7.segmentsRead} slots read`,
    `stages: ${stages.map((s) => `${s.payload} z ${fmt(s.z)} ${s.accused ? 'accused' : 'not accused'} (P false ~ ${s.falseAccusationEstimate.toExponential(1)})`).join('; ')}`,
    `innocents named: ${v.f7Innocent.length}; ${
      v.f7All
        ? 'all three named'
        : `not named: ${r.trio.filter((u) => !f7.accused.includes(u)).join(', ')} (each keeps 1/3 of the mark: z ~ 0.58 sqrt(slots) before peeling)`
    }`,
    `F7' ${ok(v.f7Ok && v.f7All)}${v.f7Ok && !v.f7All ? ' (partly: no innocent named, not all three found)' : ''}`,
  ];
}

/** The report's lines, part by part, for the parts that ran. */
function reportLines(r: HardLeakResults, v: ReturnType<typeof verdicts>): string[] {
  const { f2, f9, f9s, f10, f6 } = r;
  const part = <T>(p: HardLeakPart, items: T[]): T[] => (r.want(p) ? items : []);
  return [
    ...part('f2b', [
      '',
      "-- F2': 2-minute excerpts (CRF 30 + 0.5x) --",
      table(header, rows(f2)),
      `F2' ${ok(v.f2Ok)}: ${named(f2)}/3 named at z >= ${Z_THRESHOLD}; z ${zs(f2)} (2 code slots per 4-s segment: about 59 slots in 2 minutes, z ceiling ~ sqrt(59) = 7.7)`,
    ]),
    ...part('f9', [
      '',
      '-- F9: camcorder copies (perspective + rotation, barrel lens, blur 1.3, noise 8, gamma 1.2, 25 -> 30 fps, CRF 32) --',
      table(header, rows(f9)),
      `F9 ${ok(v.f9Ok)}: ${named(f9)}/${f9.length} named; z ${zs(f9)}`,
    ]),
    ...part('f9s', [
      '',
      `-- F9 by step: viewer ${r.firstViewer}'s 100-s excerpt (50 slots) through each camcorder step alone, the chain cut after each step, and all of it --`,
      table(
        ['copy', 'slots read', 'soft mark', 'spread', 'mark / spread', 'bits wrong', 'z (true)', 'frame live', 'registration r'],
        f9s.map((x) =>
          x.o.segmentsRead
            ? [x.name, String(x.o.segmentsRead), x.soft, x.spread, x.soft / x.spread, `${x.errors}/${x.o.readings.length}`, x.o.trueZ[0]!, x.live, x.fit]
            : [x.name, '0 (not aligned)', '-', '-', '-', '-', '-', '-', '-'],
        ),
      ),
      '(soft mark = mean over slots of reading x true bit: 1.0 is the mark as embedded; spread = its standard deviation; frame live = share of the leak frame that registration found to show the original)',
    ]),
    ...part('f10', ['', '-- F10: speed changes and re-edits --', table(header, rows(f10)), `F10 ${ok(v.f10Ok)}: ${named(f10)}/${f10.length} named`]),
    ...colluderLines(r, v),
    ...part('f6b', [
      '',
      "-- F6': null trials --",
      `${f6.bookTrials} verdicts of real readings (${f6.setCount} leaks: unmarked, other titles, marked) against ${f6.books} other titles' / other keys' codebooks, ${f6.trials - f6.bookTrials} noise readings against this title: ${f6.accusations} accusations in ${f6.trials} trials; max best z ${fmt(f6.maxZ)}; the most suspicious null reports P(an innocent payload scores this high by chance) = ${f6.minEstimate.toExponential(2)}${f6.minEstimate > 0.01 ? ' (chance level: nothing to accuse)' : ''}; ${fmt(f6.seconds, 1)} s`,
      `F6' ${ok(v.f6Ok)}`,
    ]),
  ];
}

/** The hard leaks' lines for the report, rows for the summary table, and the JSON. */
export function hardLeaksReport(r: HardLeakResults): { lines: string[]; summary: string[][]; json: unknown } {
  const { f2, f9, f9s, f10, f7, f6 } = r;
  const v = verdicts(r);
  const part = <T>(p: HardLeakPart, items: T[]): T[] => (r.want(p) ? items : []);
  const summary = [
    ...part('f2b', [["F2' 2-min leaks", ok(v.f2Ok), `z ${zs(f2)}`]]),
    ...part('f9', [['F9 camcorder', ok(v.f9Ok), `${named(f9)}/${f9.length}, z ${zs(f9)}`]]),
    ...part('f10', [['F10 speed / re-edit', ok(v.f10Ok), f10.map((x) => `${x.name.split(',')[0]}: z ${fmt(x.o.trueZ[0]!)}`).join('; ')]]),
    ...(f7 ? [["F7' three colluders", ok(v.f7Ok && v.f7All), `accused ${f7.accused.join(', ') || 'nobody'}, innocents ${v.f7Innocent.length}`]] : []),
    ...part('f6b', [["F6' null trials", ok(v.f6Ok), `${f6.accusations}/${f6.trials}`]]),
  ];
  const strip = (x: NamedOutcome) => ({
    name: x.name,
    z: x.o.trueZ,
    rank: x.o.trueRank,
    accused: x.o.accused,
    slots: x.o.segmentsRead,
    verdict: x.o.verdict,
    detectS: x.o.detectS,
  });
  return {
    lines: reportLines(r, v),
    summary,
    json: {
      f2: f2.map(strip),
      f9: f9.map(strip),
      f9s: f9s.map((x) => ({ ...strip(x), soft: x.soft, spread: x.spread, errors: x.errors, live: x.live, fit: x.fit })),
      f10: f10.map(strip),
      f7: f7 ? { accused: f7.accused, z: f7.trueZ, stages: f7.raw?.stages ?? [] } : null,
      f6: { trials: f6.trials, accusations: f6.accusations, maxZ: f6.maxZ, minEstimate: f6.minEstimate, bookTrials: f6.bookTrials },
    },
  };
}
