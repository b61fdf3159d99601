// Checking a signed watermark link (DESIGN 3): the signature over its path or folder, then the watermark it names,
// which must exist, belong to that video and not have expired. Lookups are cached briefly: a player fetches a
// segment every few seconds, and each GET would otherwise read the store twice.
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { verifySignedUrl } from '../core/sign-url.js';
import type { WatermarkRecord } from '../engine/state-store.js';
import { isExpired } from '../engine/watermark.js';
import type { ApiRequest, Params } from './http-types.js';
import type { ServerContext } from './server-context.js';

export const UUID = /^[0-9a-fA-F-]{36}$/;
export const HASH = /^[0-9a-f]{32}$/;
/** How long a looked-up watermark is trusted before the store is read again (a status change shows within this). */
const LOOKUP_TTL_MS = 1_000;
const LOOKUP_CACHE_SIZE = 2_000;

export interface SignedLinks {
  /** Verifies the request's signature (over `scope`, or its own path); returns the watermark it names and the link's expiration. */
  watermark(req: ApiRequest, version: ApiVersion, params: Params, scope?: string): { watermark: WatermarkRecord; expirationMs: number };
}

export function signedLinks(ctx: ServerContext): SignedLinks {
  const engine = ctx.service.engine;
  const cache = new Map<string, { w: WatermarkRecord | undefined; at: number }>();
  const lookup = (id: string): WatermarkRecord | undefined => {
    const now = engine.now();
    const hit = cache.get(id);
    if (hit && now - hit.at < LOOKUP_TTL_MS) return hit.w;
    const w = engine.store.getWatermark(id);
    if (cache.size >= LOOKUP_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(id, { w, at: now });
    return w;
  };
  const expired = (w: WatermarkRecord) => new WmarkError('WATERMARK_EXPIRED', `this watermarked video expired on ${new Date(w.expiration!).toISOString()}`);

  return {
    watermark(req, _version, params, scope) {
      const videoId = params.videoId!;
      const watermarkId = params.watermarkId!;
      if (!UUID.test(videoId) || !HASH.test(watermarkId)) throw new WmarkError('NOT_FOUND', `no route for ${req.path}`);
      const check = verifySignedUrl(engine.secret, ctx.signedPrefix + req.rawUrl, engine.now(), scope ? { scope: ctx.signedPrefix + scope } : {});
      if (!check.ok) {
        // Links are capped at the watermark's own expiration, so a genuine link (reason 'expired' is only given after the
        // HMAC matched) that ran out with its watermark says so: renewing the link cannot help (SPEC 2.5, DESIGN 3).
        if (check.reason === 'expired') {
          const gone = lookup(watermarkId);
          if (gone && gone.videoId === videoId && isExpired(gone, engine.now())) throw expired(gone);
        }
        const messages = { missing: 'this link needs its expiration and signature parameters', malformed: 'malformed signed link', expired: 'this link has expired', invalid: 'invalid signature' };
        throw new WmarkError(check.reason === 'expired' ? 'SIGNATURE_EXPIRED' : 'SIGNATURE_INVALID', messages[check.reason]);
      }
      const w = lookup(watermarkId);
      if (!w || w.videoId !== videoId) throw new WmarkError('WATERMARK_NOT_FOUND', 'no such watermark');
      if (isExpired(w, engine.now())) throw expired(w);
      return { watermark: w, expirationMs: check.expirationMs };
    },
  };
}
