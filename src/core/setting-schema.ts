// Watermark setting validation and normalisation (SPEC 2.2, DESIGN 4): every problem reported with its path.
import type { ApiVersion } from './api-version.js';
import { decodeForensicContent } from './forensic-payload.js';
import { closestKey, describeValue, isPlainObject, joinPath, quote, type Result } from './issue-text.js';
import { hasPlaceholder } from './placeholders.js';
import {
  DEFAULTS,
  MAX_ANIMATION_SECONDS,
  MAX_CONTENT_CHARS,
  MAX_SETTINGS,
  type ForensicSetting,
  type ForensicTemplateSetting,
  type HAlign,
  type MoveAnimation,
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

const TEXT_KEYS = [
  'type',
  'content',
  'x',
  'y',
  'align',
  'horizontalAlignment',
  'verticalAlign',
  'verticalAlignment',
  'fontSize',
  'fontColor',
  'fontOpacity',
  'shadowColor',
  'shadowOpacity',
  'shadowOffsetX',
  'shadowOffsetY',
  'animation',
] as const;
const FORENSIC_KEYS = ['type', 'content'] as const;
const ANIMATION_KEYS = ['type', 'toX', 'toY', 'startTime', 'endTime'] as const;

function unknownKeyIssue(path: string, key: string, candidates: readonly string[]): string {
  const suggestion = closestKey(key, candidates);
  const hint = suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
  return `${joinPath(path, key)}: unknown key ${quote(key)}${hint}; allowed keys: ${candidates.join(', ')}`;
}

// ---------------------------------------------------------------------------------------------
// Field readers: each returns the normalised value, or undefined after pushing an issue.

interface NumberRule {
  min: number;
  max: number;
  minExclusive?: boolean;
  unit: string;
}

function readNumber(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  rule: NumberRule,
  issues: string[],
): number | undefined {
  const p = joinPath(path, key);
  const v = obj[key];
  if (typeof v !== 'number') {
    const numericString = typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v));
    const hint = numericString ? ' (numbers must be sent unquoted)' : '';
    issues.push(`${p}: expected a number (${rule.unit}), got ${describeValue(v)}${hint}`);
    return undefined;
  }
  const low = rule.minExclusive ? v > rule.min : v >= rule.min;
  if (!Number.isFinite(v) || !low || v > rule.max) {
    const range = `${rule.minExclusive ? '(' : '['}${rule.min}, ${rule.max}]`;
    issues.push(`${p}: expected a number in ${range} (${rule.unit}), got ${String(v)}`);
    return undefined;
  }
  // -0 and 0 mean the same position; keep one spelling so identities agree.
  return v === 0 ? 0 : v;
}

function readColour(obj: Record<string, unknown>, key: string, path: string, issues: string[]): string | undefined {
  const v = obj[key];
  const m = typeof v === 'string' ? /^(?:#|0[xX])?([0-9A-Fa-f]{6})$/.exec(v) : null;
  if (m?.[1] === undefined) {
    const got = typeof v === 'string' ? quote(v) : describeValue(v);
    issues.push(`${joinPath(path, key)}: expected a colour as RRGGBB (6 hex digits, optional # or 0x prefix), got ${got}`);
    return undefined;
  }
  return m[1].toUpperCase();
}

function readEnum<T extends string>(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  table: Readonly<Record<string, T>>,
  shown: string,
  issues: string[],
): T | undefined {
  const v = obj[key];
  const hit = typeof v === 'string' && Object.hasOwn(table, v.toUpperCase()) ? table[v.toUpperCase()] : undefined;
  if (hit === undefined) {
    const got = typeof v === 'string' ? quote(v) : describeValue(v);
    issues.push(`${joinPath(path, key)}: expected one of ${shown} (case-insensitive), got ${got}`);
  }
  return hit;
}

const H_ALIGN: Readonly<Record<string, HAlign>> = { LEFT: 'LEFT', CENTER: 'CENTER', MIDDLE: 'CENTER', RIGHT: 'RIGHT' };
const V_ALIGN: Readonly<Record<string, VAlign>> = { TOP: 'TOP', MIDDLE: 'MIDDLE', CENTER: 'MIDDLE', BOTTOM: 'BOTTOM' };
const SETTING_TYPES: Readonly<Record<string, 'TEXT' | 'FORENSIC'>> = { TEXT: 'TEXT', FORENSIC: 'FORENSIC' };

/** Reads a field that may arrive under its name or an alias; both present is fine only if they agree. */
function readAliased<T extends string>(
  obj: Record<string, unknown>,
  key: string,
  alias: string,
  path: string,
  table: Readonly<Record<string, T>>,
  shown: string,
  fallback: T,
  issues: string[],
): T | undefined {
  const hasKey = Object.hasOwn(obj, key);
  const hasAlias = Object.hasOwn(obj, alias);
  const main = hasKey ? readEnum(obj, key, path, table, shown, issues) : undefined;
  const other = hasAlias ? readEnum(obj, alias, path, table, shown, issues) : undefined;
  if (hasKey && hasAlias && main !== undefined && other !== undefined && main !== other) {
    issues.push(`${joinPath(path, alias)}: conflicts with ${key} (${other} vs ${main}); give only one of ${key} or ${alias}`);
    return undefined;
  }
  if (!hasKey && !hasAlias) return fallback;
  return main ?? other;
}

// ---------------------------------------------------------------------------------------------
// Content

/**
 * Checks TEXT content as it will be drawn. Length counts Unicode code points so an emoji is one
 * character. Lone surrogates and NUL are refused because they cannot reach the renderer intact
 * (UTF-8 cannot carry a lone surrogate; NUL ends C strings), so two different requests would
 * otherwise draw the same text under different identities.
 */
function checkTextContent(content: string, p: string, when: string, issues: string[]): boolean {
  const length = Array.from(content).length;
  const before = issues.length;
  if (length < 1 || length > MAX_CONTENT_CHARS) {
    issues.push(`${p}: expected 1 to ${MAX_CONTENT_CHARS} characters${when}, got ${length}`);
  } else if (!/\S/u.test(content)) {
    issues.push(`${p}: must contain at least one non-whitespace character${when}`);
  }
  if (/[\uD800-\uDFFF]/u.test(content)) issues.push(`${p}: contains an unpaired UTF-16 surrogate${when}`);
  if (content.includes('\u0000')) issues.push(`${p}: contains a NUL character${when}`);
  return issues.length === before;
}

// ---------------------------------------------------------------------------------------------
// Setting parsers

interface Mode {
  /** undefined only for templates created without a version: literal FORENSIC is checked at render. */
  apiVersion: ApiVersion | undefined;
  template: boolean;
}

const POSITION = (axis: 'width' | 'height'): NumberRule => ({ min: -10, max: 10, unit: `fraction of frame ${axis}` });
const OPACITY: NumberRule = { min: 0, max: 1, unit: 'opacity 0..1' };
const SHADOW_OFFSET: NumberRule = { min: -5, max: 5, unit: 'fraction of font size' };
const FONT_SIZE: NumberRule = { min: 0, max: 1, minExclusive: true, unit: 'fraction of frame height' };
const SECONDS: NumberRule = { min: 0, max: MAX_ANIMATION_SECONDS, unit: 'seconds' };

function opt<T>(obj: Record<string, unknown>, key: string, read: () => T | undefined, fallback: T): T | undefined {
  return Object.hasOwn(obj, key) ? read() : fallback;
}

function parseAnimation(
  v: unknown,
  path: string,
  x: number | undefined,
  y: number | undefined,
  issues: string[],
): MoveAnimation | undefined {
  if (!isPlainObject(v)) {
    issues.push(`${path}: expected an object {type?: "MOVE", toX?, toY?, startTime, endTime}, got ${describeValue(v)}`);
    return undefined;
  }
  const before = issues.length;
  for (const key of Object.keys(v)) {
    if (!(ANIMATION_KEYS as readonly string[]).includes(key)) issues.push(unknownKeyIssue(path, key, ANIMATION_KEYS));
  }
  if (Object.hasOwn(v, 'type')) readEnum(v, 'type', path, { MOVE: 'MOVE' }, 'MOVE', issues);
  // A missing target means "stay on that axis"; if x itself was invalid the issue is already reported.
  const toX = opt(v, 'toX', () => readNumber(v, 'toX', path, POSITION('width'), issues), x);
  const toY = opt(v, 'toY', () => readNumber(v, 'toY', path, POSITION('height'), issues), y);
  const times: Array<number | undefined> = [];
  for (const key of ['startTime', 'endTime'] as const) {
    if (Object.hasOwn(v, key)) times.push(readNumber(v, key, path, SECONDS, issues));
    else {
      issues.push(`${joinPath(path, key)}: required (seconds of the video timeline)`);
      times.push(undefined);
    }
  }
  const [startTime, endTime] = times;
  if (startTime !== undefined && endTime !== undefined && endTime <= startTime) {
    issues.push(`${joinPath(path, 'endTime')}: must be greater than startTime (${startTime}), got ${endTime}`);
  }
  if (issues.length !== before || toX === undefined || toY === undefined || startTime === undefined || endTime === undefined) {
    return undefined;
  }
  return { type: 'MOVE', toX, toY, startTime, endTime };
}

function parseText(obj: Record<string, unknown>, path: string, mode: Mode, issues: string[]): TextSetting | undefined {
  const before = issues.length;
  for (const key of Object.keys(obj)) {
    if (!(TEXT_KEYS as readonly string[]).includes(key)) issues.push(unknownKeyIssue(path, key, TEXT_KEYS));
  }

  let content: string | undefined;
  const contentPath = joinPath(path, 'content');
  if (!Object.hasOwn(obj, 'content')) {
    issues.push(`${contentPath}: required (the text to draw)`);
  } else if (typeof obj.content !== 'string') {
    issues.push(`${contentPath}: expected a string, got ${describeValue(obj.content)}`);
  } else if (mode.template && hasPlaceholder(obj.content)) {
    // The drawn text is only known after rendering; renderTemplate checks it again then.
    if (Array.from(obj.content).length > MAX_CONTENT_CHARS) {
      issues.push(`${contentPath}: expected at most ${MAX_CONTENT_CHARS} characters, got ${Array.from(obj.content).length}`);
    } else content = obj.content;
  } else if (checkTextContent(obj.content, contentPath, '', issues)) {
    content = obj.content;
  }

  const x = opt(obj, 'x', () => readNumber(obj, 'x', path, POSITION('width'), issues), DEFAULTS.x);
  const y = opt(obj, 'y', () => readNumber(obj, 'y', path, POSITION('height'), issues), DEFAULTS.y);
  const align = readAliased(obj, 'align', 'horizontalAlignment', path, H_ALIGN, 'LEFT, CENTER, RIGHT', DEFAULTS.align, issues);
  const verticalAlign = readAliased(obj, 'verticalAlign', 'verticalAlignment', path, V_ALIGN, 'TOP, MIDDLE, CENTER, BOTTOM', DEFAULTS.verticalAlign, issues);
  const fontSize = opt(obj, 'fontSize', () => readNumber(obj, 'fontSize', path, FONT_SIZE, issues), DEFAULTS.fontSize);
  const fontColor = opt(obj, 'fontColor', () => readColour(obj, 'fontColor', path, issues), DEFAULTS.fontColor);
  const fontOpacity = opt(obj, 'fontOpacity', () => readNumber(obj, 'fontOpacity', path, OPACITY, issues), DEFAULTS.fontOpacity);
  const shadowColor = opt(obj, 'shadowColor', () => readColour(obj, 'shadowColor', path, issues), DEFAULTS.shadowColor);
  const shadowOpacity = opt(obj, 'shadowOpacity', () => readNumber(obj, 'shadowOpacity', path, OPACITY, issues), DEFAULTS.shadowOpacity);
  const shadowOffsetX = opt(obj, 'shadowOffsetX', () => readNumber(obj, 'shadowOffsetX', path, SHADOW_OFFSET, issues), DEFAULTS.shadowOffsetX);
  const shadowOffsetY = opt(obj, 'shadowOffsetY', () => readNumber(obj, 'shadowOffsetY', path, SHADOW_OFFSET, issues), DEFAULTS.shadowOffsetY);
  const animation = Object.hasOwn(obj, 'animation')
    ? parseAnimation(obj.animation, joinPath(path, 'animation'), x, y, issues)
    : undefined;

  if (
    issues.length !== before ||
    content === undefined ||
    x === undefined ||
    y === undefined ||
    align === undefined ||
    verticalAlign === undefined ||
    fontSize === undefined ||
    fontColor === undefined ||
    fontOpacity === undefined ||
    shadowColor === undefined ||
    shadowOpacity === undefined ||
    shadowOffsetX === undefined ||
    shadowOffsetY === undefined
  ) {
    return undefined;
  }
  const setting: TextSetting = {
    type: 'TEXT',
    content,
    x,
    y,
    align,
    verticalAlign,
    fontSize,
    fontColor,
    fontOpacity,
    shadowColor,
    shadowOpacity,
    shadowOffsetX,
    shadowOffsetY,
  };
  if (animation !== undefined) setting.animation = animation;
  return setting;
}

function parseForensic(
  obj: Record<string, unknown>,
  path: string,
  mode: Mode,
  issues: string[],
): ForensicSetting | ForensicTemplateSetting | undefined {
  const before = issues.length;
  for (const key of Object.keys(obj)) {
    if ((FORENSIC_KEYS as readonly string[]).includes(key)) continue;
    if ((TEXT_KEYS as readonly string[]).includes(key)) {
      issues.push(`${joinPath(path, key)}: not allowed on a FORENSIC setting (only type and content)`);
    } else issues.push(unknownKeyIssue(path, key, FORENSIC_KEYS));
  }
  const p = joinPath(path, 'content');
  const content = obj.content;
  if (!Object.hasOwn(obj, 'content')) {
    issues.push(`${p}: required (the 16-bit forensic payload)`);
    return undefined;
  }
  if (typeof content !== 'string') {
    issues.push(`${p}: expected a string, got ${describeValue(content)}`);
    return undefined;
  }
  if (mode.template && (hasPlaceholder(content) || mode.apiVersion === undefined)) {
    if (content === '') issues.push(`${p}: expected a placeholder or a 16-bit payload, got an empty string`);
    return issues.length === before ? { type: 'FORENSIC', content } : undefined;
  }
  if (mode.apiVersion === undefined) return undefined;
  const decoded = decodeForensicContent(content, mode.apiVersion);
  if (!decoded.ok) {
    issues.push(`${p}: ${decoded.message}`);
    return undefined;
  }
  if (issues.length !== before) return undefined;
  return mode.template ? { type: 'FORENSIC', content } : { type: 'FORENSIC', payload: decoded.payload };
}

function parseArray(input: unknown, path: string, mode: Mode): Result<Array<Setting | ForensicTemplateSetting>> {
  if (!Array.isArray(input)) {
    return { ok: false, issues: [`${path}: expected a non-empty array of setting objects, got ${describeValue(input)}`] };
  }
  const issues: string[] = [];
  if (input.length === 0) issues.push(`${path}: expected at least 1 setting, got an empty array`);
  if (input.length > MAX_SETTINGS) issues.push(`${path}: expected at most ${MAX_SETTINGS} settings, got ${input.length}`);

  const out: Array<Setting | ForensicTemplateSetting> = [];
  let firstForensic: string | undefined;
  input.forEach((item: unknown, i) => {
    const p = joinPath(path, i);
    if (!isPlainObject(item)) {
      issues.push(`${p}: expected a setting object, got ${describeValue(item)}`);
      return;
    }
    let kind: 'TEXT' | 'FORENSIC' = 'TEXT';
    if (Object.hasOwn(item, 'type')) {
      const t = item.type;
      const hit = typeof t === 'string' && Object.hasOwn(SETTING_TYPES, t.toUpperCase()) ? SETTING_TYPES[t.toUpperCase()] : undefined;
      if (hit === undefined) {
        const near = typeof t === 'string' ? closestKey(t, ['TEXT', 'FORENSIC']) : undefined;
        const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
        issues.push(`${joinPath(p, 'type')}: expected TEXT or FORENSIC (case-insensitive), got ${describeValue(t)}${hint}`);
        // Carry on as TEXT so the remaining fields are still reported in this one round trip.
      } else kind = hit;
    }
    if (kind === 'FORENSIC') {
      if (firstForensic !== undefined) {
        issues.push(`${p}: at most one FORENSIC setting per request (${firstForensic} is already FORENSIC)`);
      } else firstForensic = p;
      const s = parseForensic(item, p, mode, issues);
      if (s !== undefined) out.push(s);
    } else {
      const s = parseText(item, p, mode, issues);
      if (s !== undefined) out.push(s);
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
export function parseSettings(
  input: unknown,
  opts: ParseOptions & { allowPlaceholders?: boolean },
): Result<Setting[]> | Result<TemplateSetting[]>;
export function parseSettings(
  input: unknown,
  opts: ParseOptions & { allowPlaceholders?: boolean },
): Result<Setting[]> | Result<TemplateSetting[]> {
  if (opts.allowPlaceholders === true) return parseTemplateSettings(input, opts);
  return parseArray(input, opts.path ?? 'settings', { apiVersion: opts.apiVersion, template: false }) as Result<Setting[]>;
}

/**
 * Validates the settings of a template. Same rules as parseSettings except: TEXT content holding
 * placeholders is only length-capped (it is checked again after rendering), and FORENSIC content
 * stays a string. Placeholder-free FORENSIC content is checked when opts.apiVersion is given.
 */
export function parseTemplateSettings(input: unknown, opts: TemplateParseOptions = {}): Result<TemplateSetting[]> {
  return parseArray(input, opts.path ?? 'settings', { apiVersion: opts.apiVersion, template: true }) as Result<TemplateSetting[]>;
}
