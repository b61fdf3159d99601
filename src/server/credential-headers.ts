// Which header holds the client id and which the API key. wmark's own clients send x-api-client-id + x-api-key (the
// API's reference request); the reference SDKs send x-api-key + x-api-secret, and users map their client id and key
// onto those two in either order. wmark's ids start with `wmc_` and its keys with `wmk_`, so the prefixes decide.
// The oldest SDKs (API 0.1) send a lone x-api-key: a key that names its client is enough.

import { CLIENT_ID_PREFIX, clientIdOfKey } from '../core/api-key.js';

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
