// API 0.1's request shapes as 1.0 reads them: the raw ?key= of the oldest SDKs, the Java SDK's encoding object around
// its settings, and the key that names its client.
import { describe, expect, it } from 'vitest';
import { apiKeyFor, clientIdOfKey } from '../../../src/core/api-key.js';
import { legacyWatermarkBody, rawKeyQuery } from '../../../src/core/api-requests.js';
import { isWmarkError } from '../../../src/core/errors.js';

describe('rawKeyQuery', () => {
  it('takes everything after key= as the key, so a URL key with its own query stays whole', () => {
    expect(rawKeyQuery('/videos?key=https://cdn.example.com/a.mp4?v=2&lang=en')).toEqual({ key: 'https://cdn.example.com/a.mp4?v=2&lang=en' });
    expect(rawKeyQuery('/0.1/videos?key=movie+42')).toEqual({ key: 'movie+42' });
  });

  it('decodes valid percent-escapes and keeps a broken one as sent', () => {
    expect(rawKeyQuery('/videos?key=movie%2042')).toEqual({ key: 'movie 42' });
    expect(rawKeyQuery('/videos?key=100%')).toEqual({ key: '100%' });
  });

  it('reads any other query as usual, and none as empty', () => {
    expect(rawKeyQuery('/videos?limit=5&key=a')).toEqual({ limit: '5', key: 'a' });
    expect(rawKeyQuery('/videos')).toEqual({});
  });
});

describe('legacyWatermarkBody', () => {
  const watermarks = [{ content: 'x', horizontalAlignment: 'LEFT' }];

  it("passes the node SDK's settings array as it is", () => {
    const body = { key: 'k', settings: watermarks };
    expect(legacyWatermarkBody(body)).toBe(body);
    expect(legacyWatermarkBody(undefined)).toBeUndefined();
  });

  it("unwraps the Java SDK's encoding object, dropping saturation, resolution and bitRate", () => {
    const body = { key: 'k', settings: { saturation: 0.5, resolution: { width: 640, height: 360 }, bitRate: '4000k', watermarks } };
    expect(legacyWatermarkBody(body)).toEqual({ key: 'k', settings: watermarks });
  });

  it('an encoding object without watermarks is a 400 naming the field', () => {
    try {
      legacyWatermarkBody({ key: 'k', settings: { saturation: 1 } });
      expect.unreachable();
    } catch (error) {
      expect(isWmarkError(error) && [error.httpStatus, error.details]).toEqual([400, ['settings.watermarks: required (an array of setting objects)']]);
    }
  });
});

describe('API keys that name their client', () => {
  it('round-trips the client id; older keys and look-alikes name none', () => {
    const key = apiKeyFor('wmc_0123456789abcdef', 'A'.repeat(43));
    expect(key).toBe(`wmk_0123456789abcdef_${'A'.repeat(43)}`);
    expect(clientIdOfKey(key)).toBe('wmc_0123456789abcdef');
    expect(clientIdOfKey(`wmk_${'A'.repeat(43)}`)).toBeUndefined();
    expect(clientIdOfKey(`wmk_0123456789abcdef_${'A'.repeat(42)}`)).toBeUndefined();
    expect(clientIdOfKey(`xx_0123456789abcdef_${'A'.repeat(43)}`)).toBeUndefined();
  });
});
