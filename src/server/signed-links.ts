// Checking a signed watermark link as it arrived: its ids are of the right form, and the application layer checks its
// signature (over the path as it was signed, with the public URL's path prefix a reverse proxy strips) and the
// watermark it names.
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import type { WatermarkRecord } from '../engine/app/local-service.js';
import { VIDEO_ID, WATERMARK_ID } from '../engine/app/media-access.js';
import type { ApiRequest, Params } from './http-types.js';
import type { ServerContext } from './server-context.js';

export interface SignedLinks {
  /** Verifies the request's signature (over `scope`, or its own path); returns the watermark it names and the link's expiration. */
  watermark(req: ApiRequest, version: ApiVersion, params: Params, scope?: string): Promise<{ watermark: WatermarkRecord; expirationMs: number }>;
}

export function signedLinks(ctx: ServerContext): SignedLinks {
  return {
    async watermark(req, _version, params, scope) {
      const videoId = params.videoId!;
      const watermarkId = params.watermarkId!;
      if (!VIDEO_ID.test(videoId) || !WATERMARK_ID.test(watermarkId)) throw new WmarkError('NOT_FOUND', `no route for ${req.path}`);
      return ctx.service.media.checkLink(ctx.signedPrefix + req.rawUrl, { videoId, watermarkId }, scope ? ctx.signedPrefix + scope : undefined);
    },
  };
}
