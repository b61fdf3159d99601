// Watermark settings validated and normalised (docs/settings.md) by zod schemas: every problem reported with its path.
import { z } from 'zod';
import { withoutNullFields } from './absent-fields.js';
import type { ApiVersion } from './api-version.js';
import { decodeForensicContent } from './forensic-payload.js';
import { isHttpUrl } from './http-url.js';
import { closestKey, describeValue, inDeclaredOrder, isPlainObject, issueLines, joinPath, type Result, rejectKey } from './issue-text.js';
import { hasPlaceholder } from './placeholders.js';
import {
  ANIMATION,
  agree,
  COLOUR,
  didYouMean,
  FONT_SIZE,
  IMAGE_WIDTH,
  keyword,
  OPACITY,
  PLACEMENT,
  placed,
  type Rejected,
  requiredString,
  SHADOW_OFFSET,
  shown,
  strictFields,
  unknownKey,
  withAnimation,
} from './setting-fields.js';
import {
  DEFAULTS,
  type ForensicSetting,
  type ForensicTemplateSetting,
  IMAGE_DEFAULTS,
  type ImageSetting,
  MAX_CONTENT_CHARS,
  MAX_IMAGE_CONTENT_CHARS,
  MAX_SETTINGS,
  type Setting,
  type TemplateSetting,
  type TextSetting,
} from './setting-types.js';

export interface ParseOptions {
  apiVersion: ApiVersion;
  /** Prefix of every issue; defaults to `settings`. */
  path?: string;
}

export interface TemplateParseOptions {
  /** When given, placeholder-free FORENSIC content is checked against this version's encoding. */
  apiVersion?: ApiVersion;
  path?: string;
}

/** Picks the schema of an element. An unknown type is reported and the element still checked as TEXT, for one round trip. */
const SETTING_KIND = z.object({
  type: keyword({ TEXT: 'TEXT', IMAGE: 'IMAGE', FORENSIC: 'FORENSIC' }, ({ input }) => {
    const near = typeof input === 'string' ? closestKey(input, ['TEXT', 'IMAGE', 'FORENSIC']) : undefined;
    return `expected TEXT, IMAGE or FORENSIC (case-insensitive), got ${describeValue(input)}${didYouMean(near)}`;
  }).optional(),
});

const SETTINGS_LIST = z
  .array(z.unknown(), { error: ({ input }) => `expected a non-empty array of setting objects, got ${describeValue(input)}` })
  .min(1, 'expected at least 1 setting, got an empty array')
  .max(MAX_SETTINGS, { error: ({ input }) => `expected at most ${MAX_SETTINGS} settings, got ${(input as unknown[]).length}` });

// ---------------------------------------------------------------------------------------------
// TEXT

const codePoints = (s: string): number => Array.from(s).length;

/**
 * TEXT content. Length counts Unicode code points so an emoji is one character. Lone surrogates and NUL are refused
 * because they cannot reach the renderer intact (UTF-8 cannot carry a lone surrogate; NUL ends C strings), so two
 * different requests would otherwise draw the same text under different identities. In a template, text holding
 * placeholders is only capped (`raw`): what is drawn is known after rendering, and renderTemplate checks it then.
 */
function textContent(template: boolean) {
  const max = MAX_CONTENT_CHARS;
  const raw = (s: string) => template && hasPlaceholder(s);
  const fits = (s: string) => codePoints(s) >= 1 && codePoints(s) <= max;
  const got = ({ input }: Rejected) => `got ${codePoints(input as string)}`;
  return requiredString('the text to draw')
    .refine((s) => !raw(s) || codePoints(s) <= max, { error: (r) => `expected at most ${max} characters, ${got(r)}` })
    .refine((s) => raw(s) || fits(s), { error: (r) => `expected 1 to ${max} characters, ${got(r)}` })
    .refine((s) => raw(s) || !fits(s) || /\S/u.test(s), 'must contain at least one non-whitespace character')
    .refine((s) => raw(s) || !/[\uD800-\uDFFF]/u.test(s), 'contains an unpaired UTF-16 surrogate')
    .refine((s) => raw(s) || !s.includes('\u0000'), 'contains a NUL character');
}

/** Fields of one kind given on another: named as such, being the likely mix-up, rather than as unknown. */
const IMAGE_ONLY = ['width', 'opacity'];
const TEXT_ONLY = ['fontSize', 'fontColor', 'fontOpacity', 'shadowColor', 'shadowOpacity', 'shadowOffsetX', 'shadowOffsetY'];

function textSetting(template: boolean) {
  const refusal = (key: string) =>
    IMAGE_ONLY.includes(key) ? 'applies to IMAGE settings only (send "type": "IMAGE")' : unknownKey(key, Object.keys(textShape(template)));
  return strictFields(textShape(template), undefined, refusal)
    .check(agree('align', 'horizontalAlignment'), agree('verticalAlign', 'verticalAlignment'))
    .transform((s): TextSetting => {
      const { type: _, content, x, y, align, horizontalAlignment, verticalAlign, verticalAlignment, animation, ...look } = s;
      return withAnimation({ type: 'TEXT', content, ...placed({ x, y, align, horizontalAlignment, verticalAlign, verticalAlignment }), ...look }, animation);
    });
}

function textShape(template: boolean) {
  return {
    type: z.unknown().optional(), // read by SETTING_KIND
    content: textContent(template),
    ...PLACEMENT,
    fontSize: FONT_SIZE.default(DEFAULTS.fontSize),
    fontColor: COLOUR.default(DEFAULTS.fontColor),
    fontOpacity: OPACITY.default(DEFAULTS.fontOpacity),
    shadowColor: COLOUR.default(DEFAULTS.shadowColor),
    shadowOpacity: OPACITY.default(DEFAULTS.shadowOpacity),
    shadowOffsetX: SHADOW_OFFSET.default(DEFAULTS.shadowOffsetX),
    shadowOffsetY: SHADOW_OFFSET.default(DEFAULTS.shadowOffsetY),
    animation: ANIMATION.optional(),
  };
}

const TEXT_SETTING = textSetting(false);
const TEMPLATE_TEXT_SETTING = textSetting(true);
const TEXT_KEYS = Object.keys(textShape(false));
const ANIMATION_KEYS = Object.keys(ANIMATION.shape);

// ---------------------------------------------------------------------------------------------
// IMAGE

const IMAGE_WHAT = 'an http(s) URL or a file path of a PNG, JPEG or WebP image';

/**
 * IMAGE content: an http(s) URL, or a file path (read where the request is served, under the same policy as a video
 * source). Another scheme is refused here; whether the URL or file really is an image is known once it is fetched. In a
 * template, content holding placeholders is only capped: a per-customer logo URL is known after rendering.
 */
function imageContent(template: boolean) {
  const max = MAX_IMAGE_CONTENT_CHARS;
  const raw = (s: string) => template && hasPlaceholder(s);
  const scheme = (s: string) => /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(s)?.[1]?.toLowerCase();
  const urlLike = (s: string) => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s) || scheme(s) === 'data';
  return requiredString(IMAGE_WHAT)
    .transform((s) => s.trim())
    .refine((s) => s !== '', `expected ${IMAGE_WHAT}, got an empty string`)
    .refine((s) => s.length <= max, { error: ({ input }) => `expected at most ${max} characters, got ${(input as string).length}` })
    .refine((s) => !s.includes('\u0000') && !/[\uD800-\uDFFF]/u.test(s), 'contains a NUL character or an unpaired UTF-16 surrogate')
    .refine((s) => raw(s) || !urlLike(s) || isHttpUrl(s), {
      error: ({ input }) => `expected ${IMAGE_WHAT}, got ${scheme(input as string) === 'data' ? 'a data: URL' : shown(input)}`,
    });
}

function imageSetting(template: boolean) {
  const refusal = (key: string) =>
    TEXT_ONLY.includes(key) ? 'applies to TEXT settings only (an IMAGE is sized by width and faded by opacity)' : unknownKey(key, IMAGE_KEYS);
  return strictFields(imageShape(template), undefined, refusal)
    .check(agree('align', 'horizontalAlignment'), agree('verticalAlign', 'verticalAlignment'))
    .transform((s): ImageSetting => {
      const { content, width, opacity, animation } = s;
      return withAnimation({ type: 'IMAGE', content, ...placed(s), width, opacity }, animation);
    });
}

function imageShape(template: boolean) {
  return {
    type: z.unknown().optional(), // read by SETTING_KIND
    content: imageContent(template),
    ...PLACEMENT,
    width: IMAGE_WIDTH.default(IMAGE_DEFAULTS.width),
    opacity: OPACITY.default(IMAGE_DEFAULTS.opacity),
    animation: ANIMATION.optional(),
  };
}

const IMAGE_KEYS = Object.keys(imageShape(false));
const IMAGE_SETTING = imageSetting(false);
const TEMPLATE_IMAGE_SETTING = imageSetting(true);

// ---------------------------------------------------------------------------------------------
// FORENSIC

const FORENSIC_KEYS = ['type', 'content'];
const FORENSIC_CONTENT = requiredString('the 16-bit forensic payload');

/** A FORENSIC setting has type and content only; TEXT fields on it are named as such, being the likely mix-up. */
function forensicSetting<T extends z.ZodType>(content: T) {
  const refusal = (key: string) =>
    TEXT_KEYS.includes(key) || IMAGE_KEYS.includes(key) ? 'not allowed on a FORENSIC setting (only type and content)' : unknownKey(key, FORENSIC_KEYS);
  return z.object({ type: z.unknown().optional(), content }).catchall(rejectKey(refusal));
}

/** FORENSIC content of a request, decoded to its 16-bit payload in the request's API version. */
const forensicPayload = (apiVersion: ApiVersion) =>
  FORENSIC_CONTENT.transform((s, ctx) => {
    const decoded = decodeForensicContent(s, apiVersion);
    if (decoded.ok) return decoded.payload;
    ctx.addIssue(decoded.message);
    return z.NEVER;
  });

/**
 * FORENSIC content of a template stays a string: it usually is a placeholder, and its encoding is that of the request
 * rendering it. Literal content is checked now only when the template has an API version.
 */
function forensicTemplateContent(apiVersion: ApiVersion | undefined) {
  if (apiVersion === undefined) {
    return FORENSIC_CONTENT.refine((s) => s !== '', 'expected a placeholder or a 16-bit payload, got an empty string');
  }
  return FORENSIC_CONTENT.superRefine((s, ctx) => {
    const decoded = hasPlaceholder(s) ? undefined : decodeForensicContent(s, apiVersion);
    if (decoded?.ok === false) ctx.addIssue(decoded.message);
  });
}

// ---------------------------------------------------------------------------------------------
// The array

type SettingType = 'TEXT' | 'IMAGE' | 'FORENSIC';
type ElementSchemas<T> = Record<SettingType, z.ZodType<T>>;
const KEYS_OF = { TEXT: TEXT_KEYS, IMAGE: IMAGE_KEYS, FORENSIC: FORENSIC_KEYS } as const;

const ABSENT_VALUES: Record<string, unknown> = {
  ...IMAGE_DEFAULTS,
  ...DEFAULTS,
  horizontalAlignment: DEFAULTS.align,
  verticalAlignment: DEFAULTS.verticalAlign,
};
/** Every field with a default, of any type of setting: the schema that reads it and the value it takes when absent. */
const FIELD_DEFAULTS: Record<string, { schema: z.ZodType; value: unknown }> = Object.fromEntries(
  Object.entries({ ...imageShape(false), ...textShape(false) }).flatMap(([key, schema]) =>
    key in ABSENT_VALUES ? [[key, { schema, value: ABSENT_VALUES[key] }]] : [],
  ),
);

/**
 * The fields an element is read with. A null field is absent. A field of another type (a text field on an IMAGE, an
 * image field on a TEXT) is left out when it carries that field's default, as SDKs that serialise every field of their
 * configuration send it: it asks for nothing. With another value it stays, to be refused by name, since the caller
 * then meant something that would not be drawn.
 */
function fieldsToRead(item: Record<string, unknown>, type: SettingType): Record<string, unknown> {
  const own: readonly string[] = KEYS_OF[type];
  const idle = ([key, value]: [string, unknown]) => {
    const field = own.includes(key) ? undefined : FIELD_DEFAULTS[key];
    const parsed = field?.schema.safeParse(value);
    return parsed?.success === true && parsed.data === field?.value;
  };
  return Object.fromEntries(Object.entries(withoutNullFields(item)).filter((entry) => !idle(entry)));
}

const requestSchemas = (apiVersion: ApiVersion): ElementSchemas<Setting> => ({
  TEXT: TEXT_SETTING,
  IMAGE: IMAGE_SETTING,
  FORENSIC: forensicSetting(forensicPayload(apiVersion)).transform(({ content }): ForensicSetting => ({ type: 'FORENSIC', payload: content })),
});
const templateSchemas = (apiVersion: ApiVersion | undefined): ElementSchemas<TemplateSetting> => ({
  TEXT: TEMPLATE_TEXT_SETTING,
  IMAGE: TEMPLATE_IMAGE_SETTING,
  FORENSIC: forensicSetting(forensicTemplateContent(apiVersion)).transform(({ content }): ForensicTemplateSetting => ({ type: 'FORENSIC', content })),
});
// Built once per mode, not per call: building a zod object and its first parse cost far more than a parse.
const REQUEST = { '1.0': requestSchemas('1.0'), '2.0': requestSchemas('2.0') };
const TEMPLATE = { none: templateSchemas(undefined), '1.0': templateSchemas('1.0'), '2.0': templateSchemas('2.0') };

function parseArray<T>(input: unknown, path: string, schemas: ElementSchemas<T>): Result<T[]> {
  const list = SETTINGS_LIST.safeParse(input);
  const issues = list.success ? [] : issueLines(list.error.issues, path);
  if (!Array.isArray(input)) return { ok: false, issues };

  const out: T[] = [];
  let firstForensic: string | undefined;
  input.forEach((element: unknown, i) => {
    const p = joinPath(path, i);
    if (!isPlainObject(element)) {
      issues.push(`${p}: expected a setting object, got ${describeValue(element)}`);
      return;
    }
    const kind = SETTING_KIND.safeParse(withoutNullFields(element));
    if (!kind.success) issues.push(...issueLines(kind.error.issues, p));
    const type = kind.data?.type ?? 'TEXT';
    if (type === 'FORENSIC') {
      // A rule across elements, so it lives here rather than in a per-element schema.
      if (firstForensic === undefined) firstForensic = p;
      else issues.push(`${p}: at most one FORENSIC setting per request (${firstForensic} is already FORENSIC)`);
    }

    const parsed = schemas[type].safeParse(fieldsToRead(element, type));
    if (parsed.success) out.push(parsed.data);
    else {
      const keysAt = (depth: number) => (depth > 0 ? ANIMATION_KEYS : KEYS_OF[type]);
      issues.push(...issueLines(inDeclaredOrder(parsed.error.issues, keysAt), p));
    }
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
}

/**
 * Validates and normalises the `settings` of a watermark request: defaults filled, aliases
 * resolved, colours as uppercase RRGGBB, FORENSIC content decoded to its payload. All issues are
 * reported, each prefixed with its path. `allowPlaceholders: true` is the same as
 * parseTemplateSettings and yields TemplateSetting[].
 */
export function parseSettings(input: unknown, opts: ParseOptions & { allowPlaceholders?: false }): Result<Setting[]>;
export function parseSettings(input: unknown, opts: ParseOptions & { allowPlaceholders: true }): Result<TemplateSetting[]>;
export function parseSettings(input: unknown, opts: ParseOptions & { allowPlaceholders?: boolean }): Result<Setting[]> | Result<TemplateSetting[]>;
export function parseSettings(input: unknown, opts: ParseOptions & { allowPlaceholders?: boolean }): Result<Setting[]> | Result<TemplateSetting[]> {
  if (opts.allowPlaceholders === true) return parseTemplateSettings(input, opts);
  return parseArray(input, opts.path ?? 'settings', REQUEST[opts.apiVersion]);
}

/**
 * Validates the settings of a template. Same rules as parseSettings except: TEXT and IMAGE content holding
 * placeholders is only length-capped (it is checked again after rendering), and FORENSIC content
 * stays a string. Placeholder-free FORENSIC content is checked when opts.apiVersion is given.
 */
export function parseTemplateSettings(input: unknown, opts: TemplateParseOptions = {}): Result<TemplateSetting[]> {
  return parseArray(input, opts.path ?? 'settings', TEMPLATE[opts.apiVersion ?? 'none']);
}
