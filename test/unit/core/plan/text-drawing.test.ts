// Unit tests for the drawtext plans: filter escaping (checked against a model of ffmpeg's own tokenizer and once
// against the bundled ffmpeg), the drawtext filter of one line, and the multi-line text drawing.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FFMPEG, FONT } from '../../../../harness/tools.js';
import type { FontMetrics } from '../../../../src/core/font-metrics.js';
import { drawtextFilter, escapeFilterValue, fontPixels, textDrawing } from '../../../../src/core/plan/text-drawing.js';
import { DEFAULTS, type TextSetting } from '../../../../src/core/setting-types.js';

const execFileAsync = promisify(execFile);

// ---- a model of ffmpeg's tokenizer (libavutil/avstring.c av_get_token), used at both levels of filter parsing:
// the graph parser reads a filter's arguments with term "[],;", then the option parser reads each value with term ":".
const WHITESPACES = ' \n\t\r';

function avGetToken(buf: string, term: string): { token: string; rest: string } {
  let i = 0;
  while (i < buf.length && WHITESPACES.includes(buf[i]!)) i++;
  let out = '';
  let end = 0;
  while (i < buf.length && !term.includes(buf[i]!)) {
    const c = buf[i++]!;
    if (c === '\\' && i < buf.length) {
      out += buf[i++]!;
      end = out.length;
    } else if (c === "'") {
      while (i < buf.length && buf[i] !== "'") out += buf[i++]!;
      if (i < buf.length) {
        i++;
        end = out.length;
      }
    } else {
      out += c;
    }
  }
  let cut = out.length;
  while (cut > end && WHITESPACES.includes(out[cut - 1]!)) cut--;
  return { token: out.slice(0, cut), rest: buf.slice(i) };
}

/** What a filter option finally receives for an escaped value placed in a filtergraph. */
function unescapeTwice(escaped: string): string {
  const graph = avGetToken(escaped, '[],;');
  expect(graph.rest, 'the graph parser must consume the whole value').toBe('');
  const option = avGetToken(graph.token, ':');
  expect(option.rest, 'the option parser must consume the whole value').toBe('');
  return option.token;
}

/** Parses `name=k=v:k=v` the way the graph and option parsers do, returning the option values. */
function parseFilter(filter: string): { name: string; options: Record<string, string> } {
  const eq = filter.indexOf('=');
  const name = filter.slice(0, eq);
  const graph = avGetToken(filter.slice(eq + 1), '[],;');
  expect(graph.rest, `the whole filter must be one graph token: ${filter}`).toBe('');
  const options: Record<string, string> = {};
  let rest = graph.token;
  while (rest) {
    const key = /^([a-z_]+)=/.exec(rest);
    if (!key) throw new Error(`no key at ${rest}`);
    const value = avGetToken(rest.slice(key[0].length), ':');
    options[key[1]!] = value.token;
    rest = value.rest.startsWith(':') ? value.rest.slice(1) : value.rest;
  }
  return { name, options };
}

function setting(overrides: Partial<TextSetting> = {}): TextSetting {
  return { type: 'TEXT', content: 'hi', ...DEFAULTS, ...overrides };
}

function drawtext(overrides: Partial<TextSetting> = {}, frameHeight = 720, timeOrigin = 0) {
  const filter = drawtextFilter({ setting: setting(overrides), textFile: 'text_0.txt', fontFile: '/fonts/DejaVuSans.ttf', frameHeight, timeOrigin });
  return { filter, ...parseFilter(filter) };
}

/** Evaluates a drawtext x/y expression at time t (the subset wmark emits: arithmetic and clip()). */
function evaluate(expr: string, vars: { W?: number; H?: number; tw?: number; th?: number; ascent?: number; t: number }): number {
  expect(expr).toMatch(/^[-+*/().,0-9a-zA-Z]+$/);
  const clip = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const fn = new Function('W', 'H', 'tw', 'th', 'ascent', 't', 'clip', `return ${expr};`) as (...a: unknown[]) => number;
  return fn(vars.W ?? 1000, vars.H ?? 500, vars.tw ?? 100, vars.th ?? 20, vars.ascent ?? 15, vars.t, clip);
}

describe('escapeFilterValue', () => {
  it.each([
    [':', '\\\\:'],
    ["'", "\\\\\\'"],
    ['\\', '\\\\\\\\'],
    ['[', '\\['],
    [']', '\\]'],
    [',', '\\,'],
    [';', '\\;'],
  ])('escapes %s for both parsing levels', (ch, expected) => {
    expect(escapeFilterValue(ch)).toBe(expected);
    expect(unescapeTwice(escapeFilterValue(ch))).toBe(ch);
  });

  it('leaves plain paths alone', () => {
    expect(escapeFilterValue('/usr/share/fonts/DejaVuSans.ttf')).toBe('/usr/share/fonts/DejaVuSans.ttf');
    expect(escapeFilterValue('text_0.txt')).toBe('text_0.txt');
  });

  it.each([
    'C:\\Users\\me\\font.ttf',
    "/tmp/it's [a] test, really; ok:yes/text.txt",
    "a\\'b\\\\:c",
    "''''",
    '\\\\\\',
    '[in][out];[x],=',
    'W*(0.1+0.8*clip((t-3.466667)/4,0,1))-tw*0.5',
    'ünïcødé / 日本語',
  ])('round-trips %j through the graph and option parsers', (value) => {
    expect(unescapeTwice(escapeFilterValue(value))).toBe(value);
  });

  it('round-trips every printable ASCII character in one value', () => {
    const all = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
      .join('')
      .trim();
    expect(unescapeTwice(escapeFilterValue(all))).toBe(all);
  });
});

describe('drawtextFilter', () => {
  it('reads the text from a file with expansion off', () => {
    const { name, options, filter } = drawtext({ content: "%{pts} 50% \\ : '" });
    expect(name).toBe('drawtext');
    expect(options.textfile).toBe('text_0.txt');
    expect(options.expansion).toBe('none');
    expect(options).not.toHaveProperty('text');
    // The content itself never appears in the graph: it only lives in the text file.
    expect(filter).not.toContain('%{pts}');
    expect(options.fontfile).toBe('/fonts/DejaVuSans.ttf');
  });

  it('passes awkward font and text file paths through intact', () => {
    const fontFile = "/opt/my fonts/it's: [bold], v1;2\\x.ttf";
    const textFile = "/tmp/o'neil: [1], 2; 3\\text.txt";
    const filter = drawtextFilter({ setting: setting(), textFile, fontFile, frameHeight: 180, timeOrigin: 0 });
    const { options } = parseFilter(filter);
    expect(options.fontfile).toBe(fontFile);
    expect(options.textfile).toBe(textFile);
  });

  it.each([
    [0.05, 720, 36],
    [0.05, 180, 9],
    [0.037, 1080, 40],
    [0.0417, 360, 15],
    [0.5, 181, 91],
    [0.0001, 180, 1],
  ])('fontSize %d of a %dpx frame is %dpx', (fontSize, height, px) => {
    expect(fontPixels(setting({ fontSize }), height)).toBe(px);
    expect(drawtext({ fontSize }, height).options.fontsize).toBe(String(px));
  });

  it('writes the font colour with its opacity', () => {
    expect(drawtext({ fontColor: 'FF0000', fontOpacity: 0.5 }).options.fontcolor).toBe('0xFF0000@0.5');
    expect(drawtext({ fontColor: '00ff7f', fontOpacity: 1 }).options.fontcolor).toBe('0x00ff7f@1');
    expect(drawtext({ fontOpacity: 0 }).options.fontcolor).toBe('0xFFFFFF@0');
  });

  it.each([
    ['LEFT', 'TOP', 0, 0],
    ['CENTER', 'MIDDLE', 0.5, 0.5],
    ['RIGHT', 'BOTTOM', 1, 1],
  ] as const)('anchors %s/%s text by tw*%d and th*%d', (align, verticalAlign, hx, vy) => {
    const { options } = drawtext({ x: 0.25, y: 0.75, align, verticalAlign });
    expect(options.x).toBe(`W*0.25-tw*${hx}`);
    expect(options.y).toBe(`H*0.75-th*${vy}`);
    // Evaluated: the anchor point minus the aligned share of the text box.
    expect(evaluate(options.x!, { W: 1000, tw: 200, t: 0 })).toBe(250 - 200 * hx);
    expect(evaluate(options.y!, { H: 400, th: 40, t: 0 })).toBe(300 - 40 * vy);
  });

  it('never writes exponent notation or -0 into expressions', () => {
    const { options } = drawtext({ x: 1e-7, y: -1e-7, align: 'LEFT', verticalAlign: 'TOP' });
    expect(options.x).toBe('W*0-tw*0');
    expect(options.y).toBe('H*0-th*0');
    const tiny = drawtext({ x: 0.1, animation: { type: 'MOVE', toX: 0.1 + 2e-7, toY: 0.5, startTime: 0, endTime: 1 } });
    expect(tiny.filter).not.toMatch(/\de[-+]?\d/);
    expect(tiny.filter).not.toContain('-0*');
  });

  it('sizes the shadow in pixels of the font size', () => {
    // 0.05 * 720 = 36 px font; offsets are fractions of it.
    const { options } = drawtext({ fontSize: 0.05, shadowOffsetX: 0.08, shadowOffsetY: -0.25, shadowColor: '112233', shadowOpacity: 0.4 }, 720);
    expect(options.shadowx).toBe(String(Math.round(0.08 * 36)));
    expect(options.shadowy).toBe(String(Math.round(-0.25 * 36)));
    expect(options.shadowx).toBe('3');
    expect(options.shadowy).toBe('-9');
    expect(options.shadowcolor).toBe('0x112233@0.4');
  });

  it('rounds the shadow against the rounded font size', () => {
    // 0.049 * 180 = 8.82 -> 9 px; 0.5 * 9 = 4.5 -> 5 (0.5 * 8.82 would give 4).
    const { options } = drawtext({ fontSize: 0.049, shadowOffsetX: 0.5, shadowOffsetY: 0.5, shadowOpacity: 1 }, 180);
    expect(options.fontsize).toBe('9');
    expect(options.shadowx).toBe('5');
  });

  it('draws no shadow when its opacity is 0 or it rounds to no offset', () => {
    const transparent = drawtext({ shadowOpacity: 0, shadowOffsetX: 0.5, shadowOffsetY: 0.5 });
    expect(Object.keys(transparent.options).filter((k) => k.startsWith('shadow'))).toEqual([]);
    // 0.01 * 36 px = 0.36 px rounds to 0 in both directions.
    const none = drawtext({ shadowOpacity: 1, shadowOffsetX: 0.01, shadowOffsetY: -0.01 });
    expect(Object.keys(none.options).filter((k) => k.startsWith('shadow'))).toEqual([]);
  });

  it('moves linearly between startTime and endTime on the video timeline and clamps outside it', () => {
    const timeOrigin = 1.466667;
    const animation = { type: 'MOVE', toX: 0.9, toY: 0.2, startTime: 2, endTime: 6 } as const;
    const { options } = drawtext({ x: 0.1, y: 0.8, align: 'LEFT', verticalAlign: 'TOP', animation }, 720, timeOrigin);
    // drawtext's t is the frame's pts; the move starts at timeOrigin + startTime.
    expect(options.x).toBe('W*(0.1+0.8*clip((t-3.466667)/4,0,1))-tw*0');
    expect(options.y).toBe('H*(0.8+-0.6*clip((t-3.466667)/4,0,1))-th*0');
    const at = (videoTime: number) => ({
      x: evaluate(options.x!, { W: 1000, tw: 0, t: timeOrigin + videoTime }),
      y: evaluate(options.y!, { H: 1000, th: 0, t: timeOrigin + videoTime }),
    });
    expect(at(0).x).toBeCloseTo(100, 9);
    expect(at(1.99).x).toBeCloseTo(100, 9);
    expect(at(2).x).toBeCloseTo(100, 9);
    expect(at(4).x).toBeCloseTo(500, 6);
    expect(at(4).y).toBeCloseTo(500, 6);
    expect(at(6).x).toBeCloseTo(900, 6);
    expect(at(100).x).toBeCloseTo(900, 6);
    expect(at(100).y).toBeCloseTo(200, 6);
  });

  it('keeps a still coordinate constant when the move only changes the other axis', () => {
    const { options } = drawtext({ x: 0.3, y: 0.4, animation: { type: 'MOVE', toX: 0.3, toY: 0.9, startTime: 0, endTime: 1 } });
    expect(options.x).toBe('W*0.3-tw*0.5');
    expect(options.y).toContain('clip(');
  });

  it('escapes the expressions so their commas survive the graph parser', () => {
    const { filter, options } = drawtext({ animation: { type: 'MOVE', toX: 1, toY: 1, startTime: 0, endTime: 5 } });
    // Unescaped commas would end the filter (graph level) and break clip(a,b,c).
    expect(filter).toContain('clip((t-0)/5\\,0\\,1)');
    expect(options.x).toContain('clip((t-0)/5,0,1)');
  });
});

describe('textDrawing', () => {
  /** Round figures so the expected positions are easy to read: pitch 1.25 em, block height (n - 1) * pitch + 1.2 em. */
  const METRICS: FontMetrics = { ascent: 0.9, descent: 0.3, lineGap: 0.05 };
  const draw = (overrides: Partial<TextSetting>, index = 0, frameHeight = 400) =>
    textDrawing({ setting: setting(overrides), index, fontFile: '/fonts/DejaVuSans.ttf', frameHeight, timeOrigin: 0, metrics: METRICS });

  it('draws one line with one drawtext, exactly as drawtextFilter, reading text_<index>.txt', () => {
    const s = { content: "a:b 'c' %{pts}", x: 0.2, align: 'RIGHT', shadowOpacity: 0.5 } as const;
    const d = draw(s, 3);
    expect(d.files).toEqual([{ name: 'text_3.txt', content: s.content }]);
    expect(d.filters).toEqual([
      drawtextFilter({ setting: setting(s), textFile: 'text_3.txt', fontFile: '/fonts/DejaVuSans.ttf', frameHeight: 400, timeOrigin: 0 }),
    ]);
  });

  it('splits lines into files of their own, keeps every character but the newline, and skips empty lines', () => {
    const d = draw({ content: "top: 'x'\n\n  \\bottom %{n}\n" }, 1);
    expect(d.files).toEqual([
      { name: 'text_1_0.txt', content: "top: 'x'" },
      { name: 'text_1_2.txt', content: '  \\bottom %{n}' },
    ]);
    const read = d.filters.map((f) => parseFilter(f).options);
    expect(read.map((o) => o.textfile)).toEqual(['text_1_0.txt', 'text_1_2.txt', 'text_1_0.txt', 'text_1_2.txt']);
    for (const o of read) expect(o.expansion).toBe('none');
  });

  it.each([
    ['LEFT', 0],
    ['CENTER', 0.5],
    ['RIGHT', 1],
  ] as const)("aligns every line on its own at x (%s: minus %d of that line's width)", (align, share) => {
    const d = draw({ content: 'a\nbbbb\ncc', x: 0.25, align, shadowOpacity: 0 });
    expect(d.filters).toHaveLength(3);
    for (const [i, tw] of [40, 160, 80].entries()) {
      const x = parseFilter(d.filters[i]!).options.x!;
      expect(evaluate(x, { W: 1000, tw, t: 0 })).toBeCloseTo(250 - tw * share, 9);
    }
  });

  it.each([
    ['TOP', 0],
    ['MIDDLE', 0.5],
    ['BOTTOM', 1],
  ] as const)('puts the baselines one line pitch apart and the block (%s) at y', (verticalAlign, share) => {
    // 0.05 x 400 = 20 px font: pitch 25 px, block (3 lines) 2 x 25 + 24 = 74 px, its top at 200 - 74 x share.
    const d = draw({ content: 'one\ntwo\nthree', y: 0.5, fontSize: 0.05, verticalAlign, shadowOpacity: 0 });
    const top = 200 - 74 * share;
    for (const [j, ascent] of [13, 15, 14].entries()) {
      // drawtext puts a line's baseline `ascent` (its own tallest glyph) below y: the baseline itself is fixed.
      const y = evaluate(parseFilter(d.filters[j]!).options.y!, { H: 400, ascent, t: 0 });
      expect(y + ascent).toBeCloseTo(top + 18 + 25 * j, 9);
    }
  });

  it('draws every shadow before any text, offset in pixels of the font size, in the shadow colour', () => {
    const d = draw({
      content: 'x\ny',
      fontSize: 0.05,
      fontColor: 'FF0000',
      fontOpacity: 0.7,
      shadowColor: '0000FF',
      shadowOpacity: 0.4,
      shadowOffsetX: 0.1,
      shadowOffsetY: -0.2,
    });
    const read = d.filters.map((f) => parseFilter(f).options);
    expect(read.map((o) => o.fontcolor)).toEqual(['0x0000FF@0.4', '0x0000FF@0.4', '0xFF0000@0.7', '0xFF0000@0.7']);
    for (const o of read) expect(Object.keys(o).filter((k) => k.startsWith('shadow'))).toEqual([]);
    for (const j of [0, 1]) {
      const shadow = read[j]!;
      const text = read[j + 2]!;
      const vars = { W: 1000, H: 400, tw: 30, ascent: 14, t: 0 };
      expect(evaluate(shadow.x!, vars) - evaluate(text.x!, vars)).toBeCloseTo(2, 9);
      expect(evaluate(shadow.y!, vars) - evaluate(text.y!, vars)).toBeCloseTo(-4, 9);
    }
  });

  it('moves every line with the MOVE animation, keeping the layout', () => {
    const animation = { type: 'MOVE', toX: 0.9, toY: 0.1, startTime: 0, endTime: 10 } as const;
    const d = draw({ content: 'a\nb', x: 0.1, y: 0.9, align: 'LEFT', verticalAlign: 'TOP', animation, shadowOpacity: 0 });
    const pos = (j: number, t: number) => {
      const o = parseFilter(d.filters[j]!).options;
      return [evaluate(o.x!, { W: 1000, H: 400, ascent: 10, t }), evaluate(o.y!, { W: 1000, H: 400, ascent: 10, t })];
    };
    expect(pos(0, 5)).toEqual([expect.closeTo(500, 6), expect.closeTo(200 + 18 - 10, 6)]);
    expect(pos(1, 5)[1]! - pos(0, 5)[1]!).toBeCloseTo(25, 9);
    expect(pos(1, 20)[0]).toBeCloseTo(900, 6);
  });
});

describe('drawtextFilter with the bundled ffmpeg', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Renders one 160x90 grey frame with the filter and returns its raw RGB bytes. */
  async function render(filter: string, cwd: string): Promise<Buffer> {
    const script = path.join(cwd, 'graph.txt');
    writeFileSync(script, filter);
    const { stdout } = await execFileAsync(
      FFMPEG,
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=c=0x808080:size=160x90:rate=1',
        '-frames:v',
        '1',
        '-filter_script:v',
        script,
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        'pipe:1',
      ],
      { cwd, encoding: 'buffer', maxBuffer: 1 << 20 },
    );
    return stdout;
  }

  it('reads font and text files whose paths hold every filter metacharacter', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'wmark-esc-'));
    dirs.push(base);
    const plain = path.join(base, 'plain');
    const nasty = path.join(base, "it's: [a] b, c; d\\e");
    for (const dir of [plain, nasty]) {
      mkdirSync(dir, { recursive: true });
      copyFileSync(FONT, path.join(dir, 'font.ttf'));
      // Text that expansion would interpret, and filter metacharacters: drawn as is.
      writeFileSync(path.join(dir, 'text.txt'), "W%{pts}:'\\[,;]");
    }
    const filterFor = (dir: string) =>
      drawtextFilter({
        setting: setting({ x: 0.5, y: 0.5, fontSize: 0.3, fontColor: 'FFFFFF', fontOpacity: 1, shadowOpacity: 0 }),
        textFile: path.join(dir, 'text.txt'),
        fontFile: path.join(dir, 'font.ttf'),
        frameHeight: 90,
        timeOrigin: 0,
      });
    const blank = Buffer.alloc(160 * 90 * 3, 0x80);
    const fromPlain = await render(filterFor(plain), base);
    const fromNasty = await render(filterFor(nasty), base);
    expect(fromPlain).toHaveLength(blank.length);
    // Text was drawn (the frame is no longer plain grey) and the escaped paths found the very same files.
    expect(fromPlain.equals(blank)).toBe(false);
    expect(fromNasty.equals(fromPlain)).toBe(true);
  });
});
