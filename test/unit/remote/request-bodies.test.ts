// What the remote client sends for a watermark order: the request as its sender wrote it (only the known fields it
// gave, so the service at the other end fills in its own defaults), or an order made in code in the API's words.
import { describe, expect, it } from 'vitest';
import { parseWatermarkOrder } from '../../../src/core/api-requests.js';
import { watermarkRequestBody } from '../../../src/remote/request-bodies.js';

const NOW = Date.UTC(2026, 0, 1);

describe('watermarkRequestBody', () => {
  it('sends a parsed request as given: its known fields, no defaults, no unknown or null fields', () => {
    const given = { key: 'movie', settings: [{ content: 'Ann' }], containers: ['m3u8'], containerz: ['mp4'], expiration: null };
    const order = parseWatermarkOrder(given, { api: '2.0', nowMs: NOW });
    expect(order.containers).toEqual(['m3u8']);
    expect(watermarkRequestBody(order, '2.0')).toEqual({ key: 'movie', settings: [{ content: 'Ann' }], containers: ['m3u8'] });
  });

  it('keeps a template request as given, its mappings untouched', () => {
    const given = { videoId: 'v1', settingsTemplateMapping: { id: 't1', mappings: { name: 'Ann' } } };
    expect(watermarkRequestBody(parseWatermarkOrder(given, { api: '1.0', nowMs: NOW }), '1.0')).toEqual(given);
  });

  it('writes an order made in code whole, in the version asked for', () => {
    const order = { video: { key: 'movie' }, draw: { settings: [{ type: 'FORENSIC' as const, payload: 0x4142 }] }, containers: ['mp4' as const] };
    expect(watermarkRequestBody(order, '1.0')).toEqual({ key: 'movie', settings: [{ type: 'FORENSIC', content: 'AB' }], containers: ['mp4'] });
    expect(watermarkRequestBody(order, '2.0')).toEqual({ key: 'movie', settings: [{ type: 'FORENSIC', content: 'QUI=' }], containers: ['mp4'] });
  });
});
