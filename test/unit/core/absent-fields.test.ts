// Unit tests for null fields, which mean absent: in every setting type, in templates and in request bodies; and for
// fields of another setting type, ignored at their default and refused by name otherwise.
import { describe, expect, it } from 'vitest';
import { orderSettings, parseVideoRequest, parseWatermarkOrder } from '../../../src/core/api-requests.js';
import type { ApiVersion } from '../../../src/core/api-version.js';
import { WmarkError } from '../../../src/core/errors.js';
import type { Result } from '../../../src/core/issue-text.js';
import { parseSettings, parseTemplateSettings } from '../../../src/core/setting-schema.js';
import { parseTemplateBody } from '../../../src/core/template-schema.js';
import { SERIALISED_TEXT_DEFAULTS } from '../../helpers/watermark-helpers.js';

const PLACEMENT = ['x', 'y', 'align', 'horizontalAlignment', 'verticalAlign', 'verticalAlignment', 'animation'];
/** The optional fields of each type of setting, as docs/settings.md lists them. */
const OPTIONAL: Record<string, { base: Record<string, unknown>; fields: string[] }> = {
  TEXT: {
    base: { content: 'Licensed to Ann' },
    fields: ['type', ...PLACEMENT, 'fontSize', 'fontColor', 'fontOpacity', 'shadowColor', 'shadowOpacity', 'shadowOffsetX', 'shadowOffsetY'],
  },
  IMAGE: { base: { type: 'IMAGE', content: 'https://cdn.example.com/logo.png' }, fields: [...PLACEMENT, 'width', 'opacity'] },
  // A FORENSIC setting has no optional field of its own; those of the others, null, are absent too.
  FORENSIC: { base: { type: 'FORENSIC', content: 'QU' }, fields: [...PLACEMENT, 'fontSize', 'width'] },
};

/** A setting's required fields; a FORENSIC payload in the version's encoding (ASCII in 1.0, base64 in 2.0). */
const baseIn = (type: string, api: ApiVersion) => (type === 'FORENSIC' && api === '2.0' ? { type, content: 'UVU=' } : OPTIONAL[type]!.base);

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got issues:\n${r.issues.join('\n')}`);
  return r.value;
}

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof WmarkError) return error.details;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('a null field is an absent one', () => {
  for (const [type, { base, fields }] of Object.entries(OPTIONAL)) {
    for (const api of ['1.0', '2.0'] as ApiVersion[]) {
      it(`${type} in API ${api}: each optional field sent as null reads as left out`, () => {
        const base = baseIn(type, api);
        const without = value(parseSettings([base], { apiVersion: api }));
        for (const field of fields) expect(value(parseSettings([{ ...base, [field]: null }], { apiVersion: api })), field).toEqual(without);
        const allNull = Object.fromEntries(fields.map((f) => [f, null]));
        expect(value(parseSettings([{ ...base, ...allNull }], { apiVersion: api }))).toEqual(without);
      });
    }
    it(`${type} in a template: each optional field sent as null reads as left out`, () => {
      const without = value(parseTemplateSettings([base]));
      for (const field of fields) expect(value(parseTemplateSettings([{ ...base, [field]: null }])), field).toEqual(without);
    });
  }

  it('inside a MOVE animation too', () => {
    const move = { startTime: 0, endTime: 2, toX: 0.9 };
    const plain = value(parseSettings([{ content: 'a', animation: move }], { apiVersion: '1.0' }));
    expect(value(parseSettings([{ content: 'a', animation: { ...move, type: null, toY: null } }], { apiVersion: '1.0' }))).toEqual(plain);
  });

  it('a required field sent as null is missing, and said so', () => {
    const r = parseSettings([{ content: null }], { apiVersion: '2.0' });
    expect(r.ok ? [] : r.issues).toEqual(['settings[0].content: required (the text to draw)']);
  });

  it('in watermark, video and template bodies', () => {
    const context = { api: '1.0' as const, nowMs: 0 };
    const template = value(parseTemplateSettings([{ content: '%name%' }]));
    const request = parseWatermarkOrder(
      { key: 'a', videoId: null, id: null, settings: [{ content: 'x', animation: null }], containers: null, expiration: null },
      context,
    );
    expect(request).toMatchObject({ video: { key: 'a' }, containers: ['m3u8', 'mp4'] });
    expect(request.expirationSeconds).toBeUndefined();
    expect(parseVideoRequest({ sourceUrl: 'a.mp4', key: null, name: null, enableForensic: null, forensicLayout: null })).toEqual({ sourceUrl: 'a.mp4' });
    expect(parseTemplateBody({ name: 'n', description: null, settings: [{ content: 'x', fontSize: null }] }, '2.0')).toMatchObject({
      name: 'n',
      description: null,
    });
    const mapped = parseWatermarkOrder({ key: 'a', settingsTemplateMapping: { id: 't', mappings: { name: null } } }, context);
    expect(problems(() => orderSettings(mapped.draw, '1.0', template))[0]).toMatch(/name/);
  });
});

describe('a field of another type of setting', () => {
  const textDefaults = SERIALISED_TEXT_DEFAULTS;
  const image = { type: 'IMAGE', content: 'https://cdn.example.com/logo.png', width: 0.3 };

  it('is ignored on IMAGE when it carries its default, in any spelling the field accepts', () => {
    const plain = value(parseSettings([image], { apiVersion: '1.0' }));
    expect(value(parseSettings([{ ...image, ...textDefaults }], { apiVersion: '1.0' }))).toEqual(plain);
    expect(value(parseTemplateSettings([{ ...image, ...textDefaults, fontColor: '#FFFFFF' }]))).toEqual(value(parseTemplateSettings([image])));
  });

  it('is ignored on TEXT and FORENSIC when it carries its default', () => {
    expect(value(parseSettings([{ content: 'a', width: 0.2, opacity: 1 }], { apiVersion: '2.0' }))).toEqual(
      value(parseSettings([{ content: 'a' }], { apiVersion: '2.0' })),
    );
    const forensic = { type: 'FORENSIC', content: 'QU' };
    expect(value(parseSettings([{ ...forensic, x: 0.5, align: 'center', ...textDefaults }], { apiVersion: '1.0' }))).toEqual([
      { type: 'FORENSIC', payload: 0x5155 },
    ]);
  });

  it('is refused by name when it carries anything else', () => {
    const r = parseSettings(
      [
        { ...image, ...textDefaults, fontSize: 0.1 },
        { content: 'a', opacity: 0.5 },
      ],
      { apiVersion: '1.0' },
    );
    expect(r.ok ? [] : r.issues).toEqual([
      'settings[0].fontSize: applies to TEXT settings only (an IMAGE is sized by width and faded by opacity)',
      'settings[1].opacity: applies to IMAGE settings only (send "type": "IMAGE")',
    ]);
  });
});

describe('a template saved without a name', () => {
  it('is taken on API 1.0 and refused on 2.0 and from the command line', () => {
    expect(parseTemplateBody({ settings: [{ content: '%x%' }] }, '1.0').name).toBeUndefined();
    expect(parseTemplateBody({ name: null, settings: [{ content: '%x%' }] }, '1.0').name).toBeUndefined();
    expect(problems(() => parseTemplateBody({ settings: [{ content: '%x%' }] }, '2.0'))).toEqual(['name: expected a non-empty string']);
    expect(problems(() => parseTemplateBody({ settings: [{ content: '%x%' }] }))).toEqual(['name: expected a non-empty string']);
    expect(problems(() => parseTemplateBody({ settings: [{ content: '%x%' }], nmae: 'x' }, '1.0'))[0]).toMatch(/^nmae: unknown field/);
  });
});
