// API credentials for `wmark serve`: client ids with API keys (which name their client) stored only as SHA-256 hashes.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { apiKeyFor } from '../../core/api-key.js';
import type { Engine } from '../engine.js';
import type { CredentialRecord } from '../state/state-store.js';

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
export async function checkCredential(engine: Engine, clientId: string, apiKey: string): Promise<CredentialRecord | undefined> {
  const record = await engine.store.getCredential(clientId);
  const expected = Buffer.from(record?.keyHash ?? hashKey('missing-client'), 'hex');
  const given = Buffer.from(hashKey(apiKey), 'hex');
  const match = timingSafeEqual(expected, given);
  return record && match && record.revokedOn === null ? record : undefined;
}

/** Every client id, active or revoked, without its key hash. */
export async function listCredentials(engine: Engine): Promise<Omit<CredentialRecord, 'keyHash'>[]> {
  return (await engine.store.listCredentials()).map(({ keyHash: _hash, ...rest }) => rest);
}

export function revokeCredential(engine: Engine, clientId: string): Promise<boolean> {
  return engine.store.revokeCredential(clientId, engine.now());
}

export async function isActiveClient(engine: Engine, clientId: string): Promise<boolean> {
  const record = await engine.store.getCredential(clientId);
  return Boolean(record && record.revokedOn === null);
}

/** The token-signing key is derived from the service secret, so URL signatures and tokens never share a key. */
export function tokenKey(engine: Engine): Buffer {
  return createHmac('sha256', engine.secret).update('wmark jwt v1').digest();
}
