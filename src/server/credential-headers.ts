// Which header holds the client id and which the API key. wmark's own clients send x-api-client-id + x-api-key (the
// API's reference request); the reference SDKs send x-api-key + x-api-secret, and users map their client id and key
// onto those two in either order. wmark's ids start with `wmc_` and its keys with `wmk_`, so the prefixes decide.

export const CLIENT_ID_PREFIX = 'wmc_';
export const API_KEY_PREFIX = 'wmk_';

export interface KeyPair {
  clientId: string;
  apiKey: string;
}

/** The client id and key a request's headers carry, or undefined when they do not carry two of them. */
export function keyPairOf(headers: Readonly<Record<string, string | undefined>>): KeyPair | undefined {
  const value = (name: string) => headers[name]?.trim() || undefined;
  const clientIdHeader = value('x-api-client-id');
  const keyHeader = value('x-api-key');
  const secretHeader = value('x-api-secret');
  if (clientIdHeader && keyHeader) return { clientId: clientIdHeader, apiKey: keyHeader };
  if (!keyHeader || !secretHeader) return undefined;
  // x-api-key + x-api-secret: the one that looks like a client id is the client id, whichever header carries it.
  if (secretHeader.startsWith(CLIENT_ID_PREFIX) && !keyHeader.startsWith(CLIENT_ID_PREFIX)) return { clientId: secretHeader, apiKey: keyHeader };
  return { clientId: keyHeader, apiKey: secretHeader };
}
