// CORS for the API (README.md, "Security model"): browsers may call it cross-origin with the headers the reference JS
// SDK sends. Origins come from --cors-origin; the default `*` never goes with credentials (the API authenticates by
// headers, not cookies, so no Access-Control-Allow-Credentials is ever sent). Media and player links keep MEDIA_CORS
// (any origin).
import type { ApiRequest } from './http-types.js';

/** Request headers a browser may send to the API. */
const API_CORS_REQUEST_HEADERS = ['authorization', 'content-type', 'x-api-key', 'x-api-client-id', 'x-api-secret'];
/** Response headers a browser script may read besides the simple ones. */
const EXPOSED = 'Retry-After, Location, Content-Length';

export type CorsOrigins = readonly string[];

/** `Access-Control-Allow-Origin` (and Vary) for this request's Origin under `origins`; none when it is not allowed. */
export function apiCorsHeaders(req: ApiRequest, origins: CorsOrigins): Record<string, string> {
  if (origins.includes('*')) return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED };
  const origin = req.headers.origin;
  const vary = { Vary: 'Origin' };
  if (!origin || !origins.includes(origin)) return vary;
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED, ...vary };
}

/** The answer to an API preflight: its origin headers, the route's methods and the SDK's headers. */
export function apiPreflightHeaders(req: ApiRequest, origins: CorsOrigins, allowed: readonly string[]): Record<string, string> {
  const base = apiCorsHeaders(req, origins);
  if (!('Access-Control-Allow-Origin' in base)) return base;
  return {
    ...base,
    'Access-Control-Allow-Methods': [...allowed, 'OPTIONS'].join(', '),
    'Access-Control-Allow-Headers': API_CORS_REQUEST_HEADERS.join(', '),
    'Access-Control-Max-Age': '600',
  };
}
