// API credentials for `wmark serve`: client ids with API keys (which name their client) stored only as SHA-256 hashes,
// the access tokens issued for them, and the failed-credential counter.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { signToken, verifyToken } from '../../core/access-token.js';
import { apiKeyFor } from '../../core/api-key.js';
import { WmarkError } from '../../core/errors.js';
import type { Engine } from '../engine.js';
import type { AuthAttempt, CredentialRecord } from '../state/state-store.js';

export type { AuthAttempt } from '../state/state-store.js';

export interface IssuedCredential {
  clientId: string;
  apiKey: string;
  label: string | null;
  createdOn: number;
}

const hashKey = (apiKey: string) => createHash('sha256').update(apiKey, 'utf8').digest('hex');

export async function createCredential(engine: Engine, label?: string): Promise<IssuedCredential> {
  const clientId = `wmc_${randomBytes(8).toString('hex')}`;
  // 32 random bytes: a fast hash is enough for keys with this much entropy (no dictionary to attack). The key names
  // its client, so it also works alone (docs/api.md, "Authentication").
  const apiKey = apiKeyFor(clientId, randomBytes(32).toString('base64url'));
  const createdOn = engine.now();
  await engine.store.insertCredential({ clientId, keyHash: hashKey(apiKey), label: label ?? null, createdOn, revokedOn: null });
  return { clientId, apiKey, label: label ?? null, createdOn };
}

/** True when the client exists, is not revoked and the key matches (constant time). */
async function checkCredential(engine: Engine, clientId: string, apiKey: string): Promise<CredentialRecord | undefined> {
  const record = await engine.store.getCredential(clientId);
  const expected = Buffer.from(record?.keyHash ?? hashKey('missing-client'), 'hex');
  const given = Buffer.from(hashKey(apiKey), 'hex');
  const match = timingSafeEqual(expected, given);
  return record && match && record.revokedOn === null ? record : undefined;
}

/** Every client id, active or revoked, without its key hash. */
async function listCredentials(engine: Engine): Promise<Omit<CredentialRecord, 'keyHash'>[]> {
  return (await engine.store.listCredentials()).map(({ keyHash: _hash, ...rest }) => rest);
}

function revokeCredential(engine: Engine, clientId: string): Promise<boolean> {
  return engine.store.revokeCredential(clientId, engine.now());
}

async function isActiveClient(engine: Engine, clientId: string): Promise<boolean> {
  const record = await engine.store.getCredential(clientId);
  return Boolean(record && record.revokedOn === null);
}

/** The token-signing key is derived from the service secret, so URL signatures and tokens never share a key. */
function tokenKey(engine: Engine): Buffer {
  return createHmac('sha256', engine.secret).update('wmark jwt v1').digest();
}

/** What a bearer token turned out to be: its client's id, or why it is refused. */
export type BearerCheck = { ok: true; clientId: string } | { ok: false; reason: 'expired' | 'invalid' | 'revoked' };

/**
 * The API credentials of `wmark serve`, as one service: client ids and their keys, the tokens issued for them, and the
 * failed-credential counter every instance on the database shares. The signing key never leaves it: a server asks it
 * to verify a token.
 */
export class Credentials {
  constructor(private readonly engine: Engine) {}

  create(label?: string): Promise<IssuedCredential> {
    return createCredential(this.engine, label);
  }

  list(): Promise<Omit<CredentialRecord, 'keyHash'>[]> {
    return listCredentials(this.engine);
  }

  async revoke(clientId: string): Promise<void> {
    if (!(await revokeCredential(this.engine, clientId))) throw new WmarkError('CLIENT_NOT_FOUND', `no active client id "${clientId}"`);
  }

  /** The client id when the key is that client's and the client is active. */
  async check(clientId: string, apiKey: string): Promise<string | undefined> {
    return (await checkCredential(this.engine, clientId, apiKey))?.clientId;
  }

  /** A token for `clientId`, valid for `ttlSeconds`. */
  issueToken(clientId: string, ttlSeconds: number): Promise<string> {
    const now = Math.floor(this.engine.now() / 1000);
    return signToken(tokenKey(this.engine), { sub: clientId, iat: now, exp: now + ttlSeconds });
  }

  /** A token for the client with this label (created once): how `wmark demo` calls its own service like any client. */
  async tokenFor(label: string, ttlSeconds = 3600): Promise<string> {
    const existing = (await this.list()).find((c) => c.label === label && c.revokedOn === null);
    const clientId = existing?.clientId ?? (await this.create(label)).clientId;
    return this.issueToken(clientId, ttlSeconds);
  }

  /** Whether a bearer token is this service's, unexpired, and its client still active. */
  async verifyToken(token: string): Promise<BearerCheck> {
    const check = await verifyToken(tokenKey(this.engine), token, Math.floor(this.engine.now() / 1000));
    if (!check.ok) return { ok: false, reason: check.reason === 'expired' ? 'expired' : 'invalid' };
    if (!(await isActiveClient(this.engine, check.claims.sub))) return { ok: false, reason: 'revoked' };
    return { ok: true, clientId: check.claims.sub };
  }

  /** Counts a credential check from `source` against the limit every instance on this database shares. */
  takeAttempt(source: string, windowMs: number, limit: number): Promise<AuthAttempt> {
    return this.engine.store.takeAuthAttempt(source, this.engine.now(), windowMs, limit);
  }

  settleAttempt(source: string, resetAt: number, failed: boolean): Promise<number> {
    return this.engine.store.settleAuthAttempt(source, resetAt, failed);
  }
}
