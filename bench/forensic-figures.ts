// The forensic bench's figures: what a run measured, each target F1-F8 met or not with the figures its verdict rests
// on, and the JSON that keeps them (bench/out/results-forensic.json). Pure: the suite measures (bench/forensic.ts and
// its parts), bench/forensic-report.ts prints.
import { MARK_AMPLITUDE } from '../src/core/forensic/pattern-image.js';
import { Z_THRESHOLD } from '../src/core/forensic/score.js';
import type { AttackOutcome } from './forensic-attack-leaks.js';
import { ATTACKS } from './forensic-attacks.js';
import type { LeakOutcome } from './forensic-detect.js';
import type { DetectTime } from './forensic-detect-time.js';
import type { ShortLeak } from './forensic-leaks.js';
import type { TrialStats } from './forensic-null-trials.js';
import { type ForensicOptions, TARGETS } from './forensic-options.js';
import type { QualityMeasures } from './forensic-quality.js';
import type { Ingests, Viewer } from './forensic-setup.js';
import type { Part } from './lib/forensic-parts.js';
import type { ForensicViewerTiming } from './lib/forensic-viewer.js';
import { median } from './lib/measure.js';
import type { MachineInfo } from './lib/suite.js';
import type { SourceClip } from './lib/video.js';

/** F3, one sampled segment: the mark's PSNR, and variants A and B against the clean re-encode. */
export interface SegmentRow {
  k: number;
  markPsnrY: number;
  markPsnrCalc: number;
  markPsnrNoDither: number;
  aBytes: number;
  bBytes: number;
  cleanBytes: number;
  aVsClean: number;
  aVsWorking: number;
  cleanVsWorking: number;
}

/** F3, one segment edge k -> k+1: mean |dY| across it in the viewer's and the clean copy, and the step per pattern cell. */
export interface EdgeRow {
  k: number;
  viewerEdge: number;
  cleanEdge: number;
  viewerInside: number;
  step: { meanAbs: number; maxAbs: number };
  designStep: { meanAbs: number; maxAbs: number };
}

/** Everything a run measured, part by part (a part that did not run left its list empty, its figures NaN). */
export interface ForensicResults {
  o: ForensicOptions;
  want: (part: Part) => boolean;
  machine: MachineInfo;
  clip: SourceClip;
  clipBytes: number;
  videoId: string;
  segments: number;
  codebookS: number;
  payloads: number[];
  ingest: Ingests;
  bytes: { sidecar: number; variants: number; working: number; plainWorking: number };
  viewers: Viewer[];
  viewerTiming: ForensicViewerTiming;
  f1: AttackOutcome[];
  attackWall: number[];
  skipped: string[];
  f2: ShortLeak[];
  quality: QualityMeasures;
  f5: DetectTime;
  stageMedians: Record<string, number>;
  nullReal: LeakOutcome[];
  readingSetCount: number;
  codebookTrials: TrialStats;
  noiseTrials: TrialStats;
  unmarkedRms: number;
  f7: LeakOutcome | undefined;
  hardLeaks: { lines: string[]; summary: string[][]; json: unknown };
  /** Minutes since the suite started, as printed. */
  elapsed: string;
  suiteSeconds: number;
}

/** mean of a power ratio given in dB, back in dB: the PSNR of all the samples' frames together. */
const meanDb = (values: number[]) => -10 * Math.log10(values.reduce((acc, v) => acc + 10 ** (-v / 10), 0) / values.length);

/** F3's figures from its sampled segments and edges. */
export function qualityFigures(rows: SegmentRow[], edges: EdgeRow[]) {
  const sum = (f: (r: SegmentRow) => number) => rows.reduce((acc, r) => acc + f(r), 0);
  const clean = sum((r) => r.cleanBytes);
  const meanOf = (f: (e: EdgeRow) => number) => edges.reduce((a, e) => a + f(e), 0) / Math.max(1, edges.length);
  // "Visible step" proxy: at a segment edge the viewer's copy may change by at most 10 % more (mean |dY|, last frame of
  // k -> first of k+1) than the clean copy encoded with the same settings changes there.
  const edgeRatio = median(edges.map((e) => e.viewerEdge / e.cleanEdge));
  return {
    overheadA: sum((r) => r.aBytes) / clean - 1,
    overheadB: sum((r) => r.bBytes) / clean - 1,
    overheadAB: (sum((r) => r.aBytes) + sum((r) => r.bBytes)) / (2 * clean) - 1,
    markPsnr: meanDb(rows.map((r) => r.markPsnrY)),
    markPsnrCalc: meanDb(rows.map((r) => r.markPsnrCalc)),
    markPsnrNoDither: meanDb(rows.map((r) => r.markPsnrNoDither)),
    edgeExtra: median(edges.map((e) => e.viewerEdge - e.cleanEdge)),
    stepMax: Math.max(...edges.map((e) => e.step.maxAbs)),
    stepMean: meanOf((e) => e.step.meanAbs),
    designMax: Math.max(...edges.map((e) => e.designStep.maxAbs)),
    designMean: meanOf((e) => e.designStep.meanAbs),
    edgeRatio,
    stepOk: edgeRatio <= 1.1,
  };
}

/** Each target's verdict and the figures the report states with it. */
export function forensicFigures(r: ForensicResults) {
  const { f1, f2, f5, f7, nullReal, codebookTrials, noiseTrials, ingest, viewerTiming, viewers, segments } = r;
  const quality = qualityFigures(r.quality.rows, r.quality.edges);
  const f2Shortest = f2
    .filter((o) => o.verdict === 'correct')
    .map((o) => o.minutes)
    .sort((a, b) => a - b)[0];
  const [u1, u2] = [r.payloads[0]!, r.payloads[1]!];
  const realNullAccusations = nullReal.filter((o) => o.accused.length > 0).length;
  const f6Trials = nullReal.length + codebookTrials.trials + noiseTrials.trials;
  const f6Accusations = realNullAccusations + codebookTrials.accusations + noiseTrials.accusations;
  const f8Ratio = ingest.forensic.wallS / (ingest.plain?.wallS ?? NaN);
  return {
    quality,
    f1Ok: f1.every((o) => o.verdict === 'correct' && o.trueRank[0] === 1 && o.trueZ[0]! >= Z_THRESHOLD),
    f2Shortest,
    f2Ok: f2Shortest !== undefined && f2Shortest <= TARGETS.f2Minutes,
    f3Ok: quality.markPsnr >= TARGETS.f3PsnrDb && quality.overheadAB <= TARGETS.f3Overhead && quality.stepOk,
    f4Ok: viewerTiming.playlistUs <= TARGETS.f4Us && viewerTiming.playlistBytes <= TARGETS.f4Bytes && viewers.every((v) => v.linkedSegments === segments),
    f5Ok: f5.wallS <= TARGETS.f5Seconds && f5.correct,
    realNullAccusations,
    f6Trials,
    f6Accusations,
    f6Ok: f6Accusations === 0 && f6Trials >= TARGETS.f6Trials,
    u1,
    u2,
    f7Ok: !!f7 && [u1, u2].every((u) => f7.accused.includes(u)) && f7.collusion,
    f8Ratio,
    f8CpuRatio: ingest.forensic.cpuS / (ingest.plain?.cpuS ?? NaN),
    f8Ok: f8Ratio <= TARGETS.f8Ratio * 1.25 && r.bytes.sidecar <= TARGETS.f8SidecarBytes,
    /** Leaks whose scoring by the bench disagreed with detectLeak's own. */
    inconsistent: [...f1, ...f2, ...(f7 ? [f7] : []), ...nullReal].filter((o) => !o.consistent).length,
  };
}
export type ForensicFigures = ReturnType<typeof forensicFigures>;

/** A leak as the JSON keeps it: its readings summarised. */
const strip = (o: LeakOutcome) => ({
  ...o,
  readings: undefined,
  readingsSummary: { count: o.readings.length, values: o.readings.map((x) => Number(x.value.toFixed(4))) },
});

/** The JSON result (bench/out/results-forensic.json): the options, every part's figures and leaks. */
export function forensicJson(r: ForensicResults, f: ForensicFigures, date: string) {
  const { o } = r;
  const q = f.quality;
  return {
    suite: 'forensic',
    date,
    machine: r.machine,
    options: {
      layout: o.layoutChoice,
      payloads: o.payloadCount,
      height: o.height,
      width: o.width,
      threads: o.threads,
      seed: o.seed,
      nullCodebooks: o.nullCodebooks,
      nullNoise: o.nullNoise,
      f3Samples: o.f3Samples,
      fullAttacks: o.fullAttacks,
      budgetMin: o.budgetMin,
      collusionScale: o.collusionScale,
      rawNull: o.rawNull,
      only: o.only ? [...o.only] : 'all',
    },
    source: { ...r.clip, bytes: r.clipBytes },
    video: { id: r.videoId, segments: r.segments, markAmplitude: MARK_AMPLITUDE, threshold: Z_THRESHOLD },
    payloads: r.payloads,
    attacks: ATTACKS.map((a) => ({ id: a.id, label: a.label, filter: a.filter(o.width, o.height), crf: a.crf, extra: a.extra ?? [] })),
    f1: { met: f.f1Ok, leaks: r.f1.map((x) => ({ attack: x.attack, ...strip(x) })), attackWallS: r.attackWall, skippedForTime: r.skipped },
    f2: { met: f.f2Ok, shortestMinutes: f.f2Shortest ?? null, leaks: r.f2.map((x) => ({ minutes: x.minutes, startS: x.startS, ...strip(x) })) },
    f3: {
      met: f.f3Ok,
      baselineIdentical: r.quality.baselineIdentical,
      markPsnrY: q.markPsnr,
      markPsnrComputed: q.markPsnrCalc,
      markPsnrNoDither: q.markPsnrNoDither,
      overhead: { a: q.overheadA, b: q.overheadB, ab: q.overheadAB },
      segments: r.quality.rows,
      edges: r.quality.edges,
      ...{
        edgeExtra: q.edgeExtra,
        edgeRatio: q.edgeRatio,
        stepMax: q.stepMax,
        stepMean: q.stepMean,
        designMax: q.designMax,
        designMean: q.designMean,
        stepOk: q.stepOk,
      },
    },
    f4: {
      met: f.f4Ok,
      playlistUs: r.viewerTiming.playlistUs,
      playlistWithCodewordUs: r.viewerTiming.playlistWithCodewordUs,
      playlistBytes: r.viewerTiming.playlistBytes,
      samplesUs: r.viewerTiming.samplesUs,
      samplesWithCodewordUs: r.viewerTiming.samplesWithCodewordUs,
      viewers: r.viewers,
    },
    f5: { met: f.f5Ok, ...r.f5, stageMedians: r.stageMedians },
    f6: {
      met: f.f6Ok,
      trials: f.f6Trials,
      accusations: f.f6Accusations,
      real: r.nullReal.map(strip),
      codebookTrials: r.codebookTrials,
      noiseTrials: r.noiseTrials,
      unmarkedRms: r.unmarkedRms,
    },
    f7: r.f7 ? { met: f.f7Ok, ...strip(r.f7) } : null,
    hardLeaks: r.hardLeaks.json,
    f8: {
      met: f.f8Ok,
      ingest: r.ingest,
      ratioWall: f.f8Ratio,
      ratioCpu: f.f8CpuRatio,
      ...{ sidecarBytes: r.bytes.sidecar, variantBytes: r.bytes.variants, workingBytes: r.bytes.working, plainWorkingBytes: r.bytes.plainWorking },
    },
    codebookSeconds: r.codebookS,
    inconsistent: f.inconsistent,
    suiteSeconds: r.suiteSeconds,
  };
}
