// The request bodies of the API (docs/api.md) as zod schemas: a watermark request, an ingest request and the
// list query, checked the same way whether they arrive over HTTP or are built by the CLI from flags.
import { z } from 'zod';
import { withoutNullFields } from './absent-fields.js';
import type { ApiVersion } from './api-version.js';
import { validationError, WmarkError } from './errors.js';
import { parseExpirationField } from './expiration.js';
import { FORENSIC_LAYOUTS } from './forensic-layout.js';
import { describeValue, isPlainObject } from './issue-text.js';
import { checkMappings } from './placeholders.js';
import { renderTemplate } from './render-template.js';
import { parseSettings } from './setting-schema.js';
import type { Setting, TemplateSetting } from './setting-types.js';

export const CONTAINERS = ['m3u8', 'mp4'] as const;
export type Container = (typeof CONTAINERS)[number];
/** The API's default when a request names no containers (docs/api.md, "Watermarks"). */
export const DEFAULT_CONTAINERS: Container[] = ['m3u8', 'mp4'];

const expected = (what: string) => (issue: { input?: unknown }) => `expected ${what}, got ${describeValue(issue.input)}`;
const text = (what: string, max: number) =>
  z
    .string({ error: expected(what) })
    .min(1, { error: expected(what) })
    .max(max, { error: `expected at most ${max} characters` });

const watermarkBodySchema = z.object({
  key: text("the video's key (a non-empty string)", 2048).optional(),
  videoId: text('a video id (a non-empty string)', 200).optional(),
  /** Accepted as another name for videoId, as the API allows. */
  id: text('a video id (a non-empty string)', 200).optional(),
  settings: z.unknown().optional(),
  settingsTemplateMapping: z
    .object(
      {
        id: text('a template id (a non-empty string)', 200),
        mappings: z.unknown().optional(),
      },
      { error: expected('an object {id, mappings}') },
    )
    .optional(),
  containers: z
    .array(z.enum(CONTAINERS, { error: expected('m3u8 or mp4') }), { error: expected('an array of m3u8 and/or mp4') })
    .min(1, { error: 'expected at least one of m3u8, mp4' })
    .optional(),
  expiration: z.unknown().optional(),
});

const videoBodySchema = z
  .object({
    sourceUrl: text('a file path or an http(s) URL (a non-empty string)', 4096),
    key: text('a non-empty string', 2048).optional(),
    name: z
      .string({ error: expected('a string') })
      .max(500, { error: 'expected at most 500 characters' })
      .optional(),
    enableForensic: z.boolean({ error: expected('true or false') }).optional(),
    /** wmark's own field (docs/forensic.md): how the segments carry the forensic code. */
    forensicLayout: z.enum(FORENSIC_LAYOUTS, { error: expected(FORENSIC_LAYOUTS.join(', ')) }).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.forensicLayout !== undefined && body.enableForensic !== true) {
      ctx.addIssue({ code: 'custom', path: ['forensicLayout'], message: 'applies to forensic videos only: send enableForensic: true with it' });
    }
  });

const listQuerySchema = z.object({
  key: z.string().optional(),
  limit: z.coerce
    .number({ error: expected('a whole number from 1 to 1000') })
    .int({ error: expected('a whole number from 1 to 1000') })
    .min(1, { error: expected('a whole number from 1 to 1000') })
    .max(1000, { error: expected('a whole number from 1 to 1000') })
    .default(100),
  page: z.coerce
    .number({ error: expected('a whole number from 1') })
    .int({ error: expected('a whole number from 1') })
    .min(1, { error: expected('a whole number from 1') })
    .default(1),
});

/** zod's issues as our `path: message` lines. */
function issuesOf(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((i) => {
    const where = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
    return where ? `${where}: ${i.message}` : i.message;
  });
}

function parseObject<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === undefined) body = {};
  if (!isPlainObject(body)) throw new WmarkError('INVALID_BODY', 'the request body must be a JSON object');
  const result = schema.safeParse(withoutNullFields(body));
  if (!result.success) throw validationError('VALIDATION_FAILED', issuesOf(result.error));
  return result.data;
}

/** What a watermark request draws: settings, or a template to render with these placeholder values. */
export type WatermarkDraw = { settings: Setting[] } | { template: { id: string; mappings: Readonly<Record<string, unknown>> } };

/** A watermark request once parsed: the one shape the HTTP route, the CLI and the library hand to a service. */
export interface WatermarkOrder {
  video: { key?: string; videoId?: string };
  draw: WatermarkDraw;
  containers: Container[];
  /** Unix seconds; honoured only when this request creates the watermark (see docs/settings.md). */
  expirationSeconds?: number;
  /**
   * The request as its sender wrote it, only what was given, in the API version it was made for: what a front end
   * passes on to a remote service, so the service there fills in its own defaults.
   */
  asSent?: WatermarkBodyGiven;
}

/** The fields of a watermark request body that wmark knows, as a sender gave them (unknown fields dropped, nulls too). */
export type WatermarkBodyGiven = Readonly<z.infer<typeof watermarkBodySchema>>;

export interface WatermarkParseContext {
  api: ApiVersion;
  nowMs: number;
}

/** Checks a watermark request body: the order it makes, or a 400 naming every field that is wrong. */
export function parseWatermarkOrder(input: unknown, context: WatermarkParseContext): WatermarkOrder {
  const body = parseObject(watermarkBodySchema, input);
  const draw = drawOf(body, context.api);
  const issues: string[] = [];
  let expirationSeconds: number | undefined;
  if (body.expiration !== undefined) {
    const e = parseExpirationField(body.expiration, context.nowMs);
    if (!e.ok) issues.push(e.message);
    else expirationSeconds = e.unixSeconds;
  }
  const videoId = body.videoId ?? body.id;
  if (!videoId && body.key === undefined) issues.push('key or videoId: identify the video by the key given at ingest or by its id');
  if (issues.length) throw validationError('VALIDATION_FAILED', issues);
  return {
    video: { ...(body.key !== undefined ? { key: body.key } : {}), ...(videoId ? { videoId } : {}) },
    draw,
    containers: body.containers ? [...new Set(body.containers)] : DEFAULT_CONTAINERS,
    ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
    asSent: body,
  };
}

const MAPPINGS_PATH = 'settingsTemplateMapping.mappings';

function drawOf(body: z.infer<typeof watermarkBodySchema>, api: ApiVersion): WatermarkDraw {
  if (body.settings !== undefined && body.settingsTemplateMapping !== undefined) {
    throw validationError('VALIDATION_FAILED', ['send either settings or settingsTemplateMapping, not both']);
  }
  const mapping = body.settingsTemplateMapping;
  if (mapping) {
    const mappings = mapping.mappings ?? {};
    if (!isPlainObject(mappings)) throw validationError('VALIDATION_FAILED', checkMappings([], mappings, MAPPINGS_PATH));
    return { template: { id: mapping.id, mappings } };
  }
  if (body.settings === undefined) throw validationError('VALIDATION_FAILED', ['settings or settingsTemplateMapping is required']);
  const parsed = parseSettings(body.settings, { apiVersion: api });
  if (!parsed.ok) throw validationError('VALIDATION_FAILED', parsed.issues);
  return { settings: parsed.value };
}

/**
 * The settings an order draws, its template rendered with its values (TEMPLATE_NOT_FOUND when `template` is undefined),
 * and where they came from, for messages about them: `settings`, or `template.settings`.
 */
export function orderSettings(
  draw: WatermarkDraw,
  api: ApiVersion,
  template: readonly TemplateSetting[] | undefined,
): { settings: Setting[]; settingsPath: string } {
  if ('settings' in draw) return { settings: draw.settings, settingsPath: 'settings' };
  if (!template) throw new WmarkError('TEMPLATE_NOT_FOUND', `no template with id "${draw.template.id}"`);
  const rendered = renderTemplate(template, draw.template.mappings, api, { mappingsPath: MAPPINGS_PATH });
  if (!rendered.ok) throw validationError('VALIDATION_FAILED', rendered.issues);
  return { settings: rendered.value, settingsPath: 'template.settings' };
}

export type VideoOrder = z.infer<typeof videoBodySchema>;

export function parseVideoRequest(input: unknown): VideoOrder {
  return parseObject(videoBodySchema, input);
}

/**
 * The query of a video list. SDKs append `?key=` unencoded: API 0.1's always, 1.0's PHP SDK too. Then everything after
 * `key=` is the key (so a key that is a URL with its own `?` and `&` stays whole), percent-escapes decoded where they
 * are valid. On 1.0 and 2.0 a key is read so only when it holds a literal `?`, which an encoded one never does, since
 * their clients may also send `&limit=` after an encoded key. Other queries as usual.
 */
export function listQueryOf(rawUrl: string, legacy: boolean): Record<string, string> {
  const at = rawUrl.indexOf('?');
  const query = at < 0 ? '' : rawUrl.slice(at + 1);
  const whole = query.startsWith('key=') && (legacy || query.includes('?'));
  if (!whole) return Object.fromEntries(new URLSearchParams(query));
  const raw = query.slice('key='.length);
  try {
    return { key: decodeURIComponent(raw) };
  } catch {
    return { key: raw };
  }
}

/**
 * API 0.1's watermark body as a 1.0 request: the node SDK sends 1.0's `{key, settings: [...]}` already; the Java SDK
 * sends `settings` as an encoding object `{saturation, resolution, bitRate, watermarks: [...]}`, whose `watermarks` are
 * the settings. wmark keeps the source's colours, resolution and its own bit rate, so the other three are ignored.
 */
export function legacyWatermarkBody(input: unknown): unknown {
  if (!isPlainObject(input) || !isPlainObject(input.settings)) return input;
  const { watermarks } = input.settings as { watermarks?: unknown };
  if (watermarks === undefined) throw validationError('VALIDATION_FAILED', ['settings.watermarks: required (an array of setting objects)']);
  return { ...input, settings: watermarks };
}

export function parseListQuery(query: Record<string, string>): { key?: string; limit: number; page: number } {
  const q = listQuerySchema.safeParse(query);
  if (!q.success) throw validationError('VALIDATION_FAILED', issuesOf(q.error));
  return q.data;
}
