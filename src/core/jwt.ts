// Minimal HS256 JSON Web Tokens for the 1.0 token endpoint: sign and verify with an expiry check, constant-time.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TokenClaims {
  sub: string;
  iat: number;
  exp: number;
  [claim: string]: unknown;
}

const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

export function signToken(key: Buffer, claims: TokenClaims): string {
  const body = `${HEADER}.${b64(JSON.stringify(claims))}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export function verifyToken(key: Buffer, token: string, nowSeconds: number): TokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return { ok: false, reason: 'malformed' };
  const [header, payload, signature] = parts as [string, string, string];
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  // Only HS256: refusing "none" and anything else closes the classic algorithm-confusion holes.
  if (alg !== 'HS256') return { ok: false, reason: 'invalid' };
  const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  let claims: TokenClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number') return { ok: false, reason: 'malformed' };
  if (nowSeconds >= claims.exp) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}
