// HMAC-SHA256 signed URLs: sign a path (or a folder prefix) with an expiry, verify in constant time.
//
// Wire format (README.md, "Security model"): query params `expiration` (Unix
// milliseconds, plain decimal) and `signature` = base64url(HMAC-SHA256(secret,
// `${scope}\n${expiration}`)). `scope` is either the exact URL pathname or a folder
// prefix ending in '/', which lets one signature cover a playlist's whole folder.
//
// How pathnames are compared: always as the raw, still percent-encoded pathname, byte for
// byte, never decoded. Decoding first would let `%2e%2e` or `%2f` mean one thing to the
// verifier and another to the file layer behind it. So before any HMAC work, a pathname is
// rejected as 'malformed' when it could be read differently by a later layer: `.`/`..`
// segments, empty segments (`//`), backslashes, and encoded dots, slashes, backslashes or
// NULs (`%2e`, `%2f`, `%5c`, `%00`, any case). Our own URLs never contain these.
//
// Pass verifySignedUrl the raw request target (Node's `req.url`) rather than a parsed URL:
// WHATWG URL parsing already resolves `..` and `%2e%2e` segments and turns `\` into `/`,
// which hides exactly what the check above is for.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SigningSecret = Buffer | string;

export interface SignUrlOptions {
  /** Unix milliseconds after which the URL stops working. */
  expirationMs: number;
  /** Exact pathname or a folder prefix ending in '/'; defaults to the URL's own pathname. */
  scope?: string;
}

export interface VerifySignedUrlOptions {
  /** The scope the URL was signed for; defaults to the URL's own pathname. */
  scope?: string;
}

type SignatureFailureReason = 'missing' | 'malformed' | 'expired' | 'invalid';

export type VerifySignedUrlResult = { ok: true; expirationMs: number } | { ok: false; reason: SignatureFailureReason };

const EXPIRATION_PARAM = 'expiration';
const SIGNATURE_PARAM = 'signature';

// Canonical decimal only: no sign, exponent, fraction or leading zeros, so one expiry has
// exactly one spelling and the signed message is exactly what the client sent.
const EXPIRATION_PATTERN = /^(?:0|[1-9][0-9]{0,15})$/;
const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]+$/;
const SUSPICIOUS_ENCODING = /%(?:2e|2f|5c|00)/i;
// RFC 3986 appendix B: splits any URI reference without normalising it.
const URI_REFERENCE = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

export function signPath(secret: SigningSecret, scope: string, expirationMs: number): string {
  assertSecret(secret);
  if (!Number.isSafeInteger(expirationMs) || expirationMs < 0) {
    throw new RangeError(`expirationMs must be a non-negative integer (Unix ms), got ${String(expirationMs)}`);
  }
  if (!scope.startsWith('/')) {
    throw new RangeError(`scope must be an absolute path, got ${JSON.stringify(scope)}`);
  }
  return createHmac('sha256', secret).update(`${scope}\n${expirationMs}`).digest('base64url');
}

/**
 * Returns `url` with `expiration` and `signature` set (any previous ones dropped, every other
 * query param kept byte for byte). A string keeps its form: absolute, path-absolute, or
 * relative (e.g. a segment URI inside a playlist; then `scope` is required, since the
 * relative path alone does not say where it lives).
 */
export function signUrl(secret: SigningSecret, url: URL | string, options: SignUrlOptions): string {
  const { expirationMs } = options;
  if (url instanceof URL) {
    const copy = new URL(url.href);
    const scope = options.scope ?? copy.pathname;
    assertWithinScope(copy.pathname, scope);
    const signature = signPath(secret, scope, expirationMs);
    copy.search = `?${withSignatureParams(copy.search.slice(1), expirationMs, signature)}`;
    return copy.href;
  }

  const parts = splitReference(url);
  const isRelativePath = parts.scheme === undefined && parts.authority === undefined && !parts.path.startsWith('/');
  const pathname = parts.path === '' && parts.authority !== undefined ? '/' : parts.path;
  let scope = options.scope;
  if (isRelativePath) {
    if (scope === undefined) {
      throw new RangeError(`signing the relative URL ${JSON.stringify(url)} needs an explicit scope`);
    }
  } else {
    scope ??= pathname;
    assertWithinScope(pathname, scope);
  }
  const signature = signPath(secret, scope, expirationMs);
  const head = url.slice(0, url.length - tailLength(parts));
  const query = withSignatureParams(parts.query ?? '', expirationMs, signature);
  return `${head}?${query}${parts.fragment === undefined ? '' : `#${parts.fragment}`}`;
}

export function verifySignedUrl(secret: SigningSecret, url: URL | string, nowMs: number, options: VerifySignedUrlOptions = {}): VerifySignedUrlResult {
  let pathname: string;
  let query: string;
  if (url instanceof URL) {
    pathname = url.pathname;
    query = url.search.slice(1);
  } else {
    const parts = splitReference(url);
    pathname = parts.path === '' && parts.authority !== undefined ? '/' : parts.path;
    query = parts.query ?? '';
  }

  const params = new URLSearchParams(query);
  const expirations = params.getAll(EXPIRATION_PARAM);
  const signatures = params.getAll(SIGNATURE_PARAM);
  if (expirations.length === 0 || signatures.length === 0) return { ok: false, reason: 'missing' };
  // Two copies of a param are ambiguous: a proxy or cache might read the other one.
  if (expirations.length > 1 || signatures.length > 1) return { ok: false, reason: 'malformed' };
  const expiration = expirations[0] ?? '';
  const signature = signatures[0] ?? '';

  if (!isCanonicalPathname(pathname)) return { ok: false, reason: 'malformed' };
  if (!EXPIRATION_PATTERN.test(expiration)) return { ok: false, reason: 'malformed' };
  const expirationMs = Number(expiration);
  if (!Number.isSafeInteger(expirationMs)) return { ok: false, reason: 'malformed' };
  if (!SIGNATURE_PATTERN.test(signature)) return { ok: false, reason: 'malformed' };

  const scope = options.scope ?? pathname;
  if (!isWithinScope(pathname, scope)) return { ok: false, reason: 'invalid' };

  const expected = Buffer.from(signPath(secret, scope, expirationMs), 'utf8');
  if (!constantTimeEqual(expected, Buffer.from(signature, 'utf8'))) return { ok: false, reason: 'invalid' };
  // Checked after the signature so 'expired' is only ever said about a URL we really issued.
  if (nowMs > expirationMs) return { ok: false, reason: 'expired' };
  return { ok: true, expirationMs };
}

/** True when `pathname` is within `scope`: equal to it, or under it when it ends in '/'. */
export function isWithinScope(pathname: string, scope: string): boolean {
  // A prefix without the trailing slash would let `/a/b` cover the sibling `/a/bc/...`.
  return scope.endsWith('/') ? pathname.startsWith(scope) : pathname === scope;
}

function isCanonicalPathname(pathname: string): boolean {
  if (!pathname.startsWith('/')) return false;
  if (pathname.includes('\\') || SUSPICIOUS_ENCODING.test(pathname)) return false;
  // Every segment except the last (a folder's trailing '/') must be non-empty and not a dot segment.
  const segments = pathname.slice(1).split('/');
  return segments.every((segment, i) => {
    if (segment === '.' || segment === '..') return false;
    return segment !== '' || i === segments.length - 1;
  });
}

function constantTimeEqual(expected: Buffer, actual: Buffer): boolean {
  // timingSafeEqual throws on unequal lengths; compare against ourselves so the work done
  // does not depend on the attacker's input, then fail.
  if (actual.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, actual);
}

function withSignatureParams(query: string, expirationMs: number, signature: string): string {
  const kept = query.split('&').filter((pair) => {
    if (pair === '') return false;
    const name = decodeParamName(pair.split('=', 1)[0] ?? '');
    return name !== EXPIRATION_PARAM && name !== SIGNATURE_PARAM;
  });
  kept.push(`${EXPIRATION_PARAM}=${expirationMs}`, `${SIGNATURE_PARAM}=${signature}`);
  return kept.join('&');
}

function decodeParamName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

interface ReferenceParts {
  scheme: string | undefined;
  authority: string | undefined;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

function splitReference(reference: string): ReferenceParts {
  // The pattern matches every string; the fallback only satisfies the type checker.
  const match = URI_REFERENCE.exec(reference);
  return {
    scheme: match?.[1],
    authority: match?.[2],
    path: match?.[3] ?? reference,
    query: match?.[4],
    fragment: match?.[5],
  };
}

function tailLength(parts: ReferenceParts): number {
  const query = parts.query === undefined ? 0 : parts.query.length + 1;
  const fragment = parts.fragment === undefined ? 0 : parts.fragment.length + 1;
  return query + fragment;
}

function assertWithinScope(pathname: string, scope: string): void {
  if (!isWithinScope(pathname, scope)) {
    throw new RangeError(`URL path ${JSON.stringify(pathname)} is outside the signing scope ${JSON.stringify(scope)}`);
  }
}

function assertSecret(secret: SigningSecret): void {
  // An empty key still produces HMACs, which would make a misconfigured server look fine.
  if (secret.length === 0) throw new TypeError('signing secret must not be empty');
}
