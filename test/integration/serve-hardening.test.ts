// Hardening of `wmark serve` (issue 13): unsafe expirations, timeouts, aborted bodies, CORS and credential rate limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEngine, type TestEngine } from '../helpers/engine.js';
import { call, expectError, serveInProcess, type TestApp } from '../helpers/serve-helpers.js';

const VIDEO = '00000000-0000-4000-8000-000000000000';
const MARK = '0123456789abcdef0123456789abcdef';
const UNSAFE = ['9007199254740992', '9999999999999999'];
const SIG = 'A'.repeat(43);

describe('expirations at or beyond 2^53 (in-process)', () => {
  let engine: TestEngine;
  let s: TestApp;
  beforeAll(async () => {
    engine = testEngine();
    s = await serveInProcess(engine);
  });
  afterAll(async () => {
    await s.close();
    engine.dispose();
  });

  it('the player page answers 403, not 500', async () => {
    for (const v of ['1.0', '2.0']) {
      for (const e of UNSAFE) {
        const r = await call(s.app, 'GET', `/player/${v}/?sourceUrl=x&expiration=${e}&signature=${SIG}`);
        expect(r.status, r.text).toBe(403);
        expect(r.text).toContain('not valid');
      }
    }
  });

  it('media and href links answer 403 SIGNATURE_INVALID', async () => {
    for (const v of ['1.0', '2.0']) {
      for (const e of UNSAFE) {
        for (const file of ['video.m3u8', 'seg_00000.ts', 'video.mp4']) {
          expectError(await call(s.app, 'GET', `/${v}/watermark/${VIDEO}/${MARK}/${file}?expiration=${e}&signature=${SIG}`), 403, 'SIGNATURE_INVALID');
        }
        expectError(await call(s.app, 'GET', `/${v}/watermark/${VIDEO}/${MARK}?expiration=${e}&signature=${SIG}`), 403, 'SIGNATURE_INVALID');
      }
    }
  });
});
