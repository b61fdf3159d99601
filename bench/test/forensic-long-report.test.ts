// The forensic-long bench's options, targets and report: the 720p projection, alignment's scaling ratios and the
// tables a run prints.
import { describe, expect, it } from 'vitest';
import type { DetectRun } from '../forensic-long-detect.js';
import { longOptions } from '../forensic-long-options.js';
import { type LongResults, longFigures, longJson, longReport } from '../forensic-long-report.js';
import { MACHINE } from './machine.js';

const timed = { wallS: 60, cpuS: 100, peakProcessMB: 300, peakTreeMB: 400 };
const run = (name: string, file: string, leakMinutes: number, align: number, decode: number, over: Partial<DetectRun> = {}): DetectRun => ({
  name,
  file,
  leakMinutes,
  width: 160,
  height: 90,
  exitCode: 0,
  ...timed,
  timings: { decode, 'analyse.align': align, 'analyse.register': 0.1, 'analyse.read': 0.2, 'analyse.score': 0.3 },
  alignStats: { windows: 10, windowsAligned: 9, votes: 1000 },
  pieces: [{ leakStart: 0, leakEnd: 600, scale: 1, offset: 180, score: 0.9 }],
  segmentsRead: 30,
  slotsTotal: 30,
  accused: [20011],
  trueZ: 9,
  bestZ: 9,
  peakTop: 'ffmpeg 200 MB',
  ...over,
});

function results(argv: Record<string, string>, runs: DetectRun[], hd?: DetectRun): LongResults {
  const o = longOptions(argv);
  return {
    o,
    machine: MACHINE,
    entry: 'dist/ (compiled)',
    title: { file: 'title.mp4', seconds: o.minutes * 60, bytes: 50e6, scenes: 4, generatedS: 0 },
    content: { bins: 72000, informative: 70000, distinct: 30000, bucketSizes: [50, 45, 3], skipAbove: 40, selfOk: 24, selfChecks: 24, selfSeconds: 30 },
    state: { title: 'title.mp4', videoId: 'v', segments: 1800, ingest: { ...timed, at: '2026-01-01T00:00:00Z' } },
    viewer: { payload: 20011, id: 'w', mp4: 'viewer.mp4', ...timed },
    ingestReused: true,
    ingest: { slots: 3600, workingBytes: 400e6, variantBytes: 800e6, sidecarBytes: 2e6, decodedSidecarMB: 30 },
    viewerBytes: 400e6,
    leak: { width: 160, height: 90, bytes: 100e6, file: 'full.mp4' },
    runs: hd ? [hd, ...runs] : runs,
    hd,
    small: { minutes: 10, start: 180 },
    vsOriginal: [
      { originalMin: 15, bins: 9000, alignS: 0.1, votes: 10, windows: 5, aligned: 5, pieces: 1, offset: 180 },
      { originalMin: 120, bins: 72000, alignS: 0.15, votes: 10, windows: 5, aligned: 5, pieces: 1, offset: 180 },
    ],
  };
}

describe('forensic-long bench options', () => {
  it('clips the scaling lengths and the 720p minutes to the title, and refuses titles under 5 minutes', () => {
    const o = longOptions({ hours: '0.5', scaling: '10,60,10,0', 'hd-minutes': '45', height: '181' });
    expect(o).toMatchObject({ minutes: 30, scaling: [10, 30], hdMinutes: 30, height: 182, width: 324, payload: 20011 });
    expect(() => longOptions({ hours: '0.05' })).toThrow(/at least 5 minutes/);
    expect(() => longOptions({ fps: 'x' })).toThrow(/--fps: expected a number/);
  });
});

describe('forensic-long bench report', () => {
  const scaling = [run('10-min', 'x10.mp4', 10, 1, 5), run('120-min (full)', 'full.mp4', 120, 13.2, 60)];

  it('compares alignment per leak-minute, longest against shortest, and per original length', () => {
    const f = longFigures(results({}, scaling));
    expect(f.leakRatio).toBeCloseTo(1.1);
    expect(f.leakLinear).toBe(true);
    expect(f.origRatio).toBeCloseTo(1.5);
    expect(f.origOk).toBe(true);
    expect(f.trueAccused).toBe(true);
    expect(f.wallOk && f.memOk).toBe(true);
  });

  it("projects a full 720p leak's detect from the 720p decode rate, or takes a full-length 720p run as measured", () => {
    const hd = run('720p 20-min', 'hd.mp4', 20, 2, 30);
    // The full run (60 s) with its decode at 1.5 s/min instead of 0.5 s/min: 60 + 1 x 120 s.
    const projected = longFigures(results({}, scaling, hd));
    expect(projected.hdFull).toBe(false);
    expect(projected.projectedHdWall).toBeCloseTo(180);
    expect(longReport(results({}, scaling, hd)).join('\n')).toMatch(/detect <= 5 min, projected for a full 720p leak\s+MET\s+180 s: 720p decode 1.50 s\/min/);
    const full720 = longFigures(results({ 'hd-minutes': '120' }, scaling, run('720p 120-min (full)', 'hd.mp4', 120, 13, 200, { wallS: 320 })));
    expect([full720.hdFull, full720.projectedHdWall, full720.hdOk]).toEqual([true, 320, false]);
  });

  it('prints a row per detect run, the alignment table and every target', () => {
    const r = results({}, scaling);
    const text = longReport(r).join('\n');
    expect(text).toContain('== forensic-long (F11): a 120-min forensic title');
    expect(text).toMatch(/\n10-min\s+10\.0\s+60\.0/);
    expect(text).toMatch(/\n120-min \(full\)\s+120\.0/);
    expect(text).toContain('-- alignment vs original length (in process: alignPieces on the 10-min leak, which sits at 3 min; best of 3) --');
    const targets = text
      .slice(text.indexOf('-- targets --'))
      .split('\n')
      .filter((l) => / (MET|MISSED) /.test(l));
    expect(targets).toHaveLength(5);
    expect(longJson(r).targets).toMatchObject({ memOk: true, leakLinear: true, trueAccused: true });
  });
});
