// What a watermark draws: its filtergraph (one drawtext chain per TEXT setting), the text files it reads, and the font it lays out for.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FALLBACK_FONT_METRICS } from '../../../src/core/font-metrics.js';
import type { VideoRecord } from '../../../src/engine/state/state-store.js';
import { fontMetrics, textSettings, watermarkDrawing, watermarkFilterGraph } from '../../../src/engine/watermark/drawing.js';
import { forensic, insertVideo, settingsOf, text, type UnitEngine, unitEngine } from '../../helpers/unit-engine.js';

const video = { height: 180, timeOrigin: 0 } as VideoRecord;
const watermarkOf = (raw: unknown[]) => ({ settings: settingsOf(raw) });
const drawtexts = (graph: string) => graph.split(',drawtext=').length;

describe('watermarkFilterGraph', () => {
  it("is 'null' with no file to read when there is no TEXT setting", () => {
    expect(watermarkFilterGraph(watermarkOf([forensic(9)]), video, '/fonts/a.ttf', FALLBACK_FONT_METRICS)).toEqual({ graph: 'null', files: [] });
  });

  it('draws each TEXT setting in order from its own text file, skipping FORENSIC ones', () => {
    const w = watermarkOf([text('Alice'), forensic(1), text('bob@example.com', { fontSize: 0.1 })]);
    const { graph, files } = watermarkFilterGraph(w, video, '/fonts/a.ttf', FALLBACK_FONT_METRICS);
    // FORENSIC is not drawn, so the TEXT settings are numbered among themselves.
    expect(files).toEqual([
      { name: 'text_0.txt', content: 'Alice' },
      { name: 'text_1.txt', content: 'bob@example.com' },
    ]);
    const chains = graph.split(',drawtext=').map((c, i) => (i ? `drawtext=${c}` : c));
    expect(chains).toHaveLength(2);
    expect(chains[0]).toMatch(/^drawtext=fontfile=\/fonts\/a\.ttf:textfile=text_0\.txt:expansion=none:fontsize=9:/);
    expect(chains[1]).toMatch(/^drawtext=fontfile=\/fonts\/a\.ttf:textfile=text_1\.txt:expansion=none:fontsize=18:/);
  });

  it('never puts the text itself in the graph', () => {
    const { graph } = watermarkFilterGraph(watermarkOf([text("O'Brien: 100%, [draft]")]), video, 'f.ttf', FALLBACK_FONT_METRICS);
    expect(graph).not.toContain('Brien');
    expect(graph).toContain('textfile=text_0.txt');
  });

  it('reads the text files from textDir, when given, by absolute path', () => {
    const w = watermarkOf([text('Alice'), text('Bob')]);
    const { graph, files } = watermarkFilterGraph(w, video, 'f.ttf', FALLBACK_FONT_METRICS, '/data/media/watermarks/v/w/.draw/');
    expect(files.map((f) => f.name)).toEqual(['text_0.txt', 'text_1.txt']);
    expect(graph).toContain('textfile=/data/media/watermarks/v/w/.draw/text_0.txt:');
    expect(graph).toContain('textfile=/data/media/watermarks/v/w/.draw/text_1.txt:');
    expect(graph).not.toMatch(/textfile=text_/);
  });

  it('draws a multi-line setting as one drawtext per line, each from a file of its own', () => {
    const { graph, files } = watermarkFilterGraph(watermarkOf([text('Alice\nBob', { shadowOpacity: 0 })]), video, 'f.ttf', FALLBACK_FONT_METRICS);
    expect(files).toEqual([
      { name: 'text_0_0.txt', content: 'Alice' },
      { name: 'text_0_1.txt', content: 'Bob' },
    ]);
    expect(drawtexts(graph)).toBe(2);
  });

  it('offsets the timeline by the video time origin', () => {
    const moving = watermarkOf([text('Alice', { animation: { type: 'MOVE', toX: 0.9, toY: 0.5, startTime: 1, endTime: 3 } })]);
    const atZero = watermarkFilterGraph(moving, video, 'f.ttf', FALLBACK_FONT_METRICS).graph;
    const shifted = watermarkFilterGraph(moving, { ...video, timeOrigin: 1.5 }, 'f.ttf', FALLBACK_FONT_METRICS).graph;
    expect(atZero).toContain('(t-1)/2');
    expect(shifted).toContain('(t-2.5)/2');
  });
});

describe('textSettings', () => {
  it('keeps only the TEXT settings, in order', () => {
    expect(textSettings(watermarkOf([text('a'), forensic(1), text('b')])).map((s) => s.content)).toEqual(['a', 'b']);
  });
});

describe('watermarkDrawing', () => {
  let unit: UnitEngine;
  beforeEach(async () => {
    unit = await unitEngine();
  });
  afterEach(() => unit.dispose());

  it('lays the drawing out for whichever font it is given, with the engine font metrics', async () => {
    const record = await insertVideo(unit.engine);
    const w = watermarkOf([text('Alice\nBob'), text('Carol', { y: 0.9 })]);
    const drawing = await watermarkDrawing(unit.engine, w, record);
    const metrics = await fontMetrics(unit.engine, unit.engine.tools.font.path);
    const forA = drawing('/fonts/A.ttf');
    const forB = drawing('/other/B.ttf', '/tmp/draw');
    expect(forA).toEqual(watermarkFilterGraph(w, record, '/fonts/A.ttf', metrics));
    expect(forB).toEqual(watermarkFilterGraph(w, record, '/other/B.ttf', metrics, '/tmp/draw'));
    expect(forA.graph).toContain('fontfile=/fonts/A.ttf');
    expect(forA.graph).not.toContain('B.ttf');
    expect(forB.graph).toContain('fontfile=/other/B.ttf');
    expect(forB.graph).toContain('textfile=/tmp/draw/text_1.txt');
    expect(forA.files).toEqual(forB.files);
  });

  it('reads a font file once per engine, and falls back to standard metrics for one it cannot parse', async () => {
    const first = fontMetrics(unit.engine, '/no/such/font.ttf');
    expect(fontMetrics(unit.engine, '/no/such/font.ttf')).toBe(first);
    expect(await first).toEqual(FALLBACK_FONT_METRICS);
  });
});
