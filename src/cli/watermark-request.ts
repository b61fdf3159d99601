// Turns `wmark watermark` flags into API watermark requests (docs/api.md, "Watermarks"): one from setting flags,
// --settings or --template + --map, or one per row of a --batch file. The same bodies go to the local engine or a
// remote service; what the CLI builds itself (setting flags, mappings) is checked here so its errors name the flags.

import path from 'node:path';
import { CONTAINERS, type Container, DEFAULT_CONTAINERS, type WatermarkOrder } from '../core/api-requests.js';
import type { ApiVersion } from '../core/api-version.js';
import { type BatchRow, parseBatch } from '../core/batch-file.js';
import { validationError, WmarkError } from '../core/errors.js';
import { parseExpirationInput } from '../core/expiration.js';
import { encodeForensicContent } from '../core/forensic-payload.js';
import { isHttpUrl } from '../core/http-url.js';
import { checkMappings, templatePlaceholders } from '../core/placeholders.js';
import { parseSettings } from '../core/setting-schema.js';
import type { Setting, TemplateSetting } from '../core/setting-types.js';
import type { TemplateResource } from '../service/watermark-service.js';
import { flagError } from './flag-error.js';
import { parseForensicPayload } from './forensic-flag.js';
import type { CliIO } from './io.js';
import { readJsonInput, readTextInput } from './read-input.js';

interface SettingFlags {
  text?: string;
  image?: string;
  imageWidth?: number;
  imageOpacity?: number;
  x?: number;
  y?: number;
  fontSize?: number;
  fontColor?: string;
  fontOpacity?: number;
  align?: string;
  verticalAlign?: string;
  shadowColor?: string;
  shadowOpacity?: number;
  shadowOffsetX?: number;
  shadowOffsetY?: number;
  moveToX?: number;
  moveToY?: number;
  moveStart?: number;
  moveEnd?: number;
}

export interface RequestFlags extends SettingFlags {
  key?: string;
  videoId?: string;
  settings?: string;
  forensic?: string;
  template?: string;
  map?: string[];
  batch?: string;
  containers?: string;
  expiration?: string;
}

/** The flags that place a setting, TEXT or IMAGE alike. */
const PLACEMENT_FLAGS: [keyof SettingFlags, string][] = [
  ['x', 'x'],
  ['y', 'y'],
  ['align', 'align'],
  ['verticalAlign', 'verticalAlign'],
];

/** The flags of a TEXT setting's look, and of an IMAGE's. */
const TEXT_FLAGS: [keyof SettingFlags, string][] = [
  ['fontSize', 'fontSize'],
  ['fontColor', 'fontColor'],
  ['fontOpacity', 'fontOpacity'],
  ['shadowColor', 'shadowColor'],
  ['shadowOpacity', 'shadowOpacity'],
  ['shadowOffsetX', 'shadowOffsetX'],
  ['shadowOffsetY', 'shadowOffsetY'],
];
const IMAGE_FLAGS: [keyof SettingFlags, string][] = [
  ['imageWidth', 'width'],
  ['imageOpacity', 'opacity'],
];

const FLAG_NAMES: Record<string, string> = {
  width: '--image-width',
  opacity: '--image-opacity',
  fontSize: '--font-size',
  fontColor: '--font-color',
  fontOpacity: '--font-opacity',
  verticalAlign: '--vertical-align',
  shadowColor: '--shadow-color',
  shadowOpacity: '--shadow-opacity',
  shadowOffsetX: '--shadow-offset-x',
  shadowOffsetY: '--shadow-offset-y',
  'animation.toX': '--move-to-x',
  'animation.toY': '--move-to-y',
  'animation.startTime': '--move-start',
  'animation.endTime': '--move-end',
};

/** A flag's name as typed: `fontSize` is `--font-size`. */
const flagName = (flag: string) => `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * A single TEXT or IMAGE setting object from the flags, in the API's shape (docs/settings.md), so it is validated
 * exactly like an API request: --text draws text, --image a picture, both placed by the same position and move flags.
 * A local image path is made absolute against `cwd` (the service reading it may run in another folder).
 */
function settingFromFlags(opts: SettingFlags, cwd = process.cwd()): Record<string, unknown> | undefined {
  const given = (flags: [keyof SettingFlags, string][]) => flags.filter(([flag]) => opts[flag] !== undefined);
  if (opts.text !== undefined && opts.image !== undefined) {
    throw new WmarkError('SETTINGS_CONFLICT', 'give --text or --image, not both: text and an image in one watermark come from --settings or --template', {
      hint: 'e.g. --settings with [{"content": "for alice"}, {"type": "IMAGE", "content": "https://cdn.example.com/logo.png"}] (docs/settings.md)',
    });
  }
  const image = opts.image !== undefined;
  const wrong = given(image ? TEXT_FLAGS : IMAGE_FLAGS);
  if (wrong.length) {
    const names = wrong.map(([flag]) => flagName(flag)).join(', ');
    throw new WmarkError(
      'SETTINGS_CONFLICT',
      image ? `${names}: text flags do not apply to --image (size it with --image-width, fade it with --image-opacity)` : `${names}: image flags need --image`,
    );
  }
  const setting: Record<string, unknown> = {};
  if (image) {
    const content = opts.image!.trim();
    Object.assign(setting, { type: 'IMAGE', content: isHttpUrl(content) || content === '' ? content : path.resolve(cwd, content) });
  } else if (opts.text !== undefined) setting.content = opts.text;
  for (const [flag, field] of [...PLACEMENT_FLAGS, ...given(image ? IMAGE_FLAGS : TEXT_FLAGS)]) if (opts[flag] !== undefined) setting[field] = opts[flag];
  const move = { toX: opts.moveToX, toY: opts.moveToY, startTime: opts.moveStart, endTime: opts.moveEnd };
  if (Object.values(move).some((v) => v !== undefined)) {
    setting.animation = { type: 'MOVE', ...Object.fromEntries(Object.entries(move).filter(([, v]) => v !== undefined)) };
  }
  return Object.keys(setting).length ? setting : undefined;
}

/** Validation issues about flags name the flag the user typed, not the setting field behind it. */
function flagIssue(issue: string, image = false): string {
  return issue.replace(/^flags\[0\]\.([\w.]+)/, (_, field: string) =>
    field === 'content' ? (image ? '--image' : '--text') : (FLAG_NAMES[field] ?? `--${field}`),
  );
}

function parseContainers(list: string): Container[] {
  const items = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (!items.length || items.some((c) => !(CONTAINERS as readonly string[]).includes(c))) {
    throw flagError('--containers', 'm3u8, mp4 or m3u8,mp4', list, { code: 'BAD_CONTAINERS' });
  }
  return [...new Set(items)] as Container[];
}

function parseMaps(maps: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of maps ?? []) {
    const eq = m.indexOf('=');
    if (eq <= 0) throw flagError('--map', 'name=value', m, { code: 'BAD_MAP', hint: 'e.g. --map name=Alice; `wmark template show ID` lists the names.' });
    const name = m.slice(0, eq);
    if (Object.hasOwn(out, name)) throw new WmarkError('BAD_MAP', `--map: "${name}" is given twice`);
    out[name] = m.slice(eq + 1);
  }
  return out;
}

/** What a watermark command asks for: the parts every request shares, and how settings are given. */
export interface PlannedRequests {
  base: Pick<WatermarkOrder, 'video' | 'expirationSeconds'> & { containers?: Container[] };
  /** The setting the flags draw, parsed. */
  settings?: Setting[];
  /** The same setting as the flags gave it, before defaults. */
  givenSettings?: unknown[];
  /** A --settings file as read: parsed once the API version is known (FORENSIC content's encoding follows it). */
  settingsFile?: { label: string; raw: unknown[] };
  /** --forensic, encoded for the API version at send time. */
  forensicPayload?: number;
  template?: { id: string; mappings: Record<string, string> };
  batch?: { label: string; rows: BatchRow[] };
}

/** Checks the flags that need no service (which video, which settings source, containers, expiration, batch rows). */
export async function planRequests(io: CliIO, opts: RequestFlags, nowMs: number): Promise<PlannedRequests> {
  if (!opts.key && !opts.videoId)
    throw new WmarkError('VIDEO_REQUIRED', 'which video? give --key KEY or --video-id ID', {
      hint: 'See `wmark video list`. At a terminal, `wmark watermark` alone asks for the video and the text.',
    });
  if (opts.key && opts.videoId) throw new WmarkError('VIDEO_CONFLICT', 'give either --key or --video-id, not both');
  const fromFlags = settingFromFlags(opts, io.cwd);
  const sources = [fromFlags && 'setting flags (--text or --image, --x, ...)', opts.settings && '--settings', opts.template && '--template'].filter(Boolean);
  // Checked before "say what to draw": a --batch or --map alone lacks exactly its template.
  if (!opts.template && opts.map?.length) throw new WmarkError('MAP_NEEDS_TEMPLATE', '--map only applies with --template');
  if (!opts.template && opts.batch)
    throw new WmarkError('BATCH_NEEDS_TEMPLATE', '--batch needs --template: each row fills the placeholders of that template', {
      hint: 'e.g. wmark watermark --key movie --template TEMPLATE_ID --batch viewers.csv, whose header row names the placeholders (`wmark template show TEMPLATE_ID` lists them).',
    });
  // A forensic mark alone is a complete watermark: nothing visible to draw.
  if (sources.length === 0 && opts.forensic === undefined)
    throw new WmarkError('SETTINGS_REQUIRED', 'say what to draw: --text or --image (with setting flags), --settings FILE, or --template ID with --map');
  if (sources.length > 1) throw new WmarkError('SETTINGS_CONFLICT', `use only one of ${sources.join(', ')}`);
  if (fromFlags && fromFlags.content === undefined) throw new WmarkError('TEXT_REQUIRED', 'setting flags need --text (or --image)');
  if (opts.batch && opts.map?.length) throw new WmarkError('BATCH_AND_MAP', '--batch and --map cannot be combined: put the values in the batch file');
  if (opts.template && opts.forensic !== undefined) {
    throw new WmarkError('SETTINGS_CONFLICT', '--forensic cannot be added to a --template request: the service renders the template', {
      hint: 'Put a FORENSIC setting with a placeholder in the template (content "%payload%") and give the payload with --map (or a batch column).',
    });
  }
  const base: PlannedRequests['base'] = {
    video: opts.key !== undefined ? { key: opts.key } : { videoId: opts.videoId },
    ...(opts.containers !== undefined ? { containers: parseContainers(opts.containers) } : {}),
    ...(opts.expiration !== undefined ? { expirationSeconds: expirationFlag(opts.expiration, nowMs) } : {}),
  };
  if (opts.template) {
    if (!opts.batch) return { base, template: { id: opts.template, mappings: parseMaps(opts.map) } };
    const { text, label } = await readTextInput(io, opts.batch);
    const rows = parseBatch(text, /\.ndjson$|\.jsonl$/i.test(opts.batch) ? 'ndjson' : /\.csv$/i.test(opts.batch) ? 'csv' : 'auto');
    if (!rows.ok)
      throw validationError(
        'BATCH_INVALID',
        rows.issues.map((i) => `${label}: ${i}`),
      );
    return { base, template: { id: opts.template, mappings: {} }, batch: { label, rows: rows.value } };
  }
  const forensic = opts.forensic !== undefined ? { forensicPayload: parseForensicPayload(opts.forensic) } : {};
  if (fromFlags) {
    const parsed = parseSettings([fromFlags], { apiVersion: '2.0', path: 'flags' });
    if (!parsed.ok)
      throw validationError(
        'SETTINGS_INVALID',
        parsed.issues.map((issue) => flagIssue(issue, fromFlags.type === 'IMAGE')),
      );
    return { base, settings: parsed.value, givenSettings: [fromFlags], ...forensic };
  }
  if (opts.settings) {
    const raw = await readJsonInput(io, opts.settings);
    if (!Array.isArray(raw) || raw.length === 0 || raw.some((s) => typeof s !== 'object' || s === null || Array.isArray(s))) {
      throw new WmarkError('SETTINGS_INVALID', `${opts.settings}: expected a non-empty JSON array of setting objects (see docs/settings.md)`);
    }
    return { base, settingsFile: { label: opts.settings, raw }, ...forensic };
  }
  return { base, settings: [], ...forensic };
}

/**
 * The order for these settings: the request's video, containers and expiration, and the request as the flags gave it
 * (`drawn`: its settings, or its template mapping), which a remote service receives so it fills in its own defaults.
 */
function orderOf(plan: PlannedRequests, draw: WatermarkOrder['draw'], drawn: Record<string, unknown>): WatermarkOrder {
  const { video, containers, expirationSeconds } = plan.base;
  const asSent = {
    ...video,
    ...drawn,
    ...(containers !== undefined ? { containers } : {}),
    ...(expirationSeconds !== undefined ? { expiration: expirationSeconds } : {}),
  };
  return { video, draw, containers: containers ?? DEFAULT_CONTAINERS, ...(expirationSeconds !== undefined ? { expirationSeconds } : {}), asSent };
}

/** A --settings file's settings, checked as the service checks a request's (VALIDATION_FAILED, naming each field). */
function fileSettings(file: NonNullable<PlannedRequests['settingsFile']>, api: ApiVersion): Setting[] {
  const parsed = parseSettings(file.raw, { apiVersion: api });
  if (!parsed.ok) throw validationError('VALIDATION_FAILED', parsed.issues);
  return parsed.value;
}

/** The order of a settings request in the API version it is sent with (the FORENSIC content's encoding depends on it). */
export function settingsRequest(plan: PlannedRequests, api: ApiVersion): WatermarkOrder {
  let settings = plan.settingsFile ? fileSettings(plan.settingsFile, api) : (plan.settings ?? []);
  let given = plan.settingsFile?.raw ?? plan.givenSettings ?? [];
  if (plan.forensicPayload !== undefined) {
    // On the wire the payload is FORENSIC content, 2 ASCII characters in 1.0, base64 of 2 bytes in 2.0 (docs/settings.md,
    // "FORENSIC settings"): a payload 1.0 cannot carry is refused here, naming the flag.
    const content = encodeForensicContent(plan.forensicPayload, api);
    if (content === undefined) {
      throw new WmarkError('BAD_FORENSIC', `--forensic: payload ${plan.forensicPayload} cannot be written as 2 ASCII characters, which API 1.0 requires`, {
        hint: 'Use --api 2.0, or a payload whose two bytes are both below 128.',
      });
    }
    settings = [...settings.filter((s) => s.type !== 'FORENSIC'), { type: 'FORENSIC', payload: plan.forensicPayload }];
    given = [...given.filter((s) => (s as { type?: unknown }).type !== 'FORENSIC'), { type: 'FORENSIC', content }];
  }
  return orderOf(plan, { settings }, { settings: given });
}

function expirationFlag(text: string, nowMs: number): number {
  const parsed = parseExpirationInput(text, nowMs);
  // The message already starts with --expiration.
  if (!parsed.ok) throw new WmarkError('BAD_EXPIRATION', parsed.message, parsed.hint ? { hint: parsed.hint } : {});
  return parsed.unixSeconds;
}

/**
 * The template's requests, their mappings checked against its placeholders first, so a typo on row 40 does not waste
 * 39 renders: TEMPLATE_MAPPING_INVALID for --map, BATCH_INVALID naming every bad row of a batch.
 */
export function templateRequests(
  plan: PlannedRequests,
  template: TemplateResource,
): { label: string; line?: number; mappings: Record<string, string>; request: WatermarkOrder }[] {
  const placeholders = template.placeholders ?? templatePlaceholders((template.settings ?? []) as TemplateSetting[]);
  const rows = plan.batch
    ? plan.batch.rows.map((r) => ({ label: `${plan.batch!.label} line ${r.line}`, line: r.line, mappings: r.mappings }))
    : [{ label: '--map', mappings: plan.template!.mappings }];
  const issues = rows.flatMap((r) => checkMappings(placeholders, r.mappings, r.label));
  if (issues.length)
    throw validationError(
      plan.batch ? 'BATCH_INVALID' : 'TEMPLATE_MAPPING_INVALID',
      issues,
      `\`wmark template show ${template.id}\` lists the placeholders it needs${placeholders.length ? ` (${placeholders.join(', ')})` : ''}.`,
    );
  return rows.map((r) => ({
    ...r,
    request: orderOf(plan, { template: { id: template.id, mappings: r.mappings } }, { settingsTemplateMapping: { id: template.id, mappings: r.mappings } }),
  }));
}
