// The HTTP service as plain data: a request in, a response out, through the route table of every resource (auth,
// videos, templates, watermarks, media, player, metrics). Every answer carries its request's id; once it is written,
// the request is counted and logged by route pattern. No socket is needed: `request()` serves tests in-process.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isWmarkError, WmarkError } from '../../core/errors.js';
import { acceptedRequestId, type LogSink, NO_ROUTE, type RequestRecord } from '../../core/log-record.js';
import { checkStorableHeaders, checkStorableQuery } from '../../core/storable-text.js';
import { apiCorsHeaders, apiPreflightHeaders, type CorsOrigins } from '../cors.js';
import {
  type ApiRequest,
  type ApiResponse,
  BODY_LIMIT_BYTES,
  bodyTooLarge,
  errorResponse,
  isFileBody,
  isStoreBody,
  MEDIA_CORS,
  parseJsonBody,
} from '../http-types.js';
import { ServerMetrics } from '../metrics.js';
import { Routes } from '../route-table.js';
import { authRoutes } from '../routes/auth.js';
import { homeRoutes } from '../routes/home.js';
import { mediaRoutes } from '../routes/media.js';
import { metricsRoutes } from '../routes/metrics.js';
import { playerRoutes } from '../routes/player.js';
import { templateRoutes } from '../routes/templates.js';
import { videoRoutes } from '../routes/videos.js';
import { watermarkRoutes } from '../routes/watermarks.js';
import { type ServerContextOptions, serverContext } from '../server-context.js';
import { signedLinks } from '../signed-links.js';
import { readStored } from '../store-response.js';

export interface AppOptions extends Omit<ServerContextOptions, 'log'> {
  log?: LogSink;
  /** Hears every request once its answer is written (the access log); none by default. */
  logRequest?: (record: RequestRecord) => void;
  /** Origins allowed to call the API from a browser (--cors-origin); default `*`. */
  corsOrigins?: CorsOrigins;
  /** GET /metrics answers callers on other machines too (--metrics-public); by default loopback callers only. */
  metricsPublic?: boolean;
}

interface InProcessResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  text: string;
}

export interface App {
  handle(req: ApiRequest): Promise<ApiResponse>;
  /** The routes served: method and path pattern (`:name` for a parameter). */
  routes(): readonly { method: string; path: string }[];
  /** One request without a socket: `target` is the raw path and query, sent as is. */
  request(target: string, init?: { method?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<InProcessResponse>;
  /** Counts and logs a request whose answer (from `handle`) is written, `ms` after it arrived. */
  finished(req: ApiRequest, response: ApiResponse, ms: number): void;
  /** Stops what the app watches (the engine's renders, for its metrics). */
  close(): void;
}

export function createApp(options: AppOptions): App {
  const ctx = serverContext(options);
  const links = signedLinks(ctx);
  const routes = new Routes();
  authRoutes(routes, ctx);
  videoRoutes(routes, ctx);
  templateRoutes(routes, ctx);
  watermarkRoutes(routes, ctx, links);
  mediaRoutes(routes, ctx, links);
  playerRoutes(routes, ctx);
  homeRoutes(routes, ctx);
  const metrics = new ServerMetrics(options.service.operations);
  metricsRoutes(routes, ctx, metrics, { public: options.metricsPublic ?? false });

  const corsOrigins = options.corsOrigins?.length ? options.corsOrigins : ['*'];

  async function handle(req: ApiRequest): Promise<ApiResponse> {
    // The caller's own id when it is a safe one (a proxy's, a client's), so its logs and ours name the same request.
    const reqId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID();
    let route = NO_ROUTE;
    const response = await answer(req, reqId, (matched) => (route = matched));
    return { ...response, headers: { ...response.headers, 'X-Request-Id': reqId }, route };
  }

  async function answer(req: ApiRequest, reqId: string, matched: (route: string) => void): Promise<ApiResponse> {
    // API answers (errors included, so a browser can read them) carry the API's CORS headers; signed media its own.
    let cors: Record<string, string> = apiCorsHeaders(req, corsOrigins);
    try {
      checkRawPath(req.path);
      const match = routes.match(req.method, req.path);
      if (!match) throw new WmarkError('NOT_FOUND', `no route for ${req.path}`);
      matched(match.route);
      checkStorableRequest(req);
      if (match.cors) cors = { ...MEDIA_CORS };
      const allow = match.allowed.join(', ');
      if (req.method === 'OPTIONS') {
        return { status: 204, headers: { ...(match.cors ? MEDIA_CORS : apiPreflightHeaders(req, corsOrigins, match.allowed)), Allow: allow } };
      }
      if (match.kind === 'method') throw new WmarkError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}`, { headers: { Allow: allow } });
      const response = await match.handler(req, match.params);
      return match.cors ? response : { ...response, headers: { ...cors, ...response.headers } };
    } catch (error) {
      if (!isWmarkError(error) || error.kind === 'unexpected')
        options.log?.(`${req.method} ${req.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, { level: 'error', reqId });
      return errorResponse(error, cors);
    }
  }

  function finished(req: ApiRequest, response: ApiResponse, ms: number): void {
    const record: RequestRecord = {
      reqId: response.headers['X-Request-Id'] ?? '',
      method: req.method,
      route: response.route ?? NO_ROUTE,
      status: response.status,
      ms: Math.round(ms),
    };
    metrics.observe(record);
    options.logRequest?.(record);
  }

  return {
    handle,
    finished,
    close: () => metrics.close(),
    routes: () => routes.list,
    async request(target, init = {}) {
      const started = performance.now();
      const method = (init.method ?? 'GET').toUpperCase();
      const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const sent = init.body ?? '';
      const req: ApiRequest = {
        method,
        rawUrl: target,
        path: target.split('?')[0]!,
        url: new URL(target, 'http://wmark.invalid'),
        headers,
        body: async () => {
          if (Buffer.byteLength(sent) > BODY_LIMIT_BYTES) throw bodyTooLarge();
          return parseJsonBody(sent, headers['content-type']);
        },
      };
      const res = await handle(req);
      let body: Buffer = Buffer.alloc(0);
      if (method !== 'HEAD' && res.body !== undefined) {
        if (isFileBody(res.body)) body = (await readFile(res.body.file)).subarray(res.body.start, res.body.end + 1);
        else if (isStoreBody(res.body)) body = await readStored(res.body);
        else body = Buffer.from(res.body);
      }
      finished(req, res, performance.now() - started);
      return { status: res.status, headers: new Headers(res.headers), body, text: body.toString('utf8') };
    },
  };
}

/** Refuses query parameters and header values a state store cannot hold (the body is checked when it is read). */
function checkStorableRequest(req: ApiRequest): void {
  const at = req.rawUrl.indexOf('?');
  if (at >= 0) checkStorableQuery(req.rawUrl.slice(at + 1));
  checkStorableHeaders(req.headers);
}

/** Refuses raw paths that try to climb or smuggle separators: `..`, encoded dots/slashes/backslashes, backslashes, NUL. */
function checkRawPath(rawPath: string): void {
  if (/(^|\/)\.\.?(\/|$)|%2e|%2f|%5c|%00|\\/i.test(rawPath) || rawPath.includes('//')) throw new WmarkError('BAD_PATH', 'malformed request path');
  // Route parameters are decoded; a broken escape (`%`, `%ZZ`, a cut UTF-8 sequence) is bad input, not a 500.
  try {
    decodeURIComponent(rawPath);
  } catch {
    throw new WmarkError('BAD_PATH', 'malformed percent-encoding in the request path');
  }
}
