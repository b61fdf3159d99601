// Watermark setting validation, normalisation, canonical form and identity (SPEC 2.2, DESIGN 4).
import { createHash } from 'node:crypto';

export type HAlign = 'LEFT' | 'CENTER' | 'RIGHT';
export type VAlign = 'TOP' | 'MIDDLE' | 'BOTTOM';

export interface MoveAnimation {
  type: 'MOVE';
  toX: number;
  toY: number;
  startTime: number;
  endTime: number;
}

export interface TextSetting {
  type: 'TEXT';
  content: string;
  x: number;
  y: number;
  align: HAlign;
  verticalAlign: VAlign;
  fontSize: number;
  fontColor: string;
  fontOpacity: number;
  shadowColor: string;
  shadowOpacity: number;
  shadowOffsetX: number;
  shadowOffsetY: number;
  animation?: MoveAnimation;
}

/** payload is the 16-bit value to embed, 0..65535. */
export interface ForensicSetting {
  type: 'FORENSIC';
  payload: number;
}

export type Setting = TextSetting | ForensicSetting;

/**
 * A setting as stored in a template. TEXT content may hold placeholders; FORENSIC content is kept
 * as the raw string because it usually is a placeholder, and its meaning (ASCII vs base64) depends
 * on the API version of the request that renders it, not the one that created the template.
 */
export interface ForensicTemplateSetting {
  type: 'FORENSIC';
  content: string;
}

export type TemplateSetting = TextSetting | ForensicTemplateSetting;

export type ApiVersion = '1.0' | '2.0';

export type Result<T> = { ok: true; value: T } | { ok: false; issues: string[] };

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

export const MAX_SETTINGS = 20;
export const MAX_CONTENT_CHARS = 1000;
export const MAX_ANIMATION_SECONDS = 86_400;

export const DEFAULTS = {
  x: 0.5,
  y: 0.5,
  fontSize: 0.05,
  fontOpacity: 0.3,
  fontColor: 'FFFFFF',
  shadowColor: '000000',
  shadowOpacity: 0.1,
  shadowOffsetX: 0.08,
  shadowOffsetY: 0.08,
  align: 'CENTER',
  verticalAlign: 'MIDDLE',
} as const satisfies Omit<TextSetting, 'type' | 'content' | 'animation'>;

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

const NAME = '[A-Za-z_][A-Za-z0-9_.-]{0,63}';

/**
 * Placeholder grammar: `[%name%]` (2.0) is tried first so its brackets are consumed with it,
 * otherwise `%name%` (1.0). Group 1 or group 2 holds the name. Lives here rather than in
 * render-template.ts so settings.ts can recognise template content without an import cycle.
 * Returns a fresh global RegExp each call because global regexps carry lastIndex state.
 */
export function placeholderRegExp(): RegExp {
  return new RegExp(`\\[%(${NAME})%\\]|%(${NAME})%`, 'g');
}

function hasPlaceholder(text: string): boolean {
  return placeholderRegExp().test(text);
}

// ---------------------------------------------------------------------------------------------
// Issue formatting helpers

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

function quote(s: string): string {
  const chars = Array.from(s);
  // Long values would drown the message; the start is enough to recognise the input.
  return chars.length > 60 ? `${JSON.stringify(chars.slice(0, 60).join(''))}...` : JSON.stringify(s);
}

export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `the string ${quote(v)}`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Closest candidate within edit distance 2, ignoring case (FontColor, fontcolour -> fontColor). */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(key.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

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

const BASE64_STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Strict base64 decode (one alphabet per string, optional exact padding, zero spare bits). */
function decodeBase64(text: string): number[] | string {
  const invalid = 'not valid base64';
  const body = text.replace(/={1,2}$/, '');
  const padding = text.length - body.length;
  if (body.length % 4 === 1) return invalid;
  if (padding > 0 && (body.length + padding) % 4 !== 0) return invalid;
  const alphabet = /[-_]/.test(body) ? BASE64_URL : BASE64_STANDARD;
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const ch of body) {
    const v = alphabet.indexOf(ch);
    if (v < 0) return invalid;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((acc >> bits) & 0xff);
      acc &= (1 << bits) - 1;
    }
  }
  // Non-zero spare bits would let two strings ("QUI", "QUJ") name one payload; a client building
  // per-viewer payloads that way would silently hand two viewers the same mark.
  if (acc !== 0) return 'not canonical base64: unused low bits of the last character must be zero';
  return bytes;
}

export type ForensicDecode = { ok: true; payload: number } | { ok: false; message: string };

/** Turns FORENSIC content into its 16-bit payload: 1.0 is 2 ASCII characters, 2.0 is base64 of 2 bytes. */
export function decodeForensicContent(content: string, apiVersion: ApiVersion): ForensicDecode {
  if (apiVersion === '1.0') {
    const chars = Array.from(content);
    const ascii = chars.every((c) => (c.codePointAt(0) ?? 128) <= 127);
    const c0 = content.charCodeAt(0);
    const c1 = content.charCodeAt(1);
    if (chars.length === 2 && ascii) return { ok: true, payload: (c0 << 8) | c1 };
    const why = ascii ? `${chars.length} characters` : 'non-ASCII characters';
    return {
      ok: false,
      message: `expected exactly 2 ASCII characters (16-bit payload, API 1.0, e.g. "AB"), got ${quote(content)} (${why})`,
    };
  }
  const expected = 'expected base64 of exactly 2 bytes (16-bit payload, API 2.0, standard or URL-safe alphabet, padding optional, e.g. "QUI=")';
  const bytes = decodeBase64(content);
  if (typeof bytes === 'string') return { ok: false, message: `${expected}, got ${quote(content)} (${bytes})` };
  const [b0, b1] = bytes;
  if (bytes.length !== 2 || b0 === undefined || b1 === undefined) {
    return { ok: false, message: `${expected}, got ${quote(content)} (decodes to ${bytes.length} bytes)` };
  }
  return { ok: true, payload: (b0 << 8) | b1 };
}

/** Inverse of decodeForensicContent; undefined when 1.0 cannot spell the payload (a byte > 127). */
export function encodeForensicContent(payload: number, apiVersion: ApiVersion): string | undefined {
  if (!Number.isInteger(payload) || payload < 0 || payload > 0xffff) return undefined;
  const b0 = payload >> 8;
  const b1 = payload & 0xff;
  if (apiVersion === '1.0') return b0 > 127 || b1 > 127 ? undefined : String.fromCharCode(b0, b1);
  const n = (b0 << 16) | (b1 << 8);
  return [18, 12, 6].map((s) => BASE64_STANDARD[(n >> s) & 63]).join('') + '=';
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

// ---------------------------------------------------------------------------------------------
// Canonical form and identity

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function canonicalSetting(s: Setting): Record<string, unknown> {
  // Fields are picked by name so a stray extra property on the object cannot change the identity.
  if (s.type === 'FORENSIC') return { type: 'FORENSIC', payload: s.payload };
  const a = s.animation;
  return {
    type: 'TEXT',
    content: s.content,
    x: s.x,
    y: s.y,
    align: s.align,
    verticalAlign: s.verticalAlign,
    fontSize: s.fontSize,
    fontColor: s.fontColor.toUpperCase(),
    fontOpacity: s.fontOpacity,
    shadowColor: s.shadowColor.toUpperCase(),
    shadowOpacity: s.shadowOpacity,
    shadowOffsetX: s.shadowOffsetX,
    shadowOffsetY: s.shadowOffsetY,
    animation:
      a === undefined ? undefined : { type: 'MOVE', toX: a.toX, toY: a.toY, startTime: a.startTime, endTime: a.endTime },
  };
}

/**
 * Canonical JSON of normalised settings: keys sorted, every field present, array order kept
 * (it is the drawing order). Equal meaning gives an equal string; any change gives another.
 */
export function canonicalSettings(settings: readonly Setting[]): string {
  return stableStringify(settings.map(canonicalSetting));
}

/** Watermark identity (DESIGN 3): first 32 hex chars of sha256(videoId + "\n" + canonical settings). */
export function watermarkIdentity(videoId: string, settings: readonly Setting[]): string {
  return createHash('sha256')
    .update(`${videoId}\n${canonicalSettings(settings)}`, 'utf8')
    .digest('hex')
    .slice(0, 32);
}
