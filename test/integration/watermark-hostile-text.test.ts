// Text that ffmpeg would interpret if it were handled carelessly (filtergraph syntax, drawtext expansion, newlines, Unicode) is drawn literally.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestEngine, testEngine, workingSegment } from '../../harness/engine.js';
import { flat } from '../../harness/fixtures.js';
import { renderTemplate } from '../../src/core/render-template.js';
import type { TextSetting } from '../../src/core/setting-types.js';
import { parseTemplateBody } from '../../src/core/template-schema.js';
import { createTemplate } from '../../src/engine/app/templates.js';
import type { VideoRecord } from '../../src/engine/state/state-store.js';
import { decodeFrame, diffBox, type RgbFrame } from '../helpers/media.js';
import {
  compareRegion,
  cropDifference,
  type FrameDiff,
  filteredFrame,
  grow,
  ingestFixture,
  lineBoxes,
  meanRgb,
  referenceFrame,
  renderWith,
  SMALL,
  segmentAt,
  segmentIndexAt,
  unionBox,
} from '../helpers/watermark-helpers.js';

const KEY = 'hostile';
const FONT_SIZE = 0.12;
const FONT_PX = Math.round(FONT_SIZE * SMALL.height); // 22
/** Encoder tolerance between the engine's output (one more x264 pass) and an unencoded reference render of the same text. */
const SAME = { mean: 6, maxBlock: 30 };

let engine: TestEngine;
let video: VideoRecord;
/** Every filter script and text file the engine handed to ffmpeg, read as each render ran (a later request's drawing may replace them). */
const seen: { script: string; texts: Map<string, string> }[] = [];

beforeAll(async () => {
  engine = await testEngine();
  video = await ingestFixture(engine, await flat('336699', 10), KEY);
  const inner = engine.runner.ffmpeg;
  engine.runner.ffmpeg = (args, options) => {
    const at = args.indexOf('-filter_script:v');
    if (at >= 0) {
      const script = readFileSync(path.resolve(options?.cwd ?? '.', args[at + 1]!), 'utf8');
      const texts = new Map<string, string>();
      for (const m of script.matchAll(/textfile=([^:]+)/g)) texts.set(m[1]!, readFileSync(path.resolve(options?.cwd ?? '.', m[1]!), 'utf8'));
      seen.push({ script, texts });
    }
    return inner(args, options);
  };
});
afterAll(async () => await engine?.dispose());

const centred = (content: string) => ({ content, fontSize: FONT_SIZE, fontColor: 'FFFFFF', fontOpacity: 1, shadowOpacity: 0 });

async function engineFrame(content: string, seconds: number): Promise<RgbFrame> {
  const r = await renderWith(engine, KEY, [centred(content)]);
  expect(r.record.status).toBe('READY');
  return decodeFrame(r.playlist, seconds, SMALL);
}

/** The working segment (the clean picture) holding the frame at `seconds`, and that moment's time within it. */
function sourceAt(seconds: number): { file: string; offset: number } {
  const at = segmentAt(video, seconds);
  return { file: workingSegment(engine, video.id, at.index), offset: at.offset };
}

/** Plain ffmpeg drawing `text` from a file with expansion off, centred, on the working segment holding that moment. */
function literalRender(text: string, seconds = 1): Promise<RgbFrame> {
  const { file, offset } = sourceAt(seconds);
  return referenceFrame(file, offset, { text, fontPx: FONT_PX, color: 'white@1', x: '(w-tw)/2', y: '(h-th)/2' }, SMALL);
}

function difference(a: RgbFrame, b: RgbFrame): FrameDiff {
  const bg = meanRgb(a, { x0: 0, y0: 0, x1: 5, y1: 5 });
  return compareRegion(a, b, grow(unionBox(diffBox(a, bg), diffBox(b, bg)), 4, SMALL));
}

const HOSTILE: [string, string, string][] = [
  // [name, content, a near miss: what a renderer that interpreted the content would draw instead]
  ['filtergraph syntax', "a:b 'q' \\ back", "a:b 'q'  back"],
  ['a doubled backslash', "a:b 'q' \\\\ back", "a:b 'q' \\ back"],
  ['drawtext expansions', '%{pts} %{localtime}', '0.000000 %{localtime}'],
  ['template-looking text', '[%x%] %y%', '[] %y%'],
  ['filter separators', 'x,y;z[out]=1', 'x'],
  ['emoji', 'hi 😀🎬 ok', 'hi ok'],
  ['Hebrew and Arabic', 'שלום مرحبا', 'שלום'],
];

describe.each(HOSTILE)('%s', (_name, content, nearMiss) => {
  it('is drawn exactly like a literal render of the same string', async () => {
    const got = await engineFrame(content, 1);
    const literal = await literalRender(content);
    const d = difference(got, literal);
    expect(d.mean, `mean difference ${d.mean.toFixed(2)}`).toBeLessThan(SAME.mean);
    expect(d.maxBlock, `largest local difference ${d.maxBlock.toFixed(1)}`).toBeLessThan(SAME.maxBlock);
    // The comparison can tell texts apart: the near miss is clearly different.
    const miss = difference(got, await literalRender(nearMiss));
    expect(miss.maxBlock, `near miss ${JSON.stringify(nearMiss)} should differ`).toBeGreaterThan(2 * SAME.maxBlock);
  });

  it('reaches ffmpeg through a text file, never inside the filter script', () => {
    const run = seen.find((s) => [...s.texts.values()].includes(content));
    expect(run, 'a text file holding exactly the content (byte for byte, UTF-8)').toBeDefined();
    expect(run!.script).toMatch(/textfile=text_\d+\.txt/);
    expect(run!.script).toContain('expansion=none');
    const lines = content.split('\n').filter((l) => l.trim().length > 2);
    for (const piece of lines) expect(run!.script).not.toContain(piece);
  });
});

describe('newlines', () => {
  it('start a new line: each line reaches ffmpeg through its own text file and is drawn literally', async () => {
    const content = "first: 'a'\nsecond \\ %{n}";
    const got = await engineFrame(content, 1);
    const run = seen.find((s) => [...s.texts.values()].includes("first: 'a'"));
    expect(run, 'a text file holding exactly the first line').toBeDefined();
    expect([...run!.texts.values()]).toEqual(content.split('\n'));
    expect(run!.script).toContain('expansion=none');
    for (const line of content.split('\n')) expect(run!.script).not.toContain(line);
    // Drawn: two lines of ink in the engine's output.
    const bg = meanRgb(got, { x0: 0, y0: 0, x1: 5, y1: 5 });
    expect(lineBoxes(got, bg, 200)).toHaveLength(2);
    // Literal: the engine's own filter script and text files, run by plain ffmpeg without an encode, draw each line
    // pixel for pixel as a literal render of that line alone (same glyphs; only the position differs).
    const pristine = await filteredFrame(sourceAt(1).file, sourceAt(1).offset, run!.script, run!.texts, SMALL);
    const lines = lineBoxes(pristine, bg);
    expect(lines).toHaveLength(2);
    for (const [i, line] of content.split('\n').entries()) {
      const alone = await literalRender(line);
      const aloneBox = diffBox(alone, bg)!;
      expect(cropDifference(pristine, lines[i]!, alone, aloneBox), `line ${i}`).toBeLessThan(0.5);
      expect(cropDifference(pristine, lines[1 - i]!, alone, aloneBox), `line ${1 - i} is not line ${i}`).toBeGreaterThan(10);
    }
  });
});

describe('text that ffmpeg would expand', () => {
  it('%{pts} does not change over time: the frame at 1 s equals the frame at 5 s (another segment)', async () => {
    const text = 't=%{pts} n=%{n} %{localtime}';
    expect(segmentIndexAt(video, 5), '5 s is in another segment than 1 s').not.toBe(segmentIndexAt(video, 1));
    const r = await renderWith(engine, KEY, [centred(text)]);
    const a = await decodeFrame(r.playlist, 1, SMALL);
    const b = await decodeFrame(r.playlist, 5, SMALL);
    // Both are the literal string (so neither is empty), and they are the same picture.
    expect(difference(a, await literalRender(text)).maxBlock).toBeLessThan(SAME.maxBlock);
    expect(difference(b, await literalRender(text)).maxBlock).toBeLessThan(SAME.maxBlock);
    expect(difference(a, b).maxBlock).toBeLessThan(SAME.maxBlock);
    // An expanded %{pts} would: the same string rendered by ffmpeg with expansion on differs between 1 s and 5 s.
    const expanded = (s: number) =>
      referenceFrame(
        sourceAt(s).file,
        sourceAt(s).offset,
        { text: 't=%{pts} n=%{n}', fontPx: FONT_PX, color: 'white@1', x: '(w-tw)/2', y: '(h-th)/2', expansion: 'normal' },
        SMALL,
      );
    expect(difference(await expanded(1), await expanded(3)).maxBlock).toBeGreaterThan(2 * SAME.maxBlock);
  });
});

describe('template rendering', () => {
  it('a mapping value that looks like a placeholder (%other%, [%name%]) is drawn literally', async () => {
    const template = await createTemplate(
      engine,
      parseTemplateBody({ name: 'hostile mapping', settings: [{ ...centred('to %name%!'), fontSize: FONT_SIZE }] }),
    );
    const rendered = renderTemplate(template.settings as TextSetting[], { name: '%other% [%name%]' }, '2.0');
    expect(rendered.ok).toBe(true);
    if (!rendered.ok) return;
    const content = (rendered.value[0] as TextSetting).content;
    expect(content).toBe('to %other% [%name%]!');
    const r = await renderWith(engine, KEY, rendered.value as unknown as Record<string, unknown>[]);
    const got = await decodeFrame(r.playlist, 1, SMALL);
    const d = difference(got, await literalRender('to %other% [%name%]!'));
    expect(d.maxBlock).toBeLessThan(SAME.maxBlock);
    expect(difference(got, await literalRender('to  !')).maxBlock).toBeGreaterThan(2 * SAME.maxBlock);
  });
});
