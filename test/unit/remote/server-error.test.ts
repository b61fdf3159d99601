// Service error bodies become user-facing errors: the message as sent, the HTTP status, the right exit code.
import { describe, expect, it } from 'vitest';
import { kindForStatus, parseErrorBody, serverError } from '../../../src/remote/server-error.js';

describe('parseErrorBody', () => {
  it('reads {message, code} and {message: [...]}', () => {
    expect(parseErrorBody(404, 'application/json', '{"message":"no video with key \\"x\\"","code":"VIDEO_NOT_FOUND"}')).toEqual({
      status: 404,
      code: 'VIDEO_NOT_FOUND',
      messages: ['no video with key "x"'],
    });
    expect(parseErrorBody(400, 'application/json', '{"message":["a: bad","b: worse"]}')).toEqual({ status: 400, messages: ['a: bad', 'b: worse'] });
  });
  it('reads nested and alternative shapes', () => {
    expect(parseErrorBody(401, null, '{"error":{"message":"expired","code":"TOKEN_EXPIRED","hint":"log in"}}')).toEqual({
      status: 401,
      code: 'TOKEN_EXPIRED',
      messages: ['expired'],
      hint: 'log in',
    });
    expect(parseErrorBody(400, null, '{"error":"bad thing"}').messages).toEqual(['bad thing']);
    expect(parseErrorBody(400, null, '{"errors":[{"message":"one"},{"message":"two"}]}').messages).toEqual(['one', 'two']);
    expect(parseErrorBody(400, null, '"plain json string"').messages).toEqual(['plain json string']);
    expect(parseErrorBody(500, null, '{"code":500}').code).toBe('500');
  });
  it('keeps a short plain-text body, drops HTML', () => {
    expect(parseErrorBody(502, 'text/plain', 'upstream   connect error\n').messages).toEqual(['upstream connect error']);
    expect(parseErrorBody(502, 'text/html', '<html><body>Bad gateway</body></html>').messages).toEqual([]);
    expect(parseErrorBody(502, null, '<!doctype html><p>x</p>').messages).toEqual([]);
    expect(parseErrorBody(500, 'text/plain', 'x'.repeat(1000)).messages[0]!.length).toBeLessThan(320);
    expect(parseErrorBody(500, null, '').messages).toEqual([]);
  });
});

describe('serverError', () => {
  it('leads with the status and code, then the message as sent', () => {
    const e = serverError({ status: 422, code: 'FORENSIC_TOO_SHORT', messages: ['needs 5 minutes'] }, { request: 'POST http://h/2.0/watermark' });
    expect(e.message).toBe('HTTP 422 Unprocessable Entity (FORENSIC_TOO_SHORT): needs 5 minutes');
    expect(e.code).toBe('FORENSIC_TOO_SHORT');
    expect(e.exitCode).toBe(2);
    expect(e.details).toEqual(['request: POST http://h/2.0/watermark']);
  });
  it('lists several messages and keeps each one in the details', () => {
    const e = serverError({ status: 400, messages: ['a', 'b'] });
    expect(e.message).toBe('HTTP 400 Bad Request: 2 problems:\n  - a\n  - b');
    expect(e.code).toBe('HTTP_400');
    expect(e.details).toEqual(['a', 'b']);
  });
  it('maps statuses to exit codes: 401/403 auth (4), 5xx and 429 remote (5), other 4xx usage-like (2)', () => {
    const exit = (status: number) => serverError({ status, messages: [] }).exitCode;
    expect([401, 403].map(exit)).toEqual([4, 4]);
    expect([429, 500, 502, 503, 504].map(exit)).toEqual([5, 5, 5, 5, 5]);
    expect([400, 404, 409, 410, 413, 422].map(exit)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(kindForStatus(401)).toBe('auth');
  });
  it('says when the service gave no message, and never invents a code from garbage', () => {
    const e = serverError({ status: 500, code: 'not a code!', messages: [] });
    expect(e.message).toBe('HTTP 500 Internal Server Error: the service gave no message');
    expect(e.code).toBe('HTTP_500');
    expect(e.hint).toMatch(/try again later/);
  });
});
