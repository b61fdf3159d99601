// The HTTP service: API 1.0 and 2.0 (tokens, videos, templates, watermarks), signed media, and the player page.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { isWmarkError, WmarkError } from '../core/errors.js';
import { verifyToken, signToken } from '../core/jwt.js';
import { parseExpirationField } from '../core/expiration.js';
import { rewritePlaylistUris } from '../core/playlist.js';
import { renderTemplate } from '../core/render-template.js';
import { parseSettings } from '../core/setting-schema.js';
import type { ApiVersion } from '../core/api-version.js';
import type { Setting, TemplateSetting } from '../core/setting-types.js';
import { verifySignedUrl } from '../core/sign-url.js';
import { mediaScope, playerPath, verifyPlayerUrl } from '../core/watermark-urls.js';
import { checkCredential, isActiveClient, tokenKey } from '../engine/credentials.js';
import type { Engine } from '../engine/engine.js';
import { FORENSIC_MIN_SECONDS, ingestVideo } from '../engine/ingest.js';
import type { JobQueue } from '../engine/job-queue.js';
import { toTemplateResource, toVideoResource } from '../engine/resources.js';
import type { Container, VideoRecord, WatermarkRecord } from '../engine/store.js';
import { createTemplate, findTemplate, listTemplates } from '../engine/templates.js';
import { isExpired, MP4_NAME, PLAYLIST_NAME, requestWatermark, watermarkDir } from '../engine/watermark.js';
import { STATUS_URL_GRACE_MS } from '../engine/watermark-view.js';
import { VERSION } from '../cli/version.js';
import { BODY_LIMIT_BYTES, checkRawPath, HttpError, MEDIA_CORS, readJsonBody, sendError, sendJson } from './http-kit.js';
import { watermarkResponse } from './api-responses.js';
import { CONTENT_TYPES, serveFile } from './serve-file.js';

const require = createRequire(import.meta.url);
const PLAYER_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'templates', 'player');
const HLS_JS = path.join(path.dirname(require.resolve('hls.js/package.json')), 'dist', 'hls.min.js');

export interface AppOptions {
  engine: Engine;
  queue: JobQueue;
  /** Base of the URLs handed out; when unset, taken from the request's Host header. */
  publicUrl?: string;
  tokenTtlSeconds: number;
  /** How long POST /2.0/watermark waits for a new watermark to become playable. */
  playableTimeoutMs?: number;
  log?: (line: string) => void;
}

type Handler = (ctx: RequestContext) => Promise<void>;

interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  rawUrl: string;
  params: string[];
  version: ApiVersion;
}

const UUID = '[0-9a-fA-F-]{36}';
const HASH = '[0-9a-f]{32}';
const SEGMENT_FILE = /^(video\.m3u8|video\.mp4|seg_\d{5}\.ts)$/;
const INGEST_INPUT_ERRORS = new Set(['SOURCE_NOT_FOUND', 'SOURCE_EMPTY', 'SOURCE_NOT_A_FILE', 'NOT_A_VIDEO', 'NO_VIDEO_STREAM', 'SOURCE_UNREACHABLE', 'BAD_FRAME_RATE', 'BAD_DIMENSIONS', 'FORENSIC_TOO_SHORT', 'NO_FRAMES']);

const videoBody = z.object({
  sourceUrl: z.string().min(1, 'sourceUrl: must not be empty'),
  key: z.string().min(1).max(2048).optional(),
  name: z.string().max(500).optional(),
  enableForensic: z.boolean().optional(),
});

const watermarkBody = z.object({
  key: z.string().min(1).optional(),
  videoId: z.string().min(1).optional(),
  id: z.string().min(1).optional(),
  settings: z.unknown().optional(),
  settingsTemplateMapping: z.object({ id: z.string().min(1), mappings: z.unknown().optional() }).optional(),
  containers: z.array(z.enum(['m3u8', 'mp4'])).min(1).optional(),
  expiration: z.unknown().optional(),
});

const listQuery = z.object({
  key: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  page: z.coerce.number().int().min(1).default(1),
});

function zodIssues(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((i) => {
    const where = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
    return where ? `${where}: ${i.message}` : i.message;
  });
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === undefined) body = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'INVALID_BODY', 'the request body must be a JSON object');
  const result = schema.safeParse(body);
  if (!result.success) throw new HttpError(400, 'VALIDATION_FAILED', zodIssues(result.error));
  return result.data;
}

export function createApp(options: AppOptions) {
  const { engine, queue } = options;
  const log = options.log ?? (() => {});
  const playableTimeout = options.playableTimeoutMs ?? 120_000;

  // Links handed out under a --public-url with a path (a reverse proxy that strips it) were signed with that path: verify
  // what the client requested, i.e. the prefix plus what reached us.
  const signedPrefix = options.publicUrl ? new URL(options.publicUrl).pathname.replace(/\/+$/, '') : '';

  const baseUrlOf = (req: IncomingMessage): string => {
    if (options.publicUrl) return options.publicUrl;
    const host = String(req.headers.host ?? '');
    // Only a plausible host[:port] is echoed back into signed links.
    return /^[A-Za-z0-9.\-[\]:]+$/.test(host) ? `http://${host}` : 'http://127.0.0.1';
  };

  // ---- authentication
  function authenticate(ctx: RequestContext): string {
    const { req, version } = ctx;
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1]?.trim();
    if (bearer) {
      const check = verifyToken(tokenKey(engine), bearer, Math.floor(engine.now() / 1000));
      if (!check.ok) throw new HttpError(401, check.reason === 'expired' ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID', check.reason === 'expired' ? 'the access token has expired; get a new one from /1.0/authenticate/accessToken' : 'invalid access token');
      if (!isActiveClient(engine, check.claims.sub)) throw new HttpError(401, 'TOKEN_INVALID', 'the credentials behind this token were revoked');
      return check.claims.sub;
    }
    if (version === '1.0') throw new HttpError(401, 'AUTH_REQUIRED', 'missing credentials: send Authorization: Bearer <token> (get one from GET /1.0/authenticate/accessToken)');
    return checkKeyHeaders(req);
  }

  function checkKeyHeaders(req: IncomingMessage): string {
    const key = header(req, 'x-api-key');
    const clientId = header(req, 'x-api-client-id');
    const secret = header(req, 'x-api-secret');
    const pair = clientId && key ? { clientId, key } : key && secret ? { clientId: key, key: secret } : undefined;
    if (!pair) throw new HttpError(401, 'AUTH_REQUIRED', 'missing credentials: send x-api-client-id and x-api-key (or Authorization: Bearer <token>)');
    const record = checkCredential(engine, pair.clientId, pair.key);
    if (!record) throw new HttpError(401, 'AUTH_INVALID', 'invalid client id or API key');
    return record.clientId;
  }

  // ---- routes
  const routes: { method: string[]; pattern: RegExp; handler: Handler; cors?: boolean }[] = [];
  const route = (method: string | string[], pattern: string, handler: Handler, cors = false) =>
    routes.push({ method: Array.isArray(method) ? method : [method], pattern: new RegExp(`^${pattern}$`), handler, cors });

  route('GET', '/healthz', async ({ res }) => sendJson(res, 200, { ok: true }));

  route('GET', '/1\\.0/authenticate/accessToken', async ({ req, res }) => {
    const clientId = checkKeyHeaders(req);
    const now = Math.floor(engine.now() / 1000);
    const token = signToken(tokenKey(engine), { sub: clientId, iat: now, exp: now + options.tokenTtlSeconds });
    sendJson(res, 200, { token, expiresIn: options.tokenTtlSeconds });
  });

  route('GET', '/(1\\.0|2\\.0)/?', async (ctx) => {
    const client = authenticate(ctx);
    sendJson(ctx.res, 200, {
      service: 'wmark',
      version: VERSION,
      apiVersions: ['1.0', '2.0'],
      client,
      limits: { requestBodyBytes: BODY_LIMIT_BYTES, settingsPerRequest: 20, forensicMinimumSeconds: FORENSIC_MIN_SECONDS, forensicPayloadBits: 16, pollIntervalSeconds: 3 },
    });
  });

  route('POST', '/(1\\.0|2\\.0)/videos/?', async (ctx) => {
    authenticate(ctx);
    const body = parseBody(videoBody, await readJsonBody(ctx.req));
    const key = body.key ?? body.sourceUrl;
    const existing = engine.store.getVideoByKey(key);
    if (existing && !existing.status.startsWith('FAILED')) {
      if (body.enableForensic && !existing.enableForensic) {
        throw new HttpError(409, 'KEY_EXISTS', `a video with key "${key}" was already ingested without forensic preparation; ingest it again under another key with enableForensic`);
      }
      return sendJson(ctx.res, 200, toVideoResource(existing));
    }
    // Only the request that registers the video answers 201; one that lost a race for the same key gets 200, as a repeat would.
    const registered = await new Promise<{ video: VideoRecord; created: boolean }>((resolve, reject) => {
      ingestVideo(engine, { source: body.sourceUrl, key, name: body.name, enableForensic: body.enableForensic }, { onRegistered: (video) => resolve({ video, created: true }) })
        .then((r) => resolve(r))
        .catch((error: unknown) => {
          reject(error);
          log(`ingest of ${body.sourceUrl} failed: ${error instanceof Error ? error.message : String(error)}`);
        });
    }).catch((error: unknown) => {
      if (isWmarkError(error) && INGEST_INPUT_ERRORS.has(error.code)) throw new HttpError(422, error.code, error.message);
      throw error;
    });
    sendJson(ctx.res, registered.created ? 201 : 200, toVideoResource(engine.store.getVideo(registered.video.id) ?? registered.video));
  });

  route('GET', '/(1\\.0|2\\.0)/videos/?', async (ctx) => {
    authenticate(ctx);
    const q = listQuery.safeParse(Object.fromEntries(ctx.url.searchParams));
    if (!q.success) throw new HttpError(400, 'VALIDATION_FAILED', zodIssues(q.error));
    const videos = engine.store.listVideos({ key: q.data.key, limit: q.data.limit, offset: (q.data.page - 1) * q.data.limit });
    sendJson(ctx.res, 200, videos.map(toVideoResource));
  });

  route('GET', `/(1\\.0|2\\.0)/videos/([^/]+)`, async (ctx) => {
    authenticate(ctx);
    const video = engine.store.getVideo(decodeURIComponent(ctx.params[1]!));
    if (!video) throw new HttpError(404, 'VIDEO_NOT_FOUND', `no video with id "${ctx.params[1]}"`);
    sendJson(ctx.res, 200, toVideoResource(video));
  });

  route('POST', '/(1\\.0|2\\.0)/templates/?', async (ctx) => {
    authenticate(ctx);
    const body = await readJsonBody(ctx.req);
    sendJson(ctx.res, 201, toTemplateResource(createTemplate(engine, body ?? {}, ctx.version)));
  });

  route('GET', '/(1\\.0|2\\.0)/templates/?', async (ctx) => {
    authenticate(ctx);
    sendJson(ctx.res, 200, listTemplates(engine).map((t) => ({ ...toTemplateResource(t), builtin: t.builtin })));
  });

  route('GET', '/(1\\.0|2\\.0)/templates/([^/]+)', async (ctx) => {
    authenticate(ctx);
    const t = findTemplate(engine, decodeURIComponent(ctx.params[1]!));
    if (!t) throw new HttpError(404, 'TEMPLATE_NOT_FOUND', `no template with id "${ctx.params[1]}"`);
    sendJson(ctx.res, 200, toTemplateResource(t));
  });

  route('POST', '/(1\\.0|2\\.0)/watermark/?', async (ctx) => {
    authenticate(ctx);
    const body = parseBody(watermarkBody, await readJsonBody(ctx.req));
    const settings = watermarkSettings(body, ctx.version);
    const issues: string[] = [];
    let expirationSeconds: number | undefined;
    if (body.expiration !== undefined && body.expiration !== null) {
      const e = parseExpirationField(body.expiration, engine.now());
      if (!e.ok) issues.push(e.message);
      else expirationSeconds = e.unixSeconds;
    }
    const videoId = body.videoId ?? body.id;
    if (!videoId && body.key === undefined) issues.push('key or videoId: identify the video by the key given at ingest or by its id');
    if (issues.length) throw new HttpError(400, 'VALIDATION_FAILED', issues);
    const containers: Container[] = body.containers ?? ['m3u8', 'mp4'];
    const result = requestWatermark(engine, { video: { key: body.key, videoId }, settings, containers, expirationSeconds });
    let record = result.watermark;
    // A forensic-only watermark needs no encode (its playlist picks existing A/B segments), so it starts at once, ahead
    // of any renders, and is READY at once.
    const forensicOnly = settings.every((s) => s.type === 'FORENSIC');
    if (record.status !== 'READY') queue.enqueue(record.id, { immediate: forensicOnly });
    if (forensicOnly && record.status === 'PENDING') record = await queue.waitPlayable(record.id, 15_000);
    if (ctx.version === '2.0' && record.status === 'PENDING') {
      record = await queue.waitPlayable(record.id, playableTimeout);
      if (record.status === 'PENDING') throw new HttpError(503, 'NOT_READY_YET', 'the watermark is still being prepared; send the same request again shortly', { 'Retry-After': '5' });
    }
    const response = watermarkResponse(engine, ctx.version, record, result.video, baseUrlOf(ctx.req), { includeHref: true });
    sendJson(ctx.res, result.created ? 201 : 200, response);
  });

  /** Signed status link: the 1.0 long-poll href, or the 2.0 resource link that returns freshly signed URLs. */
  route(['GET', 'HEAD'], `/(1\\.0|2\\.0)/watermark/(${UUID})/(${HASH})`, async (ctx) => {
    const { w, video } = signedWatermark(ctx, undefined);
    if (ctx.version === '1.0' && w.readyOn !== null && engine.now() > w.readyOn + STATUS_URL_GRACE_MS) {
      throw new HttpError(403, 'LINK_EXPIRED', 'this long-poll link expired after the watermark became READY; use the playlist link');
    }
    sendJson(ctx.res, 200, watermarkResponse(engine, ctx.version, w, video, baseUrlOf(ctx.req), { includeHref: ctx.version === '2.0' }), MEDIA_CORS);
  }, true);

  route(['GET', 'HEAD'], `/(1\\.0|2\\.0)/watermark/(${UUID})/(${HASH})/([^/]+)`, async (ctx) => {
    const file = ctx.params[3]!;
    if (!SEGMENT_FILE.test(file)) throw new HttpError(404, 'NOT_FOUND', 'no such file');
    const { w } = signedWatermark(ctx, mediaScope(ctx.version, ctx.params[1]!, ctx.params[2]!));
    const dir = watermarkDir(engine, w.videoId, w.id);
    if (file === PLAYLIST_NAME) return servePlaylist(ctx, path.join(dir, PLAYLIST_NAME));
    if (file === MP4_NAME && !w.containers.includes('mp4')) throw new HttpError(404, 'NOT_FOUND', 'this watermark was not requested with the mp4 container');
    const maxAge = Math.max(0, Math.floor((Number(ctx.url.searchParams.get('expiration')) - engine.now()) / 1000));
    await serveFile(ctx.req, ctx.res, path.join(dir, file), CONTENT_TYPES[path.extname(file)]!, {
      cacheControl: `private, max-age=${Math.min(maxAge, 31_536_000)}, immutable`,
      headers: MEDIA_CORS,
    });
  }, true);

  route(['GET', 'HEAD'], '/player/(1\\.0|2\\.0)/', async (ctx) => {
    const check = verifyPlayerUrl(engine.secret, ctx.url, engine.now(), signedPrefix + ctx.url.pathname);
    if (!check.ok) {
      const text = check.reason === 'expired' ? 'This link has expired. Ask for a new one.' : 'This link is not valid.';
      ctx.res.writeHead(403, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      return void ctx.res.end(`<!doctype html><meta charset="utf-8"><title>wmark</title><body style="font:16px system-ui;background:#000;color:#ff8a80;display:flex;align-items:center;justify-content:center;height:100vh;margin:0"><p>${text}</p>`);
    }
    await serveFile(ctx.req, ctx.res, path.join(PLAYER_DIR, 'index.html'), CONTENT_TYPES['.html']!, {
      cacheControl: 'no-store',
      headers: {
        'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; media-src * blob:; connect-src *; img-src 'self' data:; frame-ancestors *",
        'Referrer-Policy': 'no-referrer',
      },
    });
  });

  route(['GET', 'HEAD'], '/player/assets/(hls\\.min\\.js|player\\.js|player\\.css)', async (ctx) => {
    const name = ctx.params[0]!;
    const file = name === 'hls.min.js' ? HLS_JS : path.join(PLAYER_DIR, name);
    await serveFile(ctx.req, ctx.res, file, name.endsWith('.css') ? 'text/css; charset=utf-8' : CONTENT_TYPES['.js']!, { cacheControl: 'public, max-age=3600' });
  });

  function watermarkSettings(body: z.infer<typeof watermarkBody>, version: ApiVersion): Setting[] {
    if (body.settings !== undefined && body.settingsTemplateMapping !== undefined) {
      throw new HttpError(400, 'VALIDATION_FAILED', 'send either settings or settingsTemplateMapping, not both');
    }
    if (body.settingsTemplateMapping) {
      const template = findTemplate(engine, body.settingsTemplateMapping.id);
      if (!template) throw new HttpError(404, 'TEMPLATE_NOT_FOUND', `no template with id "${body.settingsTemplateMapping.id}"`);
      const rendered = renderTemplate(template.settings as TemplateSetting[], body.settingsTemplateMapping.mappings ?? {}, version);
      if (!rendered.ok) throw new HttpError(400, 'VALIDATION_FAILED', rendered.issues);
      return rendered.value;
    }
    if (body.settings === undefined) throw new HttpError(400, 'VALIDATION_FAILED', 'settings or settingsTemplateMapping is required');
    const parsed = parseSettings(body.settings, { apiVersion: version });
    if (!parsed.ok) throw new HttpError(400, 'VALIDATION_FAILED', parsed.issues);
    return parsed.value;
  }

  /** Verifies the link's signature and that its watermark exists, belongs to the video and has not expired. */
  function signedWatermark(ctx: RequestContext, scope: string | undefined): { w: WatermarkRecord; video: VideoRecord } {
    const check = verifySignedUrl(engine.secret, signedPrefix + ctx.rawUrl, engine.now(), scope ? { scope: signedPrefix + scope } : {});
    if (!check.ok) {
      // Links are capped at the watermark's own expiration, so a genuine link (reason 'expired' is only given after the
      // HMAC matched) that ran out with its watermark says so: renewing the link cannot help (SPEC 2.5, DESIGN 3).
      if (check.reason === 'expired') {
        const gone = engine.store.getWatermark(ctx.params[2]!);
        if (gone && gone.videoId === ctx.params[1] && isExpired(gone, engine.now())) {
          throw new HttpError(410, 'WATERMARK_EXPIRED', `this watermarked video expired on ${new Date(gone.expiration!).toISOString()}`);
        }
      }
      const messages = { missing: 'this link needs its expiration and signature parameters', malformed: 'malformed signed link', expired: 'this link has expired', invalid: 'invalid signature' };
      throw new HttpError(403, check.reason === 'expired' ? 'SIGNATURE_EXPIRED' : 'SIGNATURE_INVALID', messages[check.reason]);
    }
    const w = engine.store.getWatermark(ctx.params[2]!);
    const video = w && engine.store.getVideo(w.videoId);
    if (!w || !video || w.videoId !== ctx.params[1]) throw new HttpError(404, 'WATERMARK_NOT_FOUND', 'no such watermark');
    if (isExpired(w, engine.now())) throw new HttpError(410, 'WATERMARK_EXPIRED', `this watermarked video expired on ${new Date(w.expiration!).toISOString()}`);
    return { w, video };
  }

  /** Serves a playlist with each segment URI carrying the request's own (folder-scoped) signature. */
  async function servePlaylist(ctx: RequestContext, file: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new HttpError(404, 'NOT_READY', 'the playlist is not available yet');
    }
    const query = `expiration=${ctx.url.searchParams.get('expiration')}&signature=${ctx.url.searchParams.get('signature')}`;
    const body = rewritePlaylistUris(text, (uri) => `${uri}${uri.includes('?') ? '&' : '?'}${query}`);
    ctx.res.writeHead(200, {
      ...MEDIA_CORS,
      'Content-Type': CONTENT_TYPES['.m3u8']!,
      'Content-Length': Buffer.byteLength(body),
      // A playlist still growing must be re-fetched; a finished one is stable for the link's lifetime.
      'Cache-Control': text.includes('#EXT-X-ENDLIST') ? 'private, max-age=60' : 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    let corsHeaders: Record<string, string> = {};
    try {
      const rawPath = rawUrl.split('?')[0]!;
      checkRawPath(rawPath);
      const url = new URL(rawUrl, 'http://wmark.invalid');
      const method = req.method ?? 'GET';
      const matches = routes.map((r) => ({ r, m: r.pattern.exec(rawPath) })).filter((x) => x.m);
      if (!matches.length) throw new HttpError(404, 'NOT_FOUND', `no route for ${rawPath}`);
      if (matches.some((x) => x.r.cors)) corsHeaders = MEDIA_CORS;
      if (method === 'OPTIONS') {
        res.writeHead(204, { ...MEDIA_CORS, Allow: [...new Set(matches.flatMap((x) => x.r.method))].join(', ') });
        return void res.end();
      }
      const hit = matches.find((x) => x.r.method.includes(method));
      if (!hit) throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${rawPath}`, { Allow: [...new Set(matches.flatMap((x) => x.r.method))].join(', ') });
      const params = hit.m!.slice(1);
      const version = (params[0] === '1.0' || params[0] === '2.0' ? params[0] : '2.0') as ApiVersion;
      await hit.r.handler({ req, res, url, rawUrl, params, version });
    } catch (error) {
      if (!(error instanceof HttpError) && !(isWmarkError(error) && error.kind !== 'unexpected')) {
        log(`${req.method} ${rawUrl.split('?')[0]}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
      // A request body we stopped reading must be drained, or the connection stalls.
      if (!req.readableEnded) req.resume();
      sendError(res, error instanceof WmarkError || error instanceof HttpError ? error : error, corsHeaders);
    }
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}
