// The 1.0 access token (docs/api.md, "Authentication"): an HS256 JWT naming the client, signed and checked with jose.
// jose is loaded when a token is first signed or checked: most CLI runs never do, and would pay for loading it.
const jose = () => import('jose');

export interface TokenClaims {
  sub: string;
  iat: number;
  exp: number;
}

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export async function signToken(key: Uint8Array, claims: TokenClaims): Promise<string> {
  const { SignJWT } = await jose();
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(key);
}

/** Checks signature, algorithm (HS256 only: "none" and the others are refused) and expiry at `nowSeconds`. */
export async function verifyToken(key: Uint8Array, token: string, nowSeconds: number): Promise<TokenCheck> {
  const { errors, jwtVerify } = await jose();
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(nowSeconds * 1000), requiredClaims: ['sub', 'exp'] });
    return { ok: true, claims: { sub: payload.sub!, iat: payload.iat ?? 0, exp: payload.exp! } };
  } catch (error) {
    if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
    if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) return { ok: false, reason: 'invalid' };
    return { ok: false, reason: 'malformed' };
  }
}
