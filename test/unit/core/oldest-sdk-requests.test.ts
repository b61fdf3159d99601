// API 0.1's request shapes as 1.0 reads them: the raw ?key= of the oldest SDKs, the Java SDK's encoding object around
// its settings, and the key that names its client.
import { describe, expect, it } from 'vitest';
import { apiKeyFor, clientIdOfKey } from '../../../src/core/api-key.js';
import { legacyWatermarkBody, listQueryOf } from '../../../src/core/api-requests.js';
import { isWmarkError } from '../../../src/core/errors.js';

describe('listQueryOf', () => {
  it('takes everything after key= as the key, so a URL key with its own query stays whole', () => {
    expect(listQueryOf('/videos?key=https://cdn.example.com/a.mp4?v=2&lang=en', true)).toEqual({ key: 'https://cdn.example.com/a.mp4?v=2&lang=en' });
    expect(listQueryOf('/0.1/videos?key=movie+42', true)).toEqual({ key: 'movie+42' });
  });

  it('decodes valid percent-escapes and keeps a broken one as sent', () => {
    expect(listQueryOf('/videos?key=movie%2042', true)).toEqual({ key: 'movie 42' });
    expect(listQueryOf('/videos?key=100%', true)).toEqual({ key: '100%' });
  });

  it('on 1.0 and 2.0, reads a key raw only when it holds a literal ?, which an encoded key never does', () => {
    expect(listQueryOf('/1.0/videos?key=https://cdn.example.com/a.mp4?v=2&lang=en', false)).toEqual({ key: 'https://cdn.example.com/a.mp4?v=2&lang=en' });
    expect(listQueryOf('/2.0/videos?key=movie%2042&limit=5', false)).toEqual({ key: 'movie 42', limit: '5' });
    expect(listQueryOf('/1.0/videos?key=https%3A%2F%2Fcdn.example.com%2Fa.mp4%3Fv%3D2&page=2', false)).toEqual({
      key: 'https://cdn.example.com/a.mp4?v=2',
      page: '2',
    });
  });

  it('reads any other query as usual, and none as empty', () => {
    expect(listQueryOf('/videos?limit=5&key=a', true)).toEqual({ limit: '5', key: 'a' });
    expect(listQueryOf('/videos', true)).toEqual({});
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
