// Which header holds the client id and which the API key. wmark's own clients send x-api-client-id + x-api-key (the
// API's reference request); the reference SDKs send x-api-key + x-api-secret, and users map their client id and key
// onto those two in either order. wmark's ids start with `wmc_` and its keys with `wmk_`, so the prefixes decide.
// The oldest SDKs (API 0.1) send a lone x-api-key: a key that names its client is enough.

import { CLIENT_ID_PREFIX, clientIdOfKey, keyShape } from '../core/api-key.js';
import { WmarkError } from '../core/errors.js';

export interface KeyPair {
  clientId: string;
  apiKey: string;
}

/**
 * The client id and key a request's headers carry; `{lone}` for a lone x-api-key that does not name its client (a key
 * issued before keys did); undefined when they carry no credentials.
 */
export function keyPairOf(headers: Readonly<Record<string, string | undefined>>): KeyPair | { lone: string } | undefined {
  const value = (name: string) => headers[name]?.trim() || undefined;
  const clientIdHeader = value('x-api-client-id');
  const keyHeader = value('x-api-key');
  const secretHeader = value('x-api-secret');
  if (clientIdHeader && keyHeader) return { clientId: clientIdHeader, apiKey: keyHeader };
  if (keyHeader && !secretHeader && !clientIdHeader) {
    const named = clientIdOfKey(keyHeader);
    return named ? { clientId: named, apiKey: keyHeader } : { lone: keyHeader };
  }
  if (!keyHeader || !secretHeader) return undefined;
  // x-api-key + x-api-secret: the one that looks like a client id is the client id, whichever header carries it.
  if (secretHeader.startsWith(CLIENT_ID_PREFIX) && !keyHeader.startsWith(CLIENT_ID_PREFIX)) return { clientId: secretHeader, apiKey: keyHeader };
  return { clientId: keyHeader, apiKey: secretHeader };
}

const KEYS_LIST = 'List your client ids with `wmark auth keys list`; `wmark auth keys create` makes a new key.';

/**
 * The 401 for a key that was refused, saying what was wrong with it where its shape tells: a client id where the key
 * belongs, something that is not a wmark key at all, or (sent alone) a key issued before keys named their client.
 */
export function keyRefusal(apiKey: string, alone: boolean): WmarkError {
  switch (keyShape(apiKey)) {
    case 'client-id':
      return new WmarkError('AUTH_INVALID', `x-api-key carries a client id (${CLIENT_ID_PREFIX}...), not an API key`, {
        hint: `Send the API key (wmk_...) in x-api-key and the client id in x-api-client-id. ${KEYS_LIST}`,
      });
    case 'malformed':
      return new WmarkError('AUTH_INVALID', 'x-api-key is not a wmark API key: keys start with wmk_ and are 47 or 64 characters long', {
        hint: `Send the key whole, as \`wmark auth keys create\` printed it (no quotes or spaces). ${KEYS_LIST}`,
      });
    case 'unnamed':
      if (alone) {
        return new WmarkError(
          'AUTH_INVALID',
          'this API key was issued before keys named their client, so it cannot be sent alone: send the client id with it',
          {
            hint: 'Send x-api-client-id with x-api-key, or create a key that works alone with `wmark auth keys create`.',
          },
        );
      }
      return new WmarkError('AUTH_INVALID', 'invalid client id or API key');
    case 'named':
      return new WmarkError('AUTH_INVALID', 'invalid client id or API key');
  }
}
