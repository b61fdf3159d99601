// Telling the client id from the API key among the credential headers: wmark's own pair, and the SDKs' x-api-key +
// x-api-secret in either order, decided by the wmc_/wmk_ prefixes; and a lone key that names its client (API 0.1).
import { describe, expect, it } from 'vitest';
import { keyPairOf } from '../../../src/server/credential-headers.js';

const ID = 'wmc_61f2b3a284aee490';
const KEY = 'wmk_3n0tAr3alK3y-but-shaped-like-one_0123456789abc';

describe('keyPairOf', () => {
  it('reads x-api-client-id + x-api-key as (client id, key)', () => {
    expect(keyPairOf({ 'x-api-client-id': ID, 'x-api-key': KEY })).toEqual({ clientId: ID, apiKey: KEY });
  });

  it('reads x-api-key + x-api-secret in either order by their prefixes', () => {
    expect(keyPairOf({ 'x-api-key': ID, 'x-api-secret': KEY })).toEqual({ clientId: ID, apiKey: KEY });
    expect(keyPairOf({ 'x-api-key': KEY, 'x-api-secret': ID })).toEqual({ clientId: ID, apiKey: KEY });
  });

  it('falls back to (x-api-key, x-api-secret) when the prefixes do not tell', () => {
    expect(keyPairOf({ 'x-api-key': 'client', 'x-api-secret': 'secret' })).toEqual({ clientId: 'client', apiKey: 'secret' });
    expect(keyPairOf({ 'x-api-key': ID, 'x-api-secret': 'wmc_other' })).toEqual({ clientId: ID, apiKey: 'wmc_other' });
  });

  it('trims values and needs two of them', () => {
    expect(keyPairOf({ 'x-api-key': `  ${KEY} `, 'x-api-secret': ` ${ID}` })).toEqual({ clientId: ID, apiKey: KEY });
    expect(keyPairOf({ 'x-api-secret': KEY, 'x-api-client-id': ID })).toBeUndefined();
    expect(keyPairOf({ 'x-api-key': ' ', 'x-api-secret': ID })).toBeUndefined();
    expect(keyPairOf({})).toBeUndefined();
  });

  it('a lone x-api-key names its client when the key carries the id; an older key alone is told apart', () => {
    const named = `wmk_61f2b3a284aee490_${'a'.repeat(43)}`;
    expect(keyPairOf({ 'x-api-key': named })).toEqual({ clientId: ID, apiKey: named });
    expect(keyPairOf({ 'x-api-key': ` ${named} ` })).toEqual({ clientId: ID, apiKey: named });
    expect(keyPairOf({ 'x-api-key': KEY })).toEqual({ lone: KEY });
    // Only a whole key of that shape names a client: a shorter or longer secret, or upper-case hex, does not.
    for (const other of [`wmk_61f2b3a284aee490_${'a'.repeat(42)}`, `wmk_61f2b3a284aee490_${'a'.repeat(44)}`, `wmk_61F2B3A284AEE490_${'a'.repeat(43)}`])
      expect(keyPairOf({ 'x-api-key': other })).toEqual({ lone: other });
  });
});
