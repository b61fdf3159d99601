// What a watermark draws: its filtergraph (one drawtext chain per TEXT setting), the text files it reads, and the font it lays out for.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FALLBACK_FONT_METRICS } from '../../../src/core/font-metrics.js';
import type { ImageSetting, Setting } from '../../../src/core/setting-types.js';
import type { VideoRecord } from '../../../src/engine/state/state-store.js';
import { fontMetrics, visibleSettings, watermarkDrawing, watermarkFilterGraph } from '../../../src/engine/watermark/drawing.js';
import { forensic, insertVideo, settingsOf, text, type UnitEngine, unitEngine } from '../../helpers/unit-engine.js';

const video = { height: 180, timeOrigin: 0 } as VideoRecord;
const watermarkOf = (raw: unknown[]) => ({ settings: settingsOf(raw) });
const drawtexts = (graph: string) => graph.split(',drawtext=').length;
const SHA = 'ab'.repeat(32);
/** An IMAGE setting as a watermark stores it: checked, and its 400x200 image fetched. */
const logo = (fields: Record<string, unknown> = {}): Setting => {
  const [s] = settingsOf([{ type: 'IMAGE', content: 'https://cdn.example.com/logo.png', ...fields }]);
  return { ...(s as ImageSetting), image: { sha256: SHA, format: 'png', width: 400, height: 200 } };
};

describe('watermarkFilterGraph', () => {
  it("is 'null' with no file to read when there is no TEXT setting", () => {
    expect(watermarkFilterGraph(watermarkOf([forensic(9)]), video, '/fonts/a.ttf', FALLBACK_FONT_METRICS)).toEqual({ graph: 'null', files: [], images: [] });
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
    const { graph, files } = watermarkFilterGraph(w, video, 'f.ttf', FALLBACK_FONT_METRICS, { dir: '/data/media/watermarks/v/w/.draw/' });
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

describe('visibleSettings', () => {
  it('keeps the TEXT and IMAGE settings, in order', () => {
    const w = { settings: [...settingsOf([text('a'), forensic(1)]), logo(), ...settingsOf([text('b')])] };
    expect(visibleSettings(w).map((s) => s.content)).toEqual(['a', 'https://cdn.example.com/logo.png', 'b']);
  });
});

describe('IMAGE settings in the graph', () => {
  const frame = { width: 320, height: 180, timeOrigin: 0 } as VideoRecord;

  it('overlays each image from its rendition (a media key named by the hash and drawn size), text and images in order', () => {
    const w = { settings: [...settingsOf([text('Alice')]), logo({ width: 0.25 }), ...settingsOf([text('Bob')])] };
    const { graph, files, images } = watermarkFilterGraph(w, frame, 'f.ttf', FALLBACK_FONT_METRICS);
    // 0.25 of 320 px wide; 400x200 keeps its aspect: 80x40.
    expect(images).toEqual([{ name: 'image_1.png', key: `images/${SHA}-80x40.png` }]);
    expect(files.map((f) => f.name)).toEqual(['text_0.txt', 'text_2.txt']);
    const statements = graph.split(';');
    // Alice is drawn before the image, Bob after it (on top).
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^drawtext=.*textfile=text_0\.txt.*\[a0\]$/);
    expect(statements[1]).toBe('movie=filename=image_1.png,format=rgba[i0]');
    expect(statements[2]).toMatch(/^\[a0\]\[i0\]overlay=x=W\*0\.5-w\*0\.5:y=H\*0\.5-h\*0\.5:eval=init,drawtext=.*textfile=text_2\.txt/);
  });

  it('starts from the frames unchanged when the image comes first, and fades it by opacity', () => {
    const w = { settings: [logo({ opacity: 0.4, x: 0.1, align: 'LEFT', verticalAlign: 'TOP' })] };
    const { graph } = watermarkFilterGraph(w, frame, 'f.ttf', FALLBACK_FONT_METRICS, { dir: '/m/.draw', labels: 'w3' });
    expect(graph).toBe(
      'null[w3a0];movie=filename=/m/.draw/image_0.png,format=rgba,colorchannelmixer=aa=0.4[w3i0];[w3a0][w3i0]overlay=x=W*0.1-w*0:y=H*0.5-h*0:eval=init',
    );
  });

  it('moves an image over the video timeline, evaluated every frame', () => {
    const w = { settings: [logo({ x: 0.1, animation: { toX: 0.9, startTime: 1, endTime: 3 } })] };
    const { graph } = watermarkFilterGraph(w, { ...frame, timeOrigin: 1.5 }, 'f.ttf', FALLBACK_FONT_METRICS);
    expect(graph).toContain('overlay=x=W*(0.1+0.8*clip((t-2.5)/2\\,0\\,1))-w*0.5:');
    expect(graph).toContain(':eval=frame');
  });

  it('refuses to draw an IMAGE whose image was never fetched', () => {
    const [unfetched] = settingsOf([{ type: 'IMAGE', content: 'https://cdn.example.com/logo.png' }]);
    expect(() => watermarkFilterGraph({ settings: [unfetched] }, frame, 'f.ttf', FALLBACK_FONT_METRICS)).toThrow(/never fetched/);
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
    const forB = drawing('/other/B.ttf', { dir: '/tmp/draw' });
    expect(forA).toEqual(watermarkFilterGraph(w, record, '/fonts/A.ttf', metrics));
    expect(forB).toEqual(watermarkFilterGraph(w, record, '/other/B.ttf', metrics, { dir: '/tmp/draw' }));
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
