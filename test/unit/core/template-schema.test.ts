// Unit tests for template body validation: the messages, their order and the normalised template.
import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '../../../src/core/api-version.js';
import { WmarkError } from '../../../src/core/errors.js';
import { parseTemplateBody } from '../../../src/core/template-schema.js';

const settings = [{ content: 'Licensed to %name%' }];

function thrown(input: unknown, apiVersion?: ApiVersion): WmarkError {
  try {
    parseTemplateBody(input, apiVersion);
  } catch (error) {
    if (error instanceof WmarkError) return error;
    throw error;
  }
  throw new Error('expected parseTemplateBody to throw');
}

const problems = (input: unknown, apiVersion?: ApiVersion): string[] => thrown(input, apiVersion).details;

describe('parseTemplateBody: valid bodies', () => {
  it('trims the name, defaults the description to null and normalises the settings', () => {
    expect(
      parseTemplateBody({
        name: '  Corner stamp ',
        settings: [
          { content: '%name%', fontColor: '#abcdef' },
          { type: 'forensic', content: '%p%' },
        ],
      }),
    ).toEqual({
      name: 'Corner stamp',
      description: null,
      settings: [
        {
          type: 'TEXT',
          content: '%name%',
          x: 0.5,
          y: 0.5,
          align: 'CENTER',
          verticalAlign: 'MIDDLE',
          fontSize: 0.05,
          fontColor: 'ABCDEF',
          fontOpacity: 0.3,
          shadowColor: '000000',
          shadowOpacity: 0.1,
          shadowOffsetX: 0.08,
          shadowOffsetY: 0.08,
        },
        { type: 'FORENSIC', content: '%p%' },
      ],
    });
  });

  it('keeps a description, accepts null for none, and ignores an id', () => {
    expect(parseTemplateBody({ name: 'n', description: 'for viewers', settings }).description).toBe('for viewers');
    expect(parseTemplateBody({ name: 'n', description: null, settings }).description).toBeNull();
    expect(parseTemplateBody({ id: 'old-id', name: 'n', settings })).not.toHaveProperty('id');
  });

  it('accepts a 200-character name', () => {
    expect(parseTemplateBody({ name: 'x'.repeat(200), settings }).name).toHaveLength(200);
  });

  it('checks literal FORENSIC content only when an API version is given', () => {
    const body = { name: 'n', settings: [{ type: 'FORENSIC', content: 'ABC' }] };
    expect(parseTemplateBody(body).settings).toEqual([{ type: 'FORENSIC', content: 'ABC' }]);
    expect(problems(body, '1.0')).toEqual([
      'settings[0].content: expected exactly 2 ASCII characters (16-bit payload, API 1.0, e.g. "AB"), got "ABC" (3 characters)',
    ]);
  });
});

describe('parseTemplateBody: problems', () => {
  it.each([
    ['null', null],
    ['an array', []],
    ['a string', 'a template'],
    ['nothing', undefined],
  ])('rejects %s as a whole', (_, input) => {
    const error = thrown(input);
    expect(error.code).toBe('TEMPLATE_INVALID');
    expect(error.message).toBe('a template must be a JSON object {"name", "description"?, "settings"}');
    expect(error.details).toEqual([]);
  });

  it('names an unknown field as sent', () => {
    const error = thrown({ name: 'n', settings, nmae: 'x' });
    expect(error.code).toBe('TEMPLATE_INVALID');
    expect(error.kind).toBe('usage');
    expect(error.message).toBe('nmae: unknown field (expected name, description, settings)');
    expect(problems({ name: 'n', settings, 'font color': 1 })).toEqual(['font color: unknown field (expected name, description, settings)']);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['blank beyond the length cap', ' '.repeat(300)],
    ['a number', 42],
    ['null', null],
  ])('requires a non-empty name: %s', (_, name) => {
    expect(problems({ name, settings })).toEqual(['name: expected a non-empty string']);
  });

  it('caps the name at 200 characters as sent, before trimming', () => {
    expect(problems({ name: 'x'.repeat(201), settings })).toEqual(['name: at most 200 characters']);
    expect(problems({ name: ` ${'x'.repeat(199)} `, settings })).toEqual(['name: at most 200 characters']);
  });

  it.each([
    ['a number', 42],
    ['a boolean', true],
    ['an array', []],
    ['an object', {}],
  ])('requires a string description, not %s', (_, description) => {
    expect(problems({ name: 'n', description, settings })).toEqual(['description: expected a string']);
  });

  it('reports settings problems under settings', () => {
    expect(problems({ name: 'n' })).toEqual(['settings: expected a non-empty array of setting objects, got nothing']);
    expect(problems({ name: 'n', settings: [] })).toEqual(['settings: expected at least 1 setting, got an empty array']);
    expect(problems({ name: 'n', settings: [{ content: '' }, { type: 'FORENSIC', content: '' }] })).toEqual([
      'settings[0].content: expected 1 to 1000 characters, got 0',
      'settings[1].content: expected a placeholder or a 16-bit payload, got an empty string',
    ]);
  });

  it('lists every problem in one error: unknown fields first, then name, description and settings', () => {
    const error = thrown({ settings: [{ content: 'a', colour: 'FFFFFF' }], description: 7, extra: 1, name: '', descripton: 'x' });
    expect(error.details).toEqual([
      'extra: unknown field (expected name, description, settings)',
      'descripton: unknown field (expected name, description, settings)',
      'name: expected a non-empty string',
      'description: expected a string',
      'settings[0].colour: unknown key "colour"; allowed keys: type, content, x, y, align, horizontalAlignment, verticalAlign, verticalAlignment, fontSize, fontColor, fontOpacity, shadowColor, shadowOpacity, shadowOffsetX, shadowOffsetY, animation',
    ]);
    expect(error.message).toBe(`5 problems:\n  - ${error.details.join('\n  - ')}`);
  });
});
