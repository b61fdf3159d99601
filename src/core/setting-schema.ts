// Watermark settings validated and normalised (docs/settings.md) by zod schemas: every problem reported with its path.
import { z } from 'zod';
import type { ApiVersion } from './api-version.js';
import { decodeForensicContent } from './forensic/payload.js';
import { closestKey, describeValue, inDeclaredOrder, isPlainObject, issueLines, joinPath, quote, type Result, rejectKey } from './issue-text.js';
import { hasPlaceholder } from './placeholders.js';
import {
  DEFAULTS,
  type ForensicSetting,
  type ForensicTemplateSetting,
  type HAlign,
  MAX_ANIMATION_SECONDS,
  MAX_CONTENT_CHARS,
  MAX_SETTINGS,
  type Setting,
  type TemplateSetting,
  type TextSetting,
  type VAlign,
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

// ---------------------------------------------------------------------------------------------
// Building blocks: each carries the one message that covers every way its value can be wrong.

type Rejected = { input?: unknown };

/** A rejected value as messages show it: a string in quotes, anything else described. */
const shown = (v: unknown): string => (typeof v === 'string' ? quote(v) : describeValue(v));
const didYouMean = (near: string | undefined): string => (near === undefined ? '' : ` (did you mean "${near}"?)`);
const unknownKey = (key: string, keys: readonly string[]): string =>
  `unknown key ${quote(key)}${didYouMean(closestKey(key, keys))}; allowed keys: ${keys.join(', ')}`;

/** An object whose unknown keys are each reported with the nearest declared key. */
function strictFields<T extends z.core.$ZodLooseShape>(shape: T, error?: (rejected: Rejected) => string) {
  return z.object(shape, { error }).catchall(rejectKey((key) => unknownKey(key, Object.keys(shape))));
}

/**
 * zod skips a rule spanning several fields once any field has failed; this runs it as soon as the fields it reads
 * are valid, so every problem still comes back in one round trip.
 */
const whenValid = (...keys: string[]) => ({
  when: ({ issues }: z.core.ParsePayload) => issues.every((i) => i.path?.[0] !== undefined && !keys.includes(String(i.path[0]))),
});

/** A number in [min, max] ((min, max] with minExclusive) measured in `unit`; `required` words a missing one. */
function numberIn(unit: string, min: number, max: number, opts: { minExclusive?: boolean; required?: string } = {}) {
  const range = `${opts.minExclusive ? '(' : '['}${min}, ${max}]`;
  const error = ({ input }: Rejected): string => {
    if (input === undefined && opts.required !== undefined) return `required (${opts.required})`;
    // NaN and ±Infinity are numbers to the sender, so they get the range message.
    if (typeof input === 'number') return `expected a number in ${range} (${unit}), got ${input}`;
    const quoted = typeof input === 'string' && input.trim() !== '' && Number.isFinite(Number(input));
    return `expected a number (${unit}), got ${describeValue(input)}${quoted ? ' (numbers must be sent unquoted)' : ''}`;
  };
  const n = z.number({ error });
  // -0 and 0 mean the same position; keep one spelling so identities agree.
  return (opts.minExclusive ? n.gt(min) : n.gte(min)).lte(max).transform((v) => (v === 0 ? 0 : v));
}

/** A case-insensitive keyword; `table` maps each accepted spelling, upper-cased, to its meaning. */
function keyword<T extends string>(table: Readonly<Record<string, T>>, error: (rejected: Rejected) => string) {
  return z
    .string({ error })
    .refine((s) => Object.hasOwn(table, s.toUpperCase()), { error })
    .transform((s) => table[s.toUpperCase()]!);
}

const oneOf = <T extends string>(table: Readonly<Record<string, T>>, listed: string) =>
  keyword(table, ({ input }) => `expected one of ${listed} (case-insensitive), got ${shown(input)}`);

const requiredString = (what: string) =>
  z.string({ error: ({ input }) => (input === undefined ? `required (${what})` : `expected a string, got ${describeValue(input)}`) });

const POSITION_X = numberIn('fraction of frame width', -10, 10);
const POSITION_Y = numberIn('fraction of frame height', -10, 10);
const FONT_SIZE = numberIn('fraction of frame height', 0, 1, { minExclusive: true });
const OPACITY = numberIn('opacity 0..1', 0, 1);
const SHADOW_OFFSET = numberIn('fraction of font size', -5, 5);
const SECONDS = numberIn('seconds', 0, MAX_ANIMATION_SECONDS, { required: 'seconds of the video timeline' });
const H_ALIGN = oneOf<HAlign>({ LEFT: 'LEFT', CENTER: 'CENTER', MIDDLE: 'CENTER', RIGHT: 'RIGHT' }, 'LEFT, CENTER, RIGHT');
const V_ALIGN = oneOf<VAlign>({ TOP: 'TOP', MIDDLE: 'MIDDLE', CENTER: 'MIDDLE', BOTTOM: 'BOTTOM' }, 'TOP, MIDDLE, CENTER, BOTTOM');

const COLOUR = z
  .string({ error: ({ input }) => `expected a colour as RRGGBB (6 hex digits, optional # or 0x prefix), got ${shown(input)}` })
  .regex(/^(?:#|0[xX])?[0-9A-Fa-f]{6}$/)
  .transform((s) => s.slice(-6).toUpperCase());

/** Picks the schema of an element. An unknown type is reported and the element still checked as TEXT, for one round trip. */
const SETTING_KIND = z.object({
  type: keyword({ TEXT: 'TEXT', FORENSIC: 'FORENSIC' }, ({ input }) => {
    const near = typeof input === 'string' ? closestKey(input, ['TEXT', 'FORENSIC']) : undefined;
    return `expected TEXT or FORENSIC (case-insensitive), got ${describeValue(input)}${didYouMean(near)}`;
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

/** A move from (x, y) to (toX, toY); a missing target stays on that axis. */
const ANIMATION = strictFields(
  {
    type: oneOf({ MOVE: 'MOVE' }, 'MOVE').optional(),
    toX: POSITION_X.optional(),
    toY: POSITION_Y.optional(),
    startTime: SECONDS,
    endTime: SECONDS,
  },
  ({ input }) => `expected an object {type?: "MOVE", toX?, toY?, startTime, endTime}, got ${describeValue(input)}`,
).superRefine(
  (a, ctx) => {
    if (a.endTime <= a.startTime) {
      ctx.addIssue({ code: 'custom', path: ['endTime'], message: `must be greater than startTime (${a.startTime}), got ${a.endTime}` });
    }
  },
  whenValid('startTime', 'endTime'),
);

/** `alias` is another spelling of `key`: both may be given only if they agree. */
const agree = (key: 'align' | 'verticalAlign', alias: 'horizontalAlignment' | 'verticalAlignment') =>
  z.superRefine(
    (s: Partial<Record<typeof key | typeof alias, string>>, ctx) => {
      const [main, other] = [s[key], s[alias]];
      if (main !== undefined && other !== undefined && main !== other) {
        const message = `conflicts with ${key} (${other} vs ${main}); give only one of ${key} or ${alias}`;
        ctx.addIssue({ code: 'custom', path: [alias], message });
      }
    },
    whenValid(key, alias),
  );

function textSetting(template: boolean) {
  return strictFields({
    type: z.unknown().optional(), // read by SETTING_KIND
    content: textContent(template),
    x: POSITION_X.default(DEFAULTS.x),
    y: POSITION_Y.default(DEFAULTS.y),
    // The two spellings of the alignments get their default once both are read.
    align: H_ALIGN.optional(),
    horizontalAlignment: H_ALIGN.optional(),
    verticalAlign: V_ALIGN.optional(),
    verticalAlignment: V_ALIGN.optional(),
    fontSize: FONT_SIZE.default(DEFAULTS.fontSize),
    fontColor: COLOUR.default(DEFAULTS.fontColor),
    fontOpacity: OPACITY.default(DEFAULTS.fontOpacity),
    shadowColor: COLOUR.default(DEFAULTS.shadowColor),
    shadowOpacity: OPACITY.default(DEFAULTS.shadowOpacity),
    shadowOffsetX: SHADOW_OFFSET.default(DEFAULTS.shadowOffsetX),
    shadowOffsetY: SHADOW_OFFSET.default(DEFAULTS.shadowOffsetY),
    animation: ANIMATION.optional(),
  })
    .check(agree('align', 'horizontalAlignment'), agree('verticalAlign', 'verticalAlignment'))
    .transform((s): TextSetting => {
      const { type: _, content, x, y, align, horizontalAlignment, verticalAlign, verticalAlignment, animation, ...look } = s;
      const setting: TextSetting = {
        type: 'TEXT',
        content,
        x,
        y,
        align: align ?? horizontalAlignment ?? DEFAULTS.align,
        verticalAlign: verticalAlign ?? verticalAlignment ?? DEFAULTS.verticalAlign,
        ...look,
      };
      if (animation) {
        const { toX = x, toY = y, startTime, endTime } = animation;
        setting.animation = { type: 'MOVE', toX, toY, startTime, endTime };
      }
      return setting;
    });
}

const TEXT_SETTING = textSetting(false);
const TEMPLATE_TEXT_SETTING = textSetting(true);
const TEXT_KEYS = Object.keys(TEXT_SETTING.in.shape);
const ANIMATION_KEYS = Object.keys(ANIMATION.shape);

// ---------------------------------------------------------------------------------------------
// FORENSIC

const FORENSIC_KEYS = ['type', 'content'];
const FORENSIC_CONTENT = requiredString('the 16-bit forensic payload');

/** A FORENSIC setting has type and content only; TEXT fields on it are named as such, being the likely mix-up. */
function forensicSetting<T extends z.ZodType>(content: T) {
  const refusal = (key: string) => (TEXT_KEYS.includes(key) ? 'not allowed on a FORENSIC setting (only type and content)' : unknownKey(key, FORENSIC_KEYS));
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

type ElementSchemas<T> = Record<'TEXT' | 'FORENSIC', z.ZodType<T>>;

const requestSchemas = (apiVersion: ApiVersion): ElementSchemas<Setting> => ({
  TEXT: TEXT_SETTING,
  FORENSIC: forensicSetting(forensicPayload(apiVersion)).transform(({ content }): ForensicSetting => ({ type: 'FORENSIC', payload: content })),
});
const templateSchemas = (apiVersion: ApiVersion | undefined): ElementSchemas<TemplateSetting> => ({
  TEXT: TEMPLATE_TEXT_SETTING,
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
  input.forEach((item: unknown, i) => {
    const p = joinPath(path, i);
    if (!isPlainObject(item)) {
      issues.push(`${p}: expected a setting object, got ${describeValue(item)}`);
      return;
    }
    const kind = SETTING_KIND.safeParse(item);
    if (!kind.success) issues.push(...issueLines(kind.error.issues, p));
    const type = kind.data?.type ?? 'TEXT';
    if (type === 'FORENSIC') {
      // A rule across elements, so it lives here rather than in a per-element schema.
      if (firstForensic === undefined) firstForensic = p;
      else issues.push(`${p}: at most one FORENSIC setting per request (${firstForensic} is already FORENSIC)`);
    }

    const parsed = schemas[type].safeParse(item);
    if (parsed.success) out.push(parsed.data);
    else {
      const keysAt = (depth: number) => (depth > 0 ? ANIMATION_KEYS : type === 'TEXT' ? TEXT_KEYS : FORENSIC_KEYS);
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
 * Validates the settings of a template. Same rules as parseSettings except: TEXT content holding
 * placeholders is only length-capped (it is checked again after rendering), and FORENSIC content
 * stays a string. Placeholder-free FORENSIC content is checked when opts.apiVersion is given.
 */
export function parseTemplateSettings(input: unknown, opts: TemplateParseOptions = {}): Result<TemplateSetting[]> {
  return parseArray(input, opts.path ?? 'settings', TEMPLATE[opts.apiVersion ?? 'none']);
}
