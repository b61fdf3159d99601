// The records serve logs: one JSON object per line with its fields in a fixed order, a readable request line, which
// incoming request ids are kept, which methods a metric names, and messages stripped of query strings and passwords.
import { describe, expect, it } from 'vitest';
import { acceptedRequestId, jsonLogLine, methodLabel, requestFields, requestLine, scrubLogText } from '../../../src/core/log-record.js';

describe('jsonLogLine', () => {
  it('is one line of JSON: time, level, msg, then the request fields given', () => {
    const line = jsonLogLine(Date.UTC(2025, 10, 26, 15, 35, 0, 123), 'GET /2.0/videos 200 12 ms', {
      reqId: 'r-1',
      method: 'GET',
      route: '/2.0/videos',
      status: 200,
      ms: 12,
    });
    expect(line).toBe(
      '{"time":"2025-11-26T15:35:00.123Z","level":"info","msg":"GET /2.0/videos 200 12 ms","reqId":"r-1","method":"GET","route":"/2.0/videos","status":200,"ms":12}',
    );
    expect(JSON.parse(jsonLogLine(0, 'database: lost x\nsecond line', { level: 'warn' }))).toEqual({
      time: '1970-01-01T00:00:00.000Z',
      level: 'warn',
      msg: 'database: lost x\nsecond line',
    });
    expect(jsonLogLine(0, 'a\nb')).not.toContain('\n');
  });
});

describe('a finished request', () => {
  const record = { reqId: '4bf92f35', method: 'POST', route: '/2.0/watermark', status: 503, ms: 7 };
  it('reads as a line for a person, and as fields for a machine (5xx at error level)', () => {
    expect(requestLine(record)).toBe('POST /2.0/watermark 503 7 ms [req 4bf92f35]');
    expect(requestFields(record)).toEqual({ level: 'error', reqId: '4bf92f35', method: 'POST', route: '/2.0/watermark', status: 503, ms: 7 });
    expect(requestFields({ ...record, status: 201 }).level).toBe('info');
  });
});

describe('acceptedRequestId', () => {
  it('keeps UUIDs, hex, base64 and dotted ids up to 128 characters', () => {
    for (const id of ['1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed', '4bf92f3577b34da6', 'aGVsbG8+d29ybGQ/Zm9vPQ==', 'lb.42:7_x~y'])
      expect(acceptedRequestId(id)).toBe(id);
    expect(acceptedRequestId('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it('drops what could break a log line or a header: spaces, quotes, controls, other characters, too long, empty', () => {
    for (const id of ['', 'a b', 'a"b', 'a\nb', 'a\u0000b', '<script>', 'é', 'x'.repeat(129), undefined]) expect(acceptedRequestId(id)).toBeUndefined();
  });
});

describe('methodLabel', () => {
  it('names the HTTP methods and counts any other a client makes up as OTHER, so labels stay few', () => {
    expect(['GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'].map(methodLabel)).toEqual(['GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE']);
    expect(methodLabel('BREW')).toBe('OTHER');
  });
});

describe('scrubLogText', () => {
  it('drops the query string of every URL and the password of every URL with one, and leaves the rest', () => {
    expect(scrubLogText('cannot download https://cdn.example.com/m.mp4?X-Amz-Signature=abc&X-Amz-Credential=k (403)')).toBe(
      'cannot download https://cdn.example.com/m.mp4?… (403)',
    );
    expect(scrubLogText('player http://127.0.0.1:8080/player/2.0/?sourceUrl=x&expiration=1&signature=y')).toBe('player http://127.0.0.1:8080/player/2.0/?…');
    expect(scrubLogText('queue: lost redis://:s3cret@farm:6379 (x)')).toBe('queue: lost redis://:***@farm:6379 (x)');
    expect(scrubLogText('postgres://wmark:p@ss@db.internal:5432/wmark')).toBe('postgres://wmark:***@db.internal:5432/wmark');
    expect(scrubLogText('state: PostgreSQL postgres://wmark:***@db:5432/wmark')).toBe('state: PostgreSQL postgres://wmark:***@db:5432/wmark');
    expect(scrubLogText('GET /2.0/watermark/v/w/seg_00001.ts: the client closed the connection')).toBe(
      'GET /2.0/watermark/v/w/seg_00001.ts: the client closed the connection',
    );
  });
});
