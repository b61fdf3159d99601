// The forensic bench's options, figures and report: each target's verdict from what a run measured, and a report that
// prints the sections of the parts that ran only.
import { describe, expect, it } from 'vitest';
import type { AttackOutcome } from '../forensic-attack-leaks.js';
import type { LeakOutcome } from '../forensic-detect.js';
import { type EdgeRow, type ForensicResults, forensicFigures, forensicJson, qualityFigures, type SegmentRow } from '../forensic-figures.js';
import { noTrials } from '../forensic-null-trials.js';
import { forensicOptions, wanted } from '../forensic-options.js';
import { pairStarts } from '../forensic-quality.js';
import { forensicReport } from '../forensic-report.js';
import { MACHINE } from './machine.js';

const leak = (truth: number[], accused: number[], z: number, over: Partial<LeakOutcome> = {}): LeakOutcome => ({
  name: 'leak',
  file: 'leak.mp4',
  bytes: 4e6,
  truth,
  found: true,
  accused,
  collusion: false,
  best: accused[0] ?? null,
  bestZ: z,
  gap: 2,
  trueZ: truth.map(() => z),
  trueRank: truth.map(() => 1),
  bitErrors: truth.map(() => 3),
  softMean: truth.map(() => 0.6),
  segmentsRead: 75,
  alignment: { offsetSeconds: 0, score: 0.9 },
  geometry: { x0: 0, y0: 0, w: 320, h: 180 },
  leakSeconds: 300,
  detectS: 4,
  stages: { decode: 3 },
  verdict: accused.length === truth.length && accused.every((u) => truth.includes(u)) ? 'correct' : 'missed',
  consistent: true,
  readings: [],
  ...over,
});

const segment = (k: number, aBytes: number, bBytes: number, cleanBytes: number): SegmentRow => ({
  k,
  markPsnrY: 50,
  markPsnrCalc: 50,
  markPsnrNoDither: 52,
  aBytes,
  bBytes,
  cleanBytes,
  aVsClean: 45,
  aVsWorking: 40,
  cleanVsWorking: 41,
});
const edge = (k: number, viewerEdge: number, cleanEdge: number): EdgeRow => ({
  k,
  viewerEdge,
  cleanEdge,
  viewerInside: 1,
  step: { meanAbs: 0.2, maxAbs: 0.5 },
  designStep: { meanAbs: 0.3, maxAbs: 0.6 },
});

function results(only: string, over: Partial<ForensicResults> = {}): ForensicResults {
  const o = forensicOptions({ height: '180', payloads: '2', seed: '7', only }, () => 1);
  const timed = { wallS: 10, cpuS: 18, id: 'v' };
  return {
    o,
    want: wanted(o),
    machine: MACHINE,
    clip: { path: 'clip.mp4', kind: 'natural', width: 320, height: 180, seconds: 300, fps: 30, generatedSeconds: 0 },
    clipBytes: 22e6,
    videoId: 'video-1',
    segments: 75,
    codebookS: 0.5,
    payloads: [7, 8],
    ingest: { plain: timed, forensic: { ...timed, wallS: 21 } },
    bytes: { sidecar: 1e6, variants: 8e6, working: 4e6, plainWorking: 4e6 },
    viewers: [],
    viewerTiming: { playlistUs: NaN, playlistWithCodewordUs: NaN, playlistBytes: NaN, segments: 75, samplesUs: [], samplesWithCodewordUs: [] },
    f1: [],
    attackWall: [],
    skipped: [],
    f2: [],
    quality: { rows: [], edges: [], baselineIdentical: null, code0: new Int8Array(75).fill(1) },
    f5: { wallS: NaN, cpuS: NaN, otherCores: NaN, engineElapsedS: NaN, found: false, correct: false, z: NaN, bytes: 0, seconds: NaN },
    stageMedians: {},
    nullReal: [],
    readingSetCount: 0,
    codebookTrials: noTrials(),
    noiseTrials: noTrials(),
    unmarkedRms: 0.3,
    f7: undefined,
    hardLeaks: { lines: [], summary: [], json: {} },
    elapsed: '1.0 min',
    suiteSeconds: 60,
    ...over,
  };
}

describe('forensic bench options', () => {
  it('reads the options, derives the width, and refuses a layout or a viewer count it cannot run', () => {
    const o = forensicOptions({ height: '360', 'full-attacks': 'rotate', layout: 'split', reuse: true }, () => 99);
    expect(o).toMatchObject({ height: 360, width: 640, seed: 99, payloadCount: 5, fullAttacks: 'rotate', layoutChoice: 'split', reuse: true, rawNull: true });
    expect(forensicOptions({ 'full-attacks': 'some' }, () => 1).fullAttacks).toBe('auto');
    expect(() => forensicOptions({ layout: 'diagonal' }, () => 1)).toThrow(/--layout: one of/);
    expect(() => forensicOptions({ payloads: '1' }, () => 1)).toThrow(/at least 2/);
  });

  it('samples F3 in neighbouring pairs spread over the title', () => {
    expect(pairStarts(12, 75)).toEqual([6, 18, 30, 43, 55, 67]);
    expect(pairStarts(2, 75)).toEqual([37]);
    expect(pairStarts(12, 4)).toEqual([0, 2]);
  });
});

describe('forensic bench figures', () => {
  it("weighs F3's overhead by bytes and its edges by the median viewer/clean ratio", () => {
    const q = qualityFigures([segment(0, 1010, 1000, 1000), segment(1, 2000, 2030, 2000)], [edge(0, 2.1, 2), edge(1, 3, 2), edge(2, 1, 1)]);
    expect(q.overheadA).toBeCloseTo(10 / 3000);
    expect(q.overheadB).toBeCloseTo(30 / 3000);
    expect(q.overheadAB).toBeCloseTo(40 / 6000);
    expect(q.markPsnr).toBeCloseTo(50);
    expect(q.edgeRatio).toBeCloseTo(1.05);
    expect(q.stepOk).toBe(true);
    expect(qualityFigures([], [edge(0, 3, 2)]).stepOk).toBe(false);
  });

  it('meets F1 only when every leak names its viewer at rank 1 over the threshold, and F7 only when both colluders are accused and flagged', () => {
    const f1 = [
      { ...leak([7], [7], 9), attack: 'crf30-half' },
      { ...leak([8], [8], 7), attack: 'quarter' },
    ] as AttackOutcome[];
    expect(forensicFigures(results('f1', { f1 })).f1Ok).toBe(true);
    expect(forensicFigures(results('f1', { f1: [...f1, { ...leak([8], [8], 5), attack: 'eq-plus' }] })).f1Ok).toBe(false);
    expect(forensicFigures(results('f7', { f7: leak([7, 8], [7, 8], 8, { collusion: true }) })).f7Ok).toBe(true);
    expect(forensicFigures(results('f7', { f7: leak([7, 8], [7, 8], 8) })).f7Ok).toBe(false);
  });

  it('counts F6 over the real detects and both kinds of score-level trials', () => {
    const codebookTrials = { ...noTrials(), trials: 600, accusations: 0 };
    const noiseTrials = { ...noTrials(), trials: 399 };
    const nullReal = [leak([], [], 2.5, { verdict: 'clean' })];
    const f = forensicFigures(results('f6', { nullReal, codebookTrials, noiseTrials }));
    expect([f.f6Trials, f.f6Accusations, f.f6Ok]).toEqual([1000, 0, true]);
    const accused = forensicFigures(results('f6', { nullReal: [leak([], [3], 6, { verdict: 'FALSE ACCUSATION' })], codebookTrials, noiseTrials }));
    expect([accused.realNullAccusations, accused.f6Ok]).toEqual([1, false]);
  });

  it('meets F8 at up to 2.5x the plain ingest with a sidecar of at most 5 MB', () => {
    expect(forensicFigures(results('f8')).f8Ratio).toBeCloseTo(2.1);
    expect(forensicFigures(results('f8')).f8Ok).toBe(true);
    expect(forensicFigures(results('f8', { bytes: { sidecar: 6e6, variants: 0, working: 0, plainWorking: 0 } })).f8Ok).toBe(false);
  });
});

describe('forensic bench report', () => {
  it('prints the sections and summary rows of the parts that ran, and the hard leaks after them', () => {
    const f2 = [
      { ...leak([7], [7], 7), minutes: 3.5, startS: 20 },
      { ...leak([7], [], 4), minutes: 2.5, startS: 40 },
    ];
    const r = results('f2,f8,f9', { f2, hardLeaks: { lines: ['-- F9: camcorder --'], summary: [['F9 camcorder', 'MET', 'z 9']], json: {} } });
    const text = forensicReport(r).join('\n');
    expect(text).toContain('parts run (--only): f2, f8, f9; the rest were skipped');
    expect(text).toContain('-- F2: shortest contiguous leak identified');
    expect(text).toContain('F2 MET: shortest identified 3.5 min (target <= 3.5 min)');
    expect(text).toContain('-- F8: ingest cost --');
    expect(text).toContain('ratio forensic/plain: wall 2.10, cpu 1.00');
    for (const absent of ['-- F1', '-- F3', '-- F4', '-- F5', '-- F6', '-- F7']) expect(text).not.toContain(absent);
    expect(text.indexOf('-- F9: camcorder --')).toBeGreaterThan(text.indexOf('-- F8'));
    const summary = text.slice(text.indexOf('-- summary (forensic layout: whole) --'));
    expect(summary.split('\n').filter((l) => /^F\d/.test(l))).toEqual([
      expect.stringMatching(/^F2 short leak\s+MET\s+shortest identified 3.5 min$/),
      expect.stringMatching(/^F8 ingest\s+MET\s+x2.10 wall, sidecar 1.00 MB$/),
      expect.stringMatching(/^F9 camcorder\s+MET\s+z 9$/),
    ]);
  });

  it('keeps the options, verdicts and leaks in the JSON, with the readings summarised', () => {
    const r = results('f7', { f7: leak([7, 8], [7, 8], 8, { collusion: true, readings: [{ segment: 0, value: 0.123456, frames: 60 }] }) });
    const json = forensicJson(r, forensicFigures(r), '2026-01-01T00:00:00.000Z');
    expect(json.options).toMatchObject({ height: 180, width: 320, payloads: 2, seed: 7, only: ['f7'] });
    expect(json.f7).toMatchObject({ met: true, accused: [7, 8], readings: undefined, readingsSummary: { count: 1, values: [0.1235] } });
  });
});
