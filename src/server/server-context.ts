// What every route module is given: the application layer, link bases, authentication and the log.

import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { clientAddress, type TrustedProxies } from '../core/forwarded-for.js';
import type { LocalService } from '../engine/app/local-service.js';
import { AUTH_LIMIT, type AuthLimitOptions, authLimiter } from './auth-limit.js';
import { keyPairOf, keyRefusal } from './credential-headers.js';
import type { ApiRequest } from './http-types.js';
import { isLegacyPath } from './route-table.js';

export interface ServerContext {
  service: LocalService;
  tokenTtlSeconds: number;
  /** Path of --public-url, which a reverse proxy strips: links were signed with it, requests arrive without it. */
  signedPrefix: string;
  /**
   * Base of the links handed out: --public-url, else where the server listens. Never a request's Host or
   * X-Forwarded-Host: a client could otherwise have links signed for a host of its choosing.
   */
  linkBase: string;
  /** The client's address (behind --trust-proxy proxies, from X-Forwarded-For); undefined for a request made in-process. */
  clientAddress(req: ApiRequest): string | undefined;
  /** The client id behind the request's credentials, or an AUTH or TOKEN error (401). */
  authenticate(req: ApiRequest, version: ApiVersion): Promise<string>;
  /** The client id behind x-api-client-id + x-api-key, or x-api-key + x-api-secret in either order, whatever the route's version. */
  checkKeyHeaders(req: ApiRequest): Promise<string>;
  /** True once the server is asked to stop: /readyz then says so, while every other route still answers. */
  stopping(): boolean;
  log(line: string): void;
}

/** What a server context is made from (the app's options, less what only the app uses). */
export interface ServerContextOptions {
  service: LocalService;
  /** Base of the URLs handed out: --public-url, else where the server listens; never a request's Host. */
  linkBase: string;
  /** --public-url, whose path a reverse proxy strips: links were signed with it, requests arrive without it. */
  publicUrl?: string;
  /** Proxies whose X-Forwarded-For names the client (--trust-proxy), for the failed-auth limit and what callers may see. */
  trustProxy?: TrustedProxies;
  tokenTtlSeconds: number;
  /** The failed-credential limit, where it differs from AUTH_LIMIT. */
  authLimit?: Partial<AuthLimitOptions>;
  /** Whether the server is draining before it stops (default: never). */
  stopping?: () => boolean;
  log?: (line: string) => void;
}

/** Where a caller of this path gets a token: API 0.1's from its own POST /token, the others from 1.0's route. */
function tokenRouteFor(path: string): string {
  return isLegacyPath(path) ? 'POST /token' : 'GET /1.0/authenticate/accessToken';
}

export function serverContext(options: ServerContextOptions): ServerContext {
  const { service } = options;
  const clients = service.credentials;
  const clientAddressOf = (req: ApiRequest) => clientAddress(req.remoteAddress, req.headers['x-forwarded-for'], options.trustProxy);
  const limiter = authLimiter(
    { ...AUTH_LIMIT, ...options.authLimit },
    {
      now: () => service.now(),
      counter: {
        take: (source, windowMs, limit) => clients.takeAttempt(source, windowMs, limit),
        settle: (source, resetAt, failed) => clients.settleAttempt(source, resetAt, failed),
      },
      addressOf: clientAddressOf,
      log: options.log,
    },
  );

  const checkKeyHeaders = async (req: ApiRequest): Promise<string> => {
    const pair = keyPairOf(req.headers);
    if (!pair)
      throw new WmarkError(
        'AUTH_REQUIRED',
        'missing credentials: send x-api-client-id and x-api-key, or x-api-key and x-api-secret (or Authorization: Bearer <token>)',
        { hint: `Send x-api-client-id and x-api-key, or Authorization: Bearer <token> from ${tokenRouteFor(req.path)}.` },
      );
    const credentials = 'lone' in pair ? pair.lone : `${pair.clientId}\n${pair.apiKey}`;
    return limiter.checked(req, credentials, async () => {
      if ('lone' in pair) throw keyRefusal(pair.lone, true);
      const found = await clients.check(pair.clientId, pair.apiKey);
      if (!found) throw keyRefusal(pair.apiKey, false);
      return found;
    });
  };

  const checkBearer = (req: ApiRequest, bearer: string): Promise<string> =>
    limiter.checked(req, bearer, async () => {
      const check = await clients.verifyToken(bearer);
      if (check.ok) return check.clientId;
      if (check.reason === 'expired') throw new WmarkError('TOKEN_EXPIRED', `the access token has expired; get a new one from ${tokenRouteFor(req.path)}`);
      throw new WmarkError('TOKEN_INVALID', check.reason === 'revoked' ? 'the credentials behind this token were revoked' : 'invalid access token');
    });

  return {
    service,
    tokenTtlSeconds: options.tokenTtlSeconds,
    signedPrefix: options.publicUrl ? new URL(options.publicUrl).pathname.replace(/\/+$/, '') : '',
    linkBase: options.linkBase,
    clientAddress: clientAddressOf,
    async authenticate(req, version) {
      const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
      if (bearer) return checkBearer(req, bearer);
      if (version === '1.0') {
        const tokenRoute = tokenRouteFor(req.path);
        throw new WmarkError('AUTH_REQUIRED', `missing credentials: send Authorization: Bearer <token> (get one from ${tokenRoute})`, {
          hint: `Get a token from ${tokenRoute} with your API key, then send it as Authorization: Bearer <token>.`,
        });
      }
      return checkKeyHeaders(req);
    },
    checkKeyHeaders,
    stopping: options.stopping ?? (() => false),
    log: options.log ?? (() => {}),
  };
}
