// One conversation with a remote service: its base URL, the API version, credentials (token, refresh once, API key headers) and the API calls.

import type { Env } from '../config/paths.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { errorFromResponse, expectJson, type HttpClient, type RawResponse } from './client.js';
import { readCredentials, type StoredService, saveService } from './credentials-store.js';
import {
  type RemoteTemplate,
  type RemoteVideo,
  type RemoteWatermark,
  templateListSchema,
  templateSchema,
  tokenResponseSchema,
  videoSchema,
  watermarkResponseSchema,
} from './schemas.js';

/** A token this close to its expiry is renewed before use rather than sent to be refused. */
export const TOKEN_EXPIRY_SKEW_MS = 30_000;

export interface IssuedToken {
  token: string;
  /** Unix ms, or null when neither the response nor the token says. */
  expiresAt: number | null;
}

export type TokenSource = 'env' | 'store' | 'fresh';

export interface SessionOptions {
  baseUrl: string;
  client: HttpClient;
  env: Env;
  /** The token file; a stored entry for baseUrl is updated when its token is renewed. */
  credentialsFile: string;
  stored?: StoredService;
  /** Absolute ms: every request of this session, retries included, ends by then (exit 124). */
  deadline: number;
  timeoutLabel: string;
  now?: () => number;
  /** Explicit credentials (auth login flags) beat the env vars and the stored ones. */
  clientId?: string;
  apiKey?: string;
  /** A token to use as it is, like WMARK_TOKEN (never renewed). */
  token?: string;
}

/** The `exp` claim of a JWT-shaped token, in Unix ms (read, not verified: only the service can verify it). */
export function jwtExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

/** The token endpoint's answer: `{token}` (or accessToken/access_token) with an optional expiresIn, or a bare token as text. */
export function readTokenResponse(res: RawResponse, nowMs: number): IssuedToken {
  const text = res.text.trim();
  if (res.status >= 200 && res.status < 300 && /^[A-Za-z0-9_\-.~+/=]{16,}$/.test(text) && !/^[\d.]+$/.test(text)) {
    return { token: text, expiresAt: jwtExpiry(text) };
  }
  const body = expectJson(res, tokenResponseSchema, 'token response');
  const token = (body.token ?? body.accessToken ?? body.access_token)!;
  const seconds = body.expiresIn ?? body.expires_in;
  return { token, expiresAt: seconds !== undefined ? nowMs + seconds * 1000 : jwtExpiry(token) };
}

export class RemoteSession {
  readonly baseUrl: string;
  readonly client: HttpClient;
  private readonly now: () => number;
  private token?: string;
  private tokenSource?: TokenSource;
  private expiresAt: number | null = null;
  private refreshes = 0;
  private pendingRefresh?: Promise<void>;
  private detectedApi?: Promise<ApiVersion>;

  constructor(private readonly options: SessionOptions) {
    this.baseUrl = options.baseUrl;
    this.client = options.client;
    this.now = options.now ?? Date.now;
  }

  get deadline(): number {
    return this.options.deadline;
  }

  /** Starts the time budget again (after waiting on a person, e.g. at a prompt). */
  restartClock(timeoutMs: number): void {
    this.options.deadline = this.now() + timeoutMs;
  }

  get timeoutLabel(): string {
    return this.options.timeoutLabel;
  }

  /** Client id and API key: explicit > env > stored (a stored key only goes with its own client id). */
  credentials(): { clientId?: string; apiKey?: string } {
    const env = this.options.env;
    const stored = this.options.stored;
    const clientId = this.options.clientId ?? nonEmpty(env.WMARK_CLIENT_ID) ?? stored?.clientId;
    const apiKey = this.options.apiKey ?? nonEmpty(env.WMARK_API_KEY) ?? (clientId === stored?.clientId ? stored?.apiKey : undefined);
    return { clientId, apiKey };
  }

  url(path: string): string {
    return `${this.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
  }

  /** GET /1.0/authenticate/accessToken with the credential headers (docs/api.md, "Authentication"). */
  async issueToken(clientId: string, apiKey: string): Promise<IssuedToken> {
    const res = await this.client.send({
      method: 'GET',
      url: this.url('/1.0/authenticate/accessToken'),
      headers: { 'x-api-client-id': clientId, 'x-api-key': apiKey },
      deadline: this.deadline,
      timeoutLabel: this.timeoutLabel,
    });
    if (res.status === 401 || res.status === 403) {
      throw errorFromResponse(res, {
        kind: 'auth',
        hint: 'Check the client id and API key (flags, WMARK_CLIENT_ID / WMARK_API_KEY, or the ones saved at login).',
      });
    }
    return readTokenResponse(res, this.now());
  }

  /** The API version: the one asked for, else the one found at login, else 2.0 when the service has /2.0 (a 404 there means 1.0 only). */
  resolveApi(explicit?: ApiVersion): Promise<ApiVersion> {
    if (explicit) return Promise.resolve(explicit);
    if (this.options.stored?.api) return Promise.resolve(this.options.stored.api);
    return this.detectApi();
  }

  /** Asks the service: anything but a 404 at /2.0 means it speaks 2.0. */
  detectApi(): Promise<ApiVersion> {
    this.detectedApi ??= this.client
      .send({ method: 'GET', url: this.url('/2.0'), deadline: this.deadline, timeoutLabel: this.timeoutLabel })
      .then((res) => (res.status === 404 ? '1.0' : '2.0'));
    return this.detectedApi;
  }

  /** A usable bearer token: WMARK_TOKEN, else the stored one while valid, else a new one from the credentials. */
  async bearer(): Promise<string> {
    if (this.token && (this.tokenSource === 'env' || this.expiresAt === null || this.expiresAt - TOKEN_EXPIRY_SKEW_MS > this.now())) return this.token;
    const fromEnv = this.options.token ?? nonEmpty(this.options.env.WMARK_TOKEN);
    if (fromEnv) {
      this.setToken(fromEnv, jwtExpiry(fromEnv), 'env');
      return fromEnv;
    }
    const stored = this.options.stored;
    if (!this.token && stored?.token && (stored.expiresAt === null || stored.expiresAt - TOKEN_EXPIRY_SKEW_MS > this.now())) {
      this.setToken(stored.token, stored.expiresAt, 'store');
      return stored.token;
    }
    await this.refresh(this.token ?? stored?.token, stored?.token ? 'expired' : 'none');
    return this.token!;
  }

  private setToken(token: string, expiresAt: number | null, source: TokenSource): void {
    this.token = token;
    this.expiresAt = expiresAt;
    this.tokenSource = source;
  }

  /**
   * Gets a new token from the credentials, at most once per run (concurrent callers share it).
   * `failed` is the token that was refused; if another caller already replaced it, nothing is done.
   */
  async refresh(failed: string | undefined, why: 'expired' | 'refused' | 'none'): Promise<void> {
    if (this.pendingRefresh) return this.pendingRefresh;
    if (this.token !== undefined && failed !== this.token) return;
    const { clientId, apiKey } = this.credentials();
    if (!clientId || !apiKey) {
      const where = this.options.stored ? `the token stored for ${this.baseUrl}` : undefined;
      if (why === 'none') {
        throw new WmarkError('NOT_LOGGED_IN', `not logged in to ${this.baseUrl}`, {
          hint: `Run \`wmark auth login --remote ${this.baseUrl}\`, or set WMARK_TOKEN, or WMARK_CLIENT_ID and WMARK_API_KEY.`,
        });
      }
      throw new WmarkError(
        'TOKEN_EXPIRED',
        `${where ?? 'the access token'} ${why === 'expired' ? 'has expired' : 'was refused'} and cannot be renewed: no API key at hand`,
        {
          hint: 'Log in again (`wmark auth login`, add --save-key to renew automatically), or set WMARK_CLIENT_ID and WMARK_API_KEY.',
        },
      );
    }
    if (this.refreshes >= 1) {
      throw new WmarkError('TOKEN_REFUSED', `the service refused a freshly issued token for ${this.baseUrl}`, { hint: 'Check the client id and API key.' });
    }
    this.refreshes++;
    this.pendingRefresh = (async () => {
      const issued = await this.issueToken(clientId, apiKey);
      this.setToken(issued.token, issued.expiresAt, 'fresh');
      await this.persistToken(issued);
    })();
    try {
      await this.pendingRefresh;
    } finally {
      this.pendingRefresh = undefined;
    }
  }

  /** A renewed token replaces the stored one only when the user logged in to this service (nothing is written otherwise). */
  private async persistToken(issued: IssuedToken): Promise<void> {
    if (!this.options.stored) return;
    const latest = (await readCredentials(this.options.credentialsFile)).services[this.baseUrl] ?? this.options.stored;
    const next: StoredService = { ...latest, token: issued.token, expiresAt: issued.expiresAt, obtainedAt: this.now() };
    await saveService(this.options.credentialsFile, next, { makeCurrent: false });
    this.options.stored.token = issued.token;
    this.options.stored.expiresAt = issued.expiresAt;
  }

  /**
   * Headers for an authenticated call: 1.0 a Bearer token; 2.0 the key headers, or a Bearer token when no key is at
   * hand (docs/api.md, "Authentication").
   */
  async authHeaders(api: ApiVersion): Promise<{ headers: Record<string, string>; bearer?: string }> {
    const { clientId, apiKey } = this.credentials();
    if (api === '2.0' && clientId && apiKey && !this.options.token && !nonEmpty(this.options.env.WMARK_TOKEN)) {
      return { headers: { 'x-api-key': apiKey, 'x-api-client-id': clientId } };
    }
    const token = await this.bearer();
    return { headers: { Authorization: `Bearer ${token}` }, bearer: token };
  }

  /** An authenticated request to a versioned route; a 401 on a token renews it once and tries again; a second 401 is exit 4. */
  async call(api: ApiVersion, spec: { method: 'GET' | 'POST'; path: string; body?: unknown; idempotent?: boolean }): Promise<RawResponse> {
    const send = async () => {
      const auth = await this.authHeaders(api);
      const res = await this.client.send({
        method: spec.method,
        url: this.url(`/${api}${spec.path}`),
        headers: auth.headers,
        body: spec.body,
        idempotent: spec.idempotent,
        deadline: this.deadline,
        timeoutLabel: this.timeoutLabel,
      });
      return { res, auth };
    };
    let { res, auth } = await send();
    if (res.status === 401 && auth.bearer && this.tokenSource !== 'env') {
      // Requests refused together share one renewal: wait for one already under way, else start it (once per run).
      if (this.pendingRefresh) await this.pendingRefresh.catch(() => undefined);
      const { clientId, apiKey } = this.credentials();
      if (this.token === auth.bearer && this.refreshes === 0 && clientId && apiKey) await this.refresh(auth.bearer, 'refused');
      if (this.token !== auth.bearer) ({ res, auth } = await send());
    }
    // A token that worked ends the renewal that got it: a long-lived session (the library's) renews each expired token
    // in turn, while a service that refuses every fresh one still stops after one try.
    if (res.status !== 401) this.refreshes = 0;
    return res;
  }

  async createWatermark(api: ApiVersion, body: Record<string, unknown>): Promise<{ response: RemoteWatermark; status: number }> {
    // POST watermark is idempotent (same request, same watermark), so a dropped connection may be retried.
    const res = await this.call(api, { method: 'POST', path: '/watermark', body, idempotent: true });
    return { response: expectJson(res, watermarkResponseSchema, 'watermark response'), status: res.status };
  }

  /** GET a signed link (1.0 long-poll href, 2.0 resource link): no credentials, the URL carries its signature. */
  async getSigned(href: string): Promise<RawResponse> {
    return this.client.send({ method: 'GET', url: href, deadline: this.deadline, timeoutLabel: this.timeoutLabel });
  }

  async createVideo(api: ApiVersion, body: Record<string, unknown>): Promise<{ video: RemoteVideo; status: number }> {
    const res = await this.call(api, { method: 'POST', path: '/videos', body, idempotent: false });
    return { video: expectJson(res, videoSchema, 'video'), status: res.status };
  }

  async listVideos(api: ApiVersion, query: Record<string, string>): Promise<RemoteVideo[]> {
    const search = new URLSearchParams(query).toString();
    return expectJson(await this.call(api, { method: 'GET', path: `/videos${search ? `?${search}` : ''}` }), videoSchema.array(), 'video list');
  }

  async getVideo(api: ApiVersion, id: string): Promise<RemoteVideo> {
    return expectJson(await this.call(api, { method: 'GET', path: `/videos/${encodeURIComponent(id)}` }), videoSchema, 'video');
  }

  async createTemplate(api: ApiVersion, body: unknown): Promise<RemoteTemplate> {
    return expectJson(await this.call(api, { method: 'POST', path: '/templates', body, idempotent: false }), templateSchema, 'template');
  }

  async listTemplates(api: ApiVersion): Promise<RemoteTemplate[]> {
    return expectJson(await this.call(api, { method: 'GET', path: '/templates' }), templateListSchema, 'template list');
  }

  async getTemplate(api: ApiVersion, id: string): Promise<RemoteTemplate> {
    return expectJson(await this.call(api, { method: 'GET', path: `/templates/${encodeURIComponent(id)}` }), templateSchema, 'template');
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}
