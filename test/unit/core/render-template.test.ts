// Unit tests for template placeholder discovery and one-pass rendering.
import { describe, expect, it } from 'vitest';
import type { Result } from '../../../src/core/issue-text.js';
import { findPlaceholders, templatePlaceholders } from '../../../src/core/placeholders.js';
import { renderTemplate } from '../../../src/core/render-template.js';
import { parseSettings, parseTemplateSettings } from '../../../src/core/setting-schema.js';
import type { Setting, TemplateSetting } from '../../../src/core/setting-types.js';
import { canonicalSettings } from '../../../src/core/watermark-identity.js';

function ok<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got issues:\n${r.issues.join('\n')}`);
  return r.value;
}

function issues<T>(r: Result<T>): string[] {
  if (r.ok) throw new Error(`expected issues, got ${JSON.stringify(r.value)}`);
  return r.issues;
}

function template(input: unknown[]): TemplateSetting[] {
  return ok(parseTemplateSettings(input));
}

function contents(settings: Setting[]): string[] {
  return settings.map((s) => (s.type === 'FORENSIC' ? `payload:${s.payload}` : s.content));
}

describe('findPlaceholders', () => {
  it('finds the 1.0 notation', () => {
    expect(findPlaceholders('Hello %name%, <%email%>')).toEqual(['name', 'email']);
  });

  it('finds the 2.0 notation as a whole', () => {
    expect(findPlaceholders('Hello [%name%], [%email%]')).toEqual(['name', 'email']);
  });

  it('finds both notations mixed, unique, in order of first appearance', () => {
    expect(findPlaceholders('%b% [%a%] %b% [%b%] %c%')).toEqual(['b', 'a', 'c']);
  });

  it('accepts the full name alphabet', () => {
    expect(findPlaceholders('%user.email% %_x% %a-b_c.9%')).toEqual(['user.email', '_x', 'a-b_c.9']);
    expect(findPlaceholders(`%a${'b'.repeat(63)}%`)).toEqual([`a${'b'.repeat(63)}`]);
  });

  it.each([
    'no placeholders',
    '%',
    '%%',
    '100% sure 50%',
    '% name %',
    '%na me%',
    '%9lives%',
    '%.dot%',
    '%{pts}',
    '%{localtime}%',
    '[%%]',
    '%é%',
    `%a${'b'.repeat(64)}%`,
  ])('finds nothing in %j', (text) => {
    expect(findPlaceholders(text)).toEqual([]);
  });

  it('recovers after a non-placeholder percent', () => {
    expect(findPlaceholders('100% of %name%')).toEqual(['name']);
    expect(findPlaceholders('50%%name%')).toEqual(['name']);
  });

  it('does not treat a half-bracketed form as the 2.0 notation', () => {
    expect(findPlaceholders('[%name%')).toEqual(['name']);
    expect(findPlaceholders('%name%]')).toEqual(['name']);
  });
});

describe('templatePlaceholders', () => {
  it('collects over every content field including FORENSIC', () => {
    const t = template([{ content: 'Licensed to %name%' }, { content: '[%email%] at %time% for %name%' }, { type: 'FORENSIC', content: '[%payload%]' }]);
    expect(templatePlaceholders(t)).toEqual(['name', 'email', 'time', 'payload']);
  });
});

describe('renderTemplate', () => {
  const t = template([
    { content: 'Licensed to %name%', align: 'left', fontColor: '#ff0000' },
    { content: '[%email%]', y: 0.9 },
  ]);

  it('renders both notations and removes the brackets of [%name%]', () => {
    const r = ok(renderTemplate(t, { name: 'Ada', email: 'ada@example.com' }, '2.0'));
    expect(contents(r)).toEqual(['Licensed to Ada', 'ada@example.com']);
    expect(r[0]).toMatchObject({ type: 'TEXT', align: 'LEFT', fontColor: 'FF0000', fontSize: 0.05 });
    expect(r[1]).toMatchObject({ y: 0.9 });
  });

  it('renders the same placeholder everywhere it appears', () => {
    const r = ok(renderTemplate(template([{ content: '%n% / [%n%] / %n%' }]), { n: 'x' }, '1.0'));
    expect(contents(r)).toEqual(['x / x / x']);
  });

  it('is one pass: a value holding placeholders stays literal', () => {
    const tt = template([{ content: '%a% and %b%' }]);
    const r = ok(renderTemplate(tt, { a: '%b%', b: '[%a%]' }, '2.0'));
    expect(contents(r)).toEqual(['%b% and [%a%]']);
  });

  it('a value that completes a placeholder with adjacent text is not re-scanned', () => {
    const tt = template([{ content: '%a%b%' }]);
    expect(contents(ok(renderTemplate(tt, { a: '%' }, '2.0')))).toEqual(['%b%']);
  });

  it.each(['O\'Brien: "quoted" \\ back', '%{pts} %{localtime:%X}', 'line1\nline2', 'שלום 👋 Ω', "text='x':fontsize=200,drawbox", '  spaced  '])(
    'inserts hostile value %j verbatim',
    (value) => {
      const r = ok(renderTemplate(template([{ content: '>[%v%]<' }]), { v: value }, '2.0'));
      expect(contents(r)).toEqual([`>${value}<`]);
    },
  );

  it('reports each missing placeholder', () => {
    expect(issues(renderTemplate(t, {}, '2.0'))).toEqual([
      'settingsTemplateMapping.mappings: missing value for placeholder "name"',
      'settingsTemplateMapping.mappings: missing value for placeholder "email"',
    ]);
  });

  it('does not find mappings on Object.prototype', () => {
    expect(issues(renderTemplate(template([{ content: '%constructor%' }]), {}, '2.0'))).toEqual([
      'settingsTemplateMapping.mappings: missing value for placeholder "constructor"',
    ]);
    expect(contents(ok(renderTemplate(template([{ content: '%constructor%' }]), { constructor: 'c' }, '2.0')))).toEqual(['c']);
  });

  it('reports each unused mapping', () => {
    expect(issues(renderTemplate(t, { name: 'a', email: 'b', foo: 'x', 'bad key': 'y' }, '2.0'))).toEqual([
      'settingsTemplateMapping.mappings: mapping "foo" is not used by template',
      'settingsTemplateMapping.mappings: mapping "bad key" is not used by template',
    ]);
  });

  it('reports a non-string mapping value', () => {
    expect(issues(renderTemplate(t, { name: 42, email: null }, '2.0'))).toEqual([
      'settingsTemplateMapping.mappings.name: expected a string value, got 42',
      'settingsTemplateMapping.mappings.email: expected a string value, got null',
    ]);
  });

  it('collects missing, unused and non-string together', () => {
    expect(issues(renderTemplate(t, { name: ['x'], extra: 'x' }, '2.0'))).toEqual([
      'settingsTemplateMapping.mappings: missing value for placeholder "email"',
      'settingsTemplateMapping.mappings.name: expected a string value, got an array',
      'settingsTemplateMapping.mappings: mapping "extra" is not used by template',
    ]);
  });

  it('rejects mappings that are not an object', () => {
    for (const m of [null, 'x', ['a'], undefined]) {
      expect(issues(renderTemplate(t, m, '2.0'))[0]).toMatch(/^settingsTemplateMapping\.mappings: expected an object/);
    }
  });

  it('uses the given paths', () => {
    expect(issues(renderTemplate(t, {}, '2.0', { mappingsPath: 'mappings' }))[0]).toBe('mappings: missing value for placeholder "name"');
    const long = 'x'.repeat(1001);
    expect(issues(renderTemplate(t, { name: 'a', email: long }, '2.0', { path: 'tpl' }))).toEqual(['tpl[1].content: expected 1 to 1000 characters, got 1001']);
  });

  it('validates the rendered content', () => {
    expect(issues(renderTemplate(t, { name: 'a', email: ' \n ' }, '2.0'))).toEqual([
      'template.settings[1].content: must contain at least one non-whitespace character',
    ]);
    expect(issues(renderTemplate(t, { name: 'x'.repeat(990), email: 'e' }, '2.0'))).toEqual([
      'template.settings[0].content: expected 1 to 1000 characters, got 1002',
    ]);
    expect(contents(ok(renderTemplate(t, { name: '', email: 'e' }, '2.0')))).toEqual(['Licensed to ', 'e']);
  });

  it('renders FORENSIC with the request version encoding', () => {
    const ft = template([{ content: '%name%' }, { type: 'FORENSIC', content: '%payload%' }]);
    expect(contents(ok(renderTemplate(ft, { name: 'n', payload: 'AB' }, '1.0')))).toEqual(['n', `payload:${0x4142}`]);
    expect(contents(ok(renderTemplate(ft, { name: 'n', payload: 'QUI=' }, '2.0')))).toEqual(['n', `payload:${0x4142}`]);
    expect(issues(renderTemplate(ft, { name: 'n', payload: 'ABC' }, '1.0'))).toEqual([
      'template.settings[1].content: expected exactly 2 ASCII characters (16-bit payload, API 1.0, e.g. "AB"), got "ABC" (3 characters)',
    ]);
    expect(issues(renderTemplate(ft, { name: 'n', payload: 'QUJD' }, '2.0'))[0]).toContain('(decodes to 3 bytes)');
  });

  it('checks a literal FORENSIC template content at render time', () => {
    const ft = template([{ type: 'FORENSIC', content: 'AB' }]);
    expect(contents(ok(renderTemplate(ft, {}, '1.0')))).toEqual([`payload:${0x4142}`]);
    expect(issues(renderTemplate(ft, {}, '2.0'))).toHaveLength(1);
  });

  it('gives the same canonical form as the equivalent explicit request', () => {
    const rendered = ok(renderTemplate(t, { name: 'Ada', email: 'ada@example.com' }, '2.0'));
    const explicit = ok(
      parseSettings(
        [
          { content: 'Licensed to Ada', horizontalAlignment: 'LEFT', fontColor: 'FF0000' },
          { content: 'ada@example.com', y: 0.9 },
        ],
        { apiVersion: '2.0' },
      ),
    );
    expect(canonicalSettings(rendered)).toBe(canonicalSettings(explicit));
  });

  it('does not mutate the template', () => {
    const before = JSON.stringify(t);
    ok(renderTemplate(t, { name: 'a', email: 'b' }, '2.0'));
    expect(JSON.stringify(t)).toBe(before);
  });
});
