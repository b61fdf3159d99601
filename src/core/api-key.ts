// The shape of wmark's credentials: client ids `wmc_<16 hex>`, and API keys that carry their client's id
// (`wmk_<the id's 16 hex>_<43 base64url>`) so that a key sent alone, as the oldest SDKs send it, names its client.
// Keys issued before keys named their client (`wmk_<43 base64url>`) still work with the client id beside them.

export const CLIENT_ID_PREFIX = 'wmc_';
const API_KEY_PREFIX = 'wmk_';

const KEY_WITH_CLIENT = /^wmk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
const KEY_WITHOUT_CLIENT = /^wmk_[A-Za-z0-9_-]{43}$/;

/**
 * What a value sent as an API key looks like: a key that names its client, one issued before keys did, a client id
 * (the usual mix-up of the two headers), or nothing wmark issues. Only the shape: whether the key is valid is the
 * credential store's to say.
 */
export type KeyShape = 'named' | 'unnamed' | 'client-id' | 'malformed';

export function keyShape(value: string): KeyShape {
  if (KEY_WITH_CLIENT.test(value)) return 'named';
  if (KEY_WITHOUT_CLIENT.test(value)) return 'unnamed';
  return value.startsWith(CLIENT_ID_PREFIX) ? 'client-id' : 'malformed';
}

/** A new key for `clientId` (`wmc_<16 hex>`) around `secret` (43 base64url characters: 32 random bytes). */
export function apiKeyFor(clientId: string, secret: string): string {
  return `${API_KEY_PREFIX}${clientId.slice(CLIENT_ID_PREFIX.length)}_${secret}`;
}

/** The client id a key names, or undefined for a key that does not (one issued before keys named their client). */
export function clientIdOfKey(apiKey: string): string | undefined {
  const m = KEY_WITH_CLIENT.exec(apiKey);
  return m ? `${CLIENT_ID_PREFIX}${m[1]}` : undefined;
}
