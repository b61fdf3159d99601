// Unit tests for watermark setting validation, normalisation, canonical form and identity.
import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '../../../src/core/api-version.js';
import { decodeForensicContent, encodeForensicContent } from '../../../src/core/forensic-payload.js';
import type { Result } from '../../../src/core/issue-text.js';
import { parseSettings, parseTemplateSettings } from '../../../src/core/setting-schema.js';
import { DEFAULTS, IMAGE_DEFAULTS, type ImageSetting, type Setting, type TextSetting } from '../../../src/core/setting-types.js';
import { canonicalSettings, watermarkIdentity } from '../../../src/core/watermark-identity.js';

function ok<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got issues:\n${r.issues.join('\n')}`);
  return r.value;
}

function issues<T>(r: Result<T>): string[] {
  if (r.ok) throw new Error(`expected issues, got ${JSON.stringify(r.value)}`);
  return r.issues;
}

const v2 = { apiVersion: '2.0' } as const;

function one(setting: Record<string, unknown>, apiVersion: ApiVersion = '2.0'): Setting {
  const [s] = ok(parseSettings([setting], { apiVersion }));
  if (s === undefined) throw new Error('no setting');
  return s;
}

function text(setting: Record<string, unknown>): TextSetting {
  const s = one({ content: 'hi', ...setting });
  if (s.type !== 'TEXT') throw new Error('not TEXT');
  return s;
}

function bad(setting: Record<string, unknown>, apiVersion: ApiVersion = '2.0'): string[] {
  return issues(parseSettings([setting], { apiVersion }));
}

describe('parseSettings: array shape', () => {
  it('rejects a non-array', () => {
    expect(issues(parseSettings({ content: 'x' }, v2))).toEqual(['settings: expected a non-empty array of setting objects, got an object']);
    expect(issues(parseSettings(undefined, v2))[0]).toMatch(/^settings: expected a non-empty array/);
  });

  it('rejects an empty array', () => {
    expect(issues(parseSettings([], v2))).toEqual(['settings: expected at least 1 setting, got an empty array']);
  });

  it('accepts 20 settings and rejects 21', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => ({ content: `t${i}` }));
    expect(ok(parseSettings(twenty, v2))).toHaveLength(20);
    expect(issues(parseSettings([...twenty, { content: 'x' }], v2))).toEqual(['settings: expected at most 20 settings, got 21']);
  });

  it('rejects non-object elements with their index', () => {
    expect(issues(parseSettings([{ content: 'a' }, 'b', null, []], v2))).toEqual([
      'settings[1]: expected a setting object, got the string "b"',
      'settings[2]: expected a setting object, got null',
      'settings[3]: expected a setting object, got an array',
    ]);
  });

  it('uses opts.path as the prefix', () => {
    expect(issues(parseSettings([{ content: 'a', x: 'no' }], { apiVersion: '1.0', path: 'body.settings' }))[0]).toMatch(/^body\.settings\[0\]\.x: /);
  });

  it('keeps the order of settings (drawing order)', () => {
    const s = ok(parseSettings([{ content: 'first' }, { content: 'second' }], v2));
    expect(s.map((x) => (x.type === 'TEXT' ? x.content : ''))).toEqual(['first', 'second']);
  });
});

describe('parseSettings: TEXT defaults and fields', () => {
  it('fills every default', () => {
    expect(one({ content: 'hello' })).toEqual({
      type: 'TEXT',
      content: 'hello',
      x: 0.5,
      y: 0.5,
      align: 'CENTER',
      verticalAlign: 'MIDDLE',
      fontSize: 0.05,
      fontColor: 'FFFFFF',
      fontOpacity: 0.3,
      shadowColor: '000000',
      shadowOpacity: 0.1,
      shadowOffsetX: 0.08,
      shadowOffsetY: 0.08,
    });
    expect(DEFAULTS.fontSize).toBe(0.05);
  });

  it('accepts every field with explicit values', () => {
    const s = text({
      type: 'TEXT',
      x: 0.1,
      y: 0.9,
      align: 'LEFT',
      verticalAlign: 'TOP',
      fontSize: 0.1,
      fontColor: 'ff0000',
      fontOpacity: 1,
      shadowColor: '00ff00',
      shadowOpacity: 0,
      shadowOffsetX: -0.2,
      shadowOffsetY: 0.3,
      animation: { type: 'MOVE', toX: -0.5, toY: 0.2, startTime: 1, endTime: 5.5 },
    });
    expect(s).toEqual({
      type: 'TEXT',
      content: 'hi',
      x: 0.1,
      y: 0.9,
      align: 'LEFT',
      verticalAlign: 'TOP',
      fontSize: 0.1,
      fontColor: 'FF0000',
      fontOpacity: 1,
      shadowColor: '00FF00',
      shadowOpacity: 0,
      shadowOffsetX: -0.2,
      shadowOffsetY: 0.3,
      animation: { type: 'MOVE', toX: -0.5, toY: 0.2, startTime: 1, endTime: 5.5 },
    });
  });

  it('accepts type case-insensitively', () => {
    expect(text({ type: 'text' }).type).toBe('TEXT');
    expect(text({ type: 'Text' }).type).toBe('TEXT');
    expect(one({ type: 'forensic', content: 'QUI' }).type).toBe('FORENSIC');
  });

  it('rejects an unknown type with a suggestion', () => {
    expect(bad({ type: 'TXT', content: 'a' })).toEqual([
      'settings[0].type: expected TEXT, IMAGE or FORENSIC (case-insensitive), got the string "TXT" (did you mean "TEXT"?)',
    ]);
    expect(bad({ type: 'VIDEO', content: 'a' })[0]).toBe('settings[0].type: expected TEXT, IMAGE or FORENSIC (case-insensitive), got the string "VIDEO"');
  });

  it.each([
    ['LEFT', 'LEFT'],
    ['left', 'LEFT'],
    ['Right', 'RIGHT'],
    ['center', 'CENTER'],
    ['MIDDLE', 'CENTER'],
    ['middle', 'CENTER'],
  ])('align %s -> %s', (input, expected) => {
    expect(text({ align: input }).align).toBe(expected);
    expect(text({ horizontalAlignment: input }).align).toBe(expected);
  });

  it.each([
    ['TOP', 'TOP'],
    ['top', 'TOP'],
    ['Middle', 'MIDDLE'],
    ['CENTER', 'MIDDLE'],
    ['center', 'MIDDLE'],
    ['bottom', 'BOTTOM'],
  ])('verticalAlign %s -> %s', (input, expected) => {
    expect(text({ verticalAlign: input }).verticalAlign).toBe(expected);
    expect(text({ verticalAlignment: input }).verticalAlign).toBe(expected);
  });

  it('rejects bad alignment values', () => {
    expect(bad({ content: 'a', align: 'TOP' })).toEqual(['settings[0].align: expected one of LEFT, CENTER, RIGHT (case-insensitive), got "TOP"']);
    expect(bad({ content: 'a', verticalAlignment: 'LEFT' })).toEqual([
      'settings[0].verticalAlignment: expected one of TOP, MIDDLE, CENTER, BOTTOM (case-insensitive), got "LEFT"',
    ]);
    expect(bad({ content: 'a', verticalAlign: 1 })[0]).toMatch(/verticalAlign: expected one of .* got 1$/);
  });

  it('accepts a key and its alias when they agree, rejects them when they conflict', () => {
    expect(text({ align: 'left', horizontalAlignment: 'LEFT' }).align).toBe('LEFT');
    expect(text({ verticalAlign: 'CENTER', verticalAlignment: 'middle' }).verticalAlign).toBe('MIDDLE');
    expect(bad({ content: 'a', align: 'LEFT', horizontalAlignment: 'RIGHT' })).toEqual([
      'settings[0].horizontalAlignment: conflicts with align (RIGHT vs LEFT); give only one of align or horizontalAlignment',
    ]);
  });

  it.each([
    ['FF00aa', 'FF00AA'],
    ['#ff00aa', 'FF00AA'],
    ['0xff00aa', 'FF00AA'],
    ['0XFF00AA', 'FF00AA'],
    ['#ABCDEF', 'ABCDEF'],
    ['000000', '000000'],
  ])('colour %s -> %s', (input, expected) => {
    const s = text({ fontColor: input, shadowColor: input });
    expect(s.fontColor).toBe(expected);
    expect(s.shadowColor).toBe(expected);
  });

  it.each(['red', 'FFF', '#FFF', 'FFFFFFF', '0x', '##FFFFFF', 'GGGGGG', ' FFFFFF', 'FFFFFF ', '0xFFFFFFFF'])('rejects colour %j', (input) => {
    expect(bad({ content: 'a', fontColor: input })).toEqual([
      `settings[0].fontColor: expected a colour as RRGGBB (6 hex digits, optional # or 0x prefix), got ${JSON.stringify(input)}`,
    ]);
  });

  it('rejects a non-string colour', () => {
    expect(bad({ content: 'a', shadowColor: 0xffffff })).toEqual([
      'settings[0].shadowColor: expected a colour as RRGGBB (6 hex digits, optional # or 0x prefix), got 16777215',
    ]);
  });

  it('rejects a numeric string with a clear message', () => {
    expect(bad({ content: 'a', fontOpacity: '0.5' })).toEqual([
      'settings[0].fontOpacity: expected a number (opacity 0..1), got the string "0.5" (numbers must be sent unquoted)',
    ]);
    expect(bad({ content: 'a', x: 'left' })).toEqual(['settings[0].x: expected a number (fraction of frame width), got the string "left"']);
    expect(bad({ content: 'a', fontSize: true })).toEqual(['settings[0].fontSize: expected a number (fraction of frame height), got true']);
  });

  it.each([
    ['x', -10],
    ['x', 10],
    ['y', -10],
    ['y', 10],
    ['x', 0],
    ['fontSize', 1],
    ['fontSize', 0.0001],
    ['fontOpacity', 0],
    ['fontOpacity', 1],
    ['shadowOpacity', 0],
    ['shadowOpacity', 1],
    ['shadowOffsetX', -5],
    ['shadowOffsetX', 5],
    ['shadowOffsetY', -5],
    ['shadowOffsetY', 5],
  ])('accepts boundary %s = %d', (key, value) => {
    expect(text({ [key]: value })[key as keyof TextSetting]).toBe(value);
  });

  it.each([
    ['x', 10.01, '[-10, 10]'],
    ['x', -11, '[-10, 10]'],
    ['y', 11, '[-10, 10]'],
    ['y', -10.5, '[-10, 10]'],
    ['x', Number.NaN, '[-10, 10]'],
    ['y', Number.POSITIVE_INFINITY, '[-10, 10]'],
    ['fontSize', 0, '(0, 1]'],
    ['fontSize', -0.1, '(0, 1]'],
    ['fontSize', 1.5, '(0, 1]'],
    ['fontOpacity', -0.01, '[0, 1]'],
    ['fontOpacity', 1.01, '[0, 1]'],
    ['shadowOpacity', -1, '[0, 1]'],
    ['shadowOpacity', 2, '[0, 1]'],
    ['shadowOffsetX', 5.1, '[-5, 5]'],
    ['shadowOffsetX', -6, '[-5, 5]'],
    ['shadowOffsetY', 6, '[-5, 5]'],
    ['shadowOffsetY', -5.5, '[-5, 5]'],
  ])('rejects %s = %d (range %s)', (key, value, range) => {
    const got = bad({ content: 'a', [key]: value });
    expect(got).toHaveLength(1);
    expect(got[0]).toContain(`settings[0].${key}: expected a number in ${range}`);
    expect(got[0]).toMatch(new RegExp(`got ${String(value).replace('.', '\\.')}$`));
  });

  it('normalises -0 to 0', () => {
    expect(Object.is(text({ x: -0 }).x, 0)).toBe(true);
  });
});

describe('parseSettings: animation', () => {
  it('defaults type to MOVE and toX/toY to x/y', () => {
    expect(text({ x: 0.2, y: 0.7, animation: { startTime: 0, endTime: 3 } }).animation).toEqual({
      type: 'MOVE',
      toX: 0.2,
      toY: 0.7,
      startTime: 0,
      endTime: 3,
    });
    expect(text({ animation: { toX: -0.3, startTime: 2, endTime: 4 } }).animation).toEqual({
      type: 'MOVE',
      toX: -0.3,
      toY: 0.5,
      startTime: 2,
      endTime: 4,
    });
  });

  it('accepts type move case-insensitively', () => {
    expect(text({ animation: { type: 'move', toY: 1, startTime: 0, endTime: 1 } }).animation?.type).toBe('MOVE');
  });

  it('accepts the 86400 s upper bound', () => {
    expect(text({ animation: { startTime: 0, endTime: 86400 } }).animation?.endTime).toBe(86400);
  });

  it('rejects a bad animation type', () => {
    expect(bad({ content: 'a', animation: { type: 'FADE', startTime: 0, endTime: 1 } })).toEqual([
      'settings[0].animation.type: expected one of MOVE (case-insensitive), got "FADE"',
    ]);
  });

  it('rejects a non-object animation', () => {
    expect(bad({ content: 'a', animation: 'MOVE' })[0]).toMatch(/^settings\[0\]\.animation: expected an object/);
  });

  it('requires startTime and endTime', () => {
    expect(bad({ content: 'a', animation: { toX: 1 } })).toEqual([
      'settings[0].animation.startTime: required (seconds of the video timeline)',
      'settings[0].animation.endTime: required (seconds of the video timeline)',
    ]);
  });

  it.each([
    [{ startTime: -1, endTime: 2 }, 'settings[0].animation.startTime: expected a number in [0, 86400] (seconds), got -1'],
    [{ startTime: 0, endTime: 86401 }, 'settings[0].animation.endTime: expected a number in [0, 86400] (seconds), got 86401'],
    [{ startTime: 3, endTime: 3 }, 'settings[0].animation.endTime: must be greater than startTime (3), got 3'],
    [{ startTime: 5, endTime: 2 }, 'settings[0].animation.endTime: must be greater than startTime (5), got 2'],
    [{ startTime: '1', endTime: 2 }, 'settings[0].animation.startTime: expected a number (seconds), got the string "1" (numbers must be sent unquoted)'],
    [{ startTime: 0, endTime: 1, toX: 11 }, 'settings[0].animation.toX: expected a number in [-10, 10] (fraction of frame width), got 11'],
    [{ startTime: 0, endTime: 1, toY: -10.5 }, 'settings[0].animation.toY: expected a number in [-10, 10] (fraction of frame height), got -10.5'],
    [{ startTime: 0, endTime: Number.POSITIVE_INFINITY }, 'settings[0].animation.endTime: expected a number in [0, 86400] (seconds), got Infinity'],
  ])('rejects %j', (animation, message) => {
    expect(bad({ content: 'a', animation })).toEqual([message]);
  });

  it('rejects an unknown animation key with a suggestion', () => {
    expect(bad({ content: 'a', animation: { tox: 1, startTime: 0, endTime: 1 } })).toEqual([
      'settings[0].animation.tox: unknown key "tox" (did you mean "toX"?); allowed keys: type, toX, toY, startTime, endTime',
    ]);
  });
});

describe('parseSettings: content', () => {
  it('requires content', () => {
    expect(bad({ x: 0.1 })).toEqual(['settings[0].content: required (the text to draw)']);
  });

  it('rejects non-string, empty, whitespace-only and too-long content', () => {
    expect(bad({ content: 42 })).toEqual(['settings[0].content: expected a string, got 42']);
    expect(bad({ content: '' })).toEqual(['settings[0].content: expected 1 to 1000 characters, got 0']);
    expect(bad({ content: ' \n\t ' })).toEqual(['settings[0].content: must contain at least one non-whitespace character']);
    expect(bad({ content: 'a'.repeat(1001) })).toEqual(['settings[0].content: expected 1 to 1000 characters, got 1001']);
  });

  it('accepts exactly 1000 characters, counting an emoji as one', () => {
    expect(text({ content: 'a'.repeat(1000) }).content).toHaveLength(1000);
    expect(text({ content: '😀'.repeat(1000) }).content).toBe('😀'.repeat(1000));
  });

  it('rejects a lone surrogate and NUL', () => {
    expect(bad({ content: 'a\uD800b' })).toEqual(['settings[0].content: contains an unpaired UTF-16 surrogate']);
    expect(bad({ content: 'a\u0000b' })).toEqual(['settings[0].content: contains a NUL character']);
  });

  it.each([
    'time: 12:30',
    "it's",
    'back\\slash \\n',
    '%{pts} %{localtime} %{eif:1:d}',
    'line one\nline two\r\n',
    '  padded  ',
    'emoji 🎬👩‍👩‍👧',
    'שלום עולם',
    '%name% [%email%]',
    '<script>alert(1)</script>',
    "drawtext=text='x':fontsize=99",
  ])('keeps hostile content verbatim: %j', (content) => {
    expect(text({ content }).content).toBe(content);
  });
});

describe('parseSettings: unknown keys and issue collection', () => {
  it('names an unknown key and suggests the closest known key', () => {
    expect(bad({ content: 'a', fontColour: 'FFFFFF' })[0]).toMatch(
      /^settings\[0\]\.fontColour: unknown key "fontColour" \(did you mean "fontColor"\?\); allowed keys: type, content/,
    );
    expect(bad({ content: 'a', FontSize: 0.1 })[0]).toContain('(did you mean "fontSize"?)');
    expect(bad({ content: 'a', shadowoffsetx: 0.1 })[0]).toContain('(did you mean "shadowOffsetX"?)');
    expect(bad({ content: 'a', verticalAlignement: 'TOP' })[0]).toContain('(did you mean "verticalAlignment"?)');
  });

  it('gives no suggestion when nothing is close', () => {
    const [issue] = bad({ content: 'a', watermarkImage: 'x.png' });
    expect(issue).toMatch(/^settings\[0\]\.watermarkImage: unknown key "watermarkImage"; allowed keys:/);
    expect(issue).not.toContain('did you mean');
  });

  it('quotes odd key names in the path', () => {
    expect(bad({ content: 'a', 'font color': 'FFFFFF' })[0]).toMatch(/^settings\[0\]\["font color"\]: unknown key/);
  });

  it('collects all issues across fields and settings', () => {
    const got = issues(
      parseSettings(
        [
          { content: 'ok', fontColor: 'red', x: 11, fontSize: '0.1' },
          { content: '', align: 'UP', colour: 'FFFFFF', animation: { startTime: 4, endTime: 1 } },
          { type: 'FORENSIC', content: 'ABC' },
        ],
        v2,
      ),
    );
    expect(got).toHaveLength(8);
    expect(got).toContain('settings[1].content: expected 1 to 1000 characters, got 0');
    expect(got.map((i) => i.split(':')[0])).toEqual([
      'settings[0].x',
      'settings[0].fontSize',
      'settings[0].fontColor',
      'settings[1].colour',
      'settings[1].content',
      'settings[1].align',
      'settings[1].animation.endTime',
      'settings[2].content',
    ]);
  });
});

describe('parseSettings: FORENSIC', () => {
  it('1.0: two ASCII characters give a big-endian payload', () => {
    expect(one({ type: 'FORENSIC', content: 'AB' }, '1.0')).toEqual({ type: 'FORENSIC', payload: 0x4142 });
    expect(one({ type: 'FORENSIC', content: '\u0000\u007f' }, '1.0')).toEqual({ type: 'FORENSIC', payload: 0x007f });
    expect(one({ type: 'FORENSIC', content: '~~' }, '1.0')).toEqual({ type: 'FORENSIC', payload: 0x7e7e });
  });

  it.each([
    ['ABC', '3 characters'],
    ['A', '1 characters'],
    ['', '0 characters'],
    ['Aé', 'non-ASCII characters'],
    ['😀', 'non-ASCII characters'],
    ['שׁ', 'non-ASCII characters'],
  ])('1.0: rejects %j', (content, why) => {
    expect(bad({ type: 'FORENSIC', content }, '1.0')).toEqual([
      `settings[0].content: expected exactly 2 ASCII characters (16-bit payload, API 1.0, e.g. "AB"), got ${JSON.stringify(content)} (${why})`,
    ]);
  });

  it.each([
    ['QUI=', 0x4142],
    ['QUI', 0x4142],
    ['//8=', 0xffff],
    ['__8', 0xffff],
    ['__8=', 0xffff],
    ['AAA=', 0],
    ['-_8', 0xfbff],
  ])('2.0: accepts base64 %j', (content, payload) => {
    expect(one({ type: 'FORENSIC', content }, '2.0')).toEqual({ type: 'FORENSIC', payload });
  });

  it.each([
    ['QUJD', 'decodes to 3 bytes'],
    ['QQ==', 'decodes to 1 bytes'],
    ['', 'decodes to 0 bytes'],
    ['AA', 'decodes to 1 bytes'],
    ['AB', 'not canonical base64: unused low bits of the last character must be zero'],
    ['not base64!', 'not valid base64'],
    ['QUI==', 'not valid base64'],
    ['QUJ', 'not canonical base64: unused low bits of the last character must be zero'],
    ['Q UI', 'not valid base64'],
    ['+_8', 'not valid base64'],
  ])('2.0: rejects %j (%s)', (content, why) => {
    expect(bad({ type: 'FORENSIC', content }, '2.0')).toEqual([
      `settings[0].content: expected base64 of exactly 2 bytes (16-bit payload, API 2.0, standard or URL-safe alphabet, padding optional, e.g. "QUI="), got ${JSON.stringify(content)} (${why})`,
    ]);
  });

  it('1.0 content is not accepted as 2.0 and vice versa', () => {
    expect(bad({ type: 'FORENSIC', content: 'QUI=' }, '1.0')).toHaveLength(1);
    expect(bad({ type: 'FORENSIC', content: 'AB' }, '2.0')).toHaveLength(1);
  });

  it('requires a string content', () => {
    expect(bad({ type: 'FORENSIC' })).toEqual(['settings[0].content: required (the 16-bit forensic payload)']);
    expect(bad({ type: 'FORENSIC', content: 16706 })).toEqual(['settings[0].content: expected a string, got 16706']);
  });

  it('accepts only type and content', () => {
    expect(bad({ type: 'FORENSIC', content: 'QUI', x: 0.3, paylod: 1 })).toEqual([
      'settings[0].x: not allowed on a FORENSIC setting (only type and content)',
      'settings[0].paylod: unknown key "paylod"; allowed keys: type, content',
    ]);
    expect(bad({ type: 'FORENSIC', content: 'QUI', contnt: 1 })[0]).toContain('(did you mean "content"?)');
  });

  it('allows at most one FORENSIC setting per request', () => {
    expect(issues(parseSettings([{ type: 'FORENSIC', content: 'QUI' }, { content: 'visible' }, { type: 'forensic', content: 'QUM' }], v2))).toEqual([
      'settings[2]: at most one FORENSIC setting per request (settings[0] is already FORENSIC)',
    ]);
  });

  it('mixes TEXT and FORENSIC', () => {
    const s = ok(parseSettings([{ content: 'user@example.com' }, { type: 'FORENSIC', content: 'AB' }], { apiVersion: '1.0' }));
    expect(s.map((x) => x.type)).toEqual(['TEXT', 'FORENSIC']);
  });

  it('decode/encode round-trip', () => {
    for (const payload of [0, 1, 0x4142, 0x7f7f, 0x8000, 0xffff]) {
      const b64 = encodeForensicContent(payload, '2.0');
      expect(b64).toBeDefined();
      expect(decodeForensicContent(b64!, '2.0')).toEqual({ ok: true, payload });
    }
    expect(encodeForensicContent(0x4142, '1.0')).toBe('AB');
    expect(encodeForensicContent(0x4142, '2.0')).toBe('QUI=');
    expect(encodeForensicContent(0x80ff, '1.0')).toBeUndefined();
    expect(encodeForensicContent(70000, '2.0')).toBeUndefined();
  });
});

describe('parseTemplateSettings / allowPlaceholders', () => {
  it('keeps placeholder content in TEXT and FORENSIC unparsed', () => {
    const r = ok(
      parseTemplateSettings([
        { content: 'Licensed to %name% [%email%]', fontColor: '#abcdef' },
        { type: 'FORENSIC', content: '[%payload%]' },
      ]),
    );
    expect(r[0]).toMatchObject({ type: 'TEXT', content: 'Licensed to %name% [%email%]', fontColor: 'ABCDEF' });
    expect(r[1]).toEqual({ type: 'FORENSIC', content: '[%payload%]' });
  });

  it('parseSettings with allowPlaceholders gives the same result', () => {
    const input = [{ type: 'FORENSIC', content: '%payload%' }];
    expect(parseSettings(input, { apiVersion: '1.0', allowPlaceholders: true })).toEqual(parseTemplateSettings(input, { apiVersion: '1.0' }));
  });

  it('without placeholders, placeholders-free text is checked now', () => {
    expect(issues(parseTemplateSettings([{ content: '   ' }]))).toEqual(['settings[0].content: must contain at least one non-whitespace character']);
  });

  it('checks literal FORENSIC content only when a version is given', () => {
    expect(ok(parseTemplateSettings([{ type: 'FORENSIC', content: 'ABC' }]))).toEqual([{ type: 'FORENSIC', content: 'ABC' }]);
    expect(issues(parseTemplateSettings([{ type: 'FORENSIC', content: 'ABC' }], { apiVersion: '1.0' }))[0]).toContain('exactly 2 ASCII characters');
    expect(ok(parseTemplateSettings([{ type: 'FORENSIC', content: 'AB' }], { apiVersion: '1.0' }))).toEqual([{ type: 'FORENSIC', content: 'AB' }]);
    expect(issues(parseTemplateSettings([{ type: 'FORENSIC', content: '' }]))[0]).toContain('empty string');
  });

  it('still validates the other fields', () => {
    expect(issues(parseTemplateSettings([{ content: '%name%', fontSize: 2, bogus: 1 }]))).toHaveLength(2);
  });

  it('caps raw template content at 1000 characters', () => {
    expect(issues(parseTemplateSettings([{ content: `%a%${'x'.repeat(1000)}` }]))).toEqual(['settings[0].content: expected at most 1000 characters, got 1003']);
  });

  it('without allowPlaceholders, placeholder-looking text is literal content', () => {
    expect(text({ content: '%name%' }).content).toBe('%name%');
    expect(bad({ type: 'FORENSIC', content: '%payload%' })).toHaveLength(1);
  });
});

describe('canonicalSettings and watermarkIdentity', () => {
  const canon = (input: unknown[], apiVersion: ApiVersion = '2.0'): string => canonicalSettings(ok(parseSettings(input, { apiVersion })));

  it('is sorted JSON with defaults filled', () => {
    const c = canon([{ content: 'a' }]);
    expect(JSON.parse(c)).toEqual([
      {
        align: 'CENTER',
        content: 'a',
        fontColor: 'FFFFFF',
        fontOpacity: 0.3,
        fontSize: 0.05,
        shadowColor: '000000',
        shadowOffsetX: 0.08,
        shadowOffsetY: 0.08,
        shadowOpacity: 0.1,
        type: 'TEXT',
        verticalAlign: 'MIDDLE',
        x: 0.5,
        y: 0.5,
      },
    ]);
    expect(c.startsWith('[{"align":"CENTER","content":"a","fontColor":"FFFFFF"')).toBe(true);
  });

  it('is equal for defaults given explicitly, aliases, case, colour prefixes and key order', () => {
    const base = canon([{ content: 'viewer', fontColor: 'ff0000', align: 'LEFT', verticalAlign: 'TOP' }]);
    expect(canon([{ content: 'viewer', fontColor: 'FF0000', align: 'LEFT', verticalAlign: 'TOP' }])).toBe(base);
    expect(canon([{ content: 'viewer', fontColor: '#ff0000', horizontalAlignment: 'left', verticalAlignment: 'top' }])).toBe(base);
    expect(canon([{ verticalAlign: 'Top', align: 'left', fontColor: '0xFF0000', content: 'viewer', type: 'text' }])).toBe(base);
    expect(
      canon([
        {
          type: 'TEXT',
          content: 'viewer',
          fontColor: 'FF0000',
          align: 'LEFT',
          verticalAlign: 'TOP',
          x: 0.5,
          y: 0.5,
          fontSize: 0.05,
          fontOpacity: 0.3,
          shadowColor: '#000000',
          shadowOpacity: 0.1,
          shadowOffsetX: 0.08,
          shadowOffsetY: 0.08,
        },
      ]),
    ).toBe(base);
    expect(canon([{ content: 'a', align: 'MIDDLE', verticalAlign: 'CENTER' }])).toBe(canon([{ content: 'a' }]));
  });

  it('is equal for an animation with defaults filled and type given or not', () => {
    expect(canon([{ content: 'a', x: 0.1, animation: { startTime: 0, endTime: 2 } }])).toBe(
      canon([{ content: 'a', x: 0.1, animation: { type: 'move', toX: 0.1, toY: 0.5, startTime: 0, endTime: 2 } }]),
    );
  });

  it('is equal for the same FORENSIC payload in 1.0 and 2.0 notation', () => {
    expect(canon([{ type: 'FORENSIC', content: 'AB' }], '1.0')).toBe(canon([{ type: 'FORENSIC', content: 'QUI=' }], '2.0'));
    expect(canon([{ type: 'FORENSIC', content: 'QUI' }])).toBe('[{"payload":16706,"type":"FORENSIC"}]');
  });

  it('differs for any change', () => {
    const a = canon([{ content: 'a', shadowOpacity: 0.33 }]);
    expect(canon([{ content: 'a', shadowOpacity: 0.34 }])).not.toBe(a);
    expect(canon([{ content: 'a ', shadowOpacity: 0.33 }])).not.toBe(a);
    expect(canon([{ content: 'A', shadowOpacity: 0.33 }])).not.toBe(a);
    expect(canon([{ content: 'a', shadowOpacity: 0.33, animation: { startTime: 0, endTime: 1 } }])).not.toBe(a);
    expect(canon([{ type: 'FORENSIC', content: 'QUI' }])).not.toBe(canon([{ type: 'FORENSIC', content: 'QUM' }]));
  });

  it('depends on the order of settings', () => {
    expect(canon([{ content: 'a' }, { content: 'b' }])).not.toBe(canon([{ content: 'b' }, { content: 'a' }]));
  });

  it('ignores stray properties on the objects', () => {
    const s = ok(parseSettings([{ content: 'a' }], v2));
    const withExtra = s.map((x) => ({ ...x, extra: 1 }));
    expect(canonicalSettings(withExtra)).toBe(canonicalSettings(s));
  });

  it('watermarkIdentity is 32 lowercase hex, stable, and depends on video and settings', () => {
    const s = ok(parseSettings([{ content: 'a', shadowOpacity: 0.33 }], v2));
    const id = watermarkIdentity('vid-1', s);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(watermarkIdentity('vid-1', ok(parseSettings([{ shadowOpacity: 0.33, content: 'a', type: 'text' }], v2)))).toBe(id);
    expect(watermarkIdentity('vid-2', s)).not.toBe(id);
    expect(watermarkIdentity('vid-1', ok(parseSettings([{ content: 'a', shadowOpacity: 0.34 }], v2)))).not.toBe(id);
  });

  it('watermarkIdentity matches sha256(videoId + "\\n" + canonical)', async () => {
    const { createHash } = await import('node:crypto');
    const s = ok(parseSettings([{ content: 'שלום 😀\n' }], v2));
    const expected = createHash('sha256')
      .update(`v\n${canonicalSettings(s)}`)
      .digest('hex')
      .slice(0, 32);
    expect(watermarkIdentity('v', s)).toBe(expected);
  });
});

describe('parseSettings: IMAGE', () => {
  const image = (setting: Record<string, unknown>): ImageSetting => {
    const s = one({ type: 'IMAGE', content: 'https://cdn.example.com/logo.png', ...setting });
    if (s.type !== 'IMAGE') throw new Error('not IMAGE');
    return s;
  };

  it('takes the reference example as it is written (lower-case keywords too) and fills the defaults', () => {
    expect(one({ type: 'IMAGE', content: 'https://cdn.example.com/logo.jpg', x: 0.2, y: 0.2, align: 'LEFT', verticalAlign: 'middle' })).toEqual({
      type: 'IMAGE',
      content: 'https://cdn.example.com/logo.jpg',
      x: 0.2,
      y: 0.2,
      align: 'LEFT',
      verticalAlign: 'MIDDLE',
      width: IMAGE_DEFAULTS.width,
      opacity: IMAGE_DEFAULTS.opacity,
    });
    expect(image({})).toMatchObject({ x: 0.5, y: 0.5, align: 'CENTER', verticalAlign: 'MIDDLE', width: 0.2, opacity: 1 });
  });

  it('reads the alignment aliases and a MOVE animation as TEXT does', () => {
    const s = image({ horizontalAlignment: 'right', verticalAlignment: 'BOTTOM', x: 0.1, animation: { toX: 0.9, startTime: 1, endTime: 4 } });
    expect(s).toMatchObject({ align: 'RIGHT', verticalAlign: 'BOTTOM', animation: { type: 'MOVE', toX: 0.9, toY: 0.5, startTime: 1, endTime: 4 } });
    expect(bad({ type: 'IMAGE', content: 'a.png', align: 'LEFT', horizontalAlignment: 'RIGHT' })).toEqual([
      'settings[0].horizontalAlignment: conflicts with align (RIGHT vs LEFT); give only one of align or horizontalAlignment',
    ]);
  });

  it('takes a file path (trimmed), refuses other schemes and data: URLs', () => {
    expect(image({ content: '  ./logos/acme.png ' }).content).toBe('./logos/acme.png');
    expect(image({ content: '/srv/logo.webp' }).content).toBe('/srv/logo.webp');
    expect(bad({ type: 'IMAGE', content: 'ftp://example.com/logo.png' })).toEqual([
      'settings[0].content: expected an http(s) URL or a file path of a PNG, JPEG or WebP image, got "ftp://example.com/logo.png"',
    ]);
    expect(bad({ type: 'IMAGE', content: 'data:image/png;base64,iVBORw0KGgo=' })[0]).toMatch(/got a data: URL$/);
    expect(bad({ type: 'IMAGE', content: '  ' })[0]).toMatch(/content: expected an http\(s\) URL .*, got an empty string$/);
    expect(bad({ type: 'IMAGE' })).toEqual(['settings[0].content: required (an http(s) URL or a file path of a PNG, JPEG or WebP image)']);
    expect(bad({ type: 'IMAGE', content: `https://x.example/${'a'.repeat(5000)}` })[0]).toMatch(/expected at most 4096 characters, got 5018/);
  });

  it('checks width (a fraction of the frame width) and opacity', () => {
    expect(image({ width: 1, opacity: 0 })).toMatchObject({ width: 1, opacity: 0 });
    expect(bad({ type: 'IMAGE', content: 'a.png', width: 0 })).toEqual(['settings[0].width: expected a number in (0, 1] (fraction of frame width), got 0']);
    expect(bad({ type: 'IMAGE', content: 'a.png', width: 1.5, opacity: 2 })).toEqual([
      'settings[0].width: expected a number in (0, 1] (fraction of frame width), got 1.5',
      'settings[0].opacity: expected a number in [0, 1] (opacity 0..1), got 2',
    ]);
  });

  it('names TEXT fields on an IMAGE, and IMAGE fields on a TEXT, as the mix-up they are; other keys as unknown', () => {
    expect(bad({ type: 'IMAGE', content: 'a.png', fontSize: 0.1, widht: 0.3 })).toEqual([
      'settings[0].fontSize: applies to TEXT settings only (an IMAGE is sized by width and faded by opacity)',
      'settings[0].widht: unknown key "widht" (did you mean "width"?); allowed keys: type, content, x, y, align, horizontalAlignment, verticalAlign, verticalAlignment, width, opacity, animation',
    ]);
    expect(bad({ content: 'hello', opacity: 0.5 })).toEqual(['settings[0].opacity: applies to IMAGE settings only (send "type": "IMAGE")']);
    expect(bad({ type: 'FORENSIC', content: 'QUI=', width: 0.4 })).toEqual(['settings[0].width: not allowed on a FORENSIC setting (only type and content)']);
  });

  it('mixes with TEXT in order', () => {
    const settings = ok(parseSettings([{ content: 'under' }, { type: 'image', content: 'https://a.example/l.png' }, { content: 'over' }], v2));
    expect(settings.map((s) => s.type)).toEqual(['TEXT', 'IMAGE', 'TEXT']);
  });

  it('keeps placeholders in a template, checks the URL once rendered', () => {
    const [t] = ok(parseTemplateSettings([{ type: 'IMAGE', content: 'https://cdn.example.com/logos/[%customer%].png' }]));
    expect(t).toMatchObject({ type: 'IMAGE', content: 'https://cdn.example.com/logos/[%customer%].png' });
    expect(ok(parseTemplateSettings([{ type: 'IMAGE', content: '%logo%' }]))[0]).toMatchObject({ content: '%logo%' });
  });

  it('gives the same identity to the same image settings however they are spelt, and never counts the fetched bytes', () => {
    const a = ok(parseSettings([{ type: 'IMAGE', content: 'https://a.example/l.png', horizontalAlignment: 'left' }], v2));
    const b = ok(parseSettings([{ type: 'image', content: ' https://a.example/l.png', align: 'LEFT', width: 0.2, opacity: 1 }], v2));
    expect(watermarkIdentity('v', a)).toBe(watermarkIdentity('v', b));
    const fetched = [{ ...(a[0] as ImageSetting), image: { sha256: 'ab'.repeat(32), format: 'png' as const, width: 10, height: 10 } }];
    expect(watermarkIdentity('v', fetched)).toBe(watermarkIdentity('v', a));
    expect(canonicalSettings(fetched, { withImages: true })).not.toBe(canonicalSettings(a, { withImages: true }));
    expect(watermarkIdentity('v', ok(parseSettings([{ type: 'IMAGE', content: 'https://a.example/l.png', opacity: 0.9 }], v2)))).not.toBe(
      watermarkIdentity('v', a),
    );
  });
});
