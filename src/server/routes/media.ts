// Signed media: a watermark's playlist, with every segment URI carrying the request's own folder-scoped
// signature, its segments and its mp4, with CORS, ranges and caching for players.
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { rewritePlaylistUris } from '../../core/playlist.js';
import { mediaScope } from '../../core/watermark-urls.js';
import { CONTENT_TYPES } from '../file-response.js';
import { type ApiRequest, type ApiResponse, MEDIA_CORS } from '../http-types.js';
import { type Routes, versioned } from '../route-table.js';
import type { ServerContext } from '../server-context.js';
import type { SignedLinks } from '../signed-links.js';
import { storeResponse } from '../store-response.js';

const MEDIA_FILE = /^(video\.m3u8|video\.mp4|seg_\d{5}\.ts)$/;
const SEGMENT_FILE = /^seg_(\d{5})\.ts$/;

export function mediaRoutes(routes: Routes, ctx: ServerContext, links: SignedLinks): void {
  const media = ctx.service.media;
  for (const { version, paths } of versioned('/watermark/:videoId/:watermarkId/:file')) {
    routes.add(
      ['GET', 'HEAD'],
      paths,
      async (req, params) => {
        const file = params.file!;
        if (!MEDIA_FILE.test(file)) throw new WmarkError('NOT_FOUND', 'no such file');
        const { watermark: w, expirationMs } = await links.watermark(req, version, params, mediaScope(version, params.videoId!, params.watermarkId!));
        if (file === 'video.m3u8') return playlistResponse(req, await media.playlist(w));
        if (file === 'video.mp4' && !w.containers.includes('mp4')) throw new WmarkError('NOT_FOUND', 'this watermark was not requested with the mp4 container');
        // Until every segment is there, a segment a player asks for is rendered now (the request waits for it).
        const segment = SEGMENT_FILE.exec(file);
        if (segment && !(await media.segment(w, Number(segment[1])))) throw new WmarkError('NOT_FOUND', 'no such segment');
        const maxAge = Math.max(0, Math.floor((expirationMs - ctx.service.now()) / 1000));
        const options = {
          contentType: CONTENT_TYPES[path.extname(file)]!,
          cacheControl: `private, max-age=${Math.min(maxAge, 31_536_000)}, immutable`,
          headers: MEDIA_CORS,
        };
        const { store, key } = media.object(w, file);
        return storeResponse(req, store, key, options);
      },
      { cors: true },
    );
  }
}

/** A playlist with each segment URI carrying the request's own (folder-scoped) signature. */
function playlistResponse(req: ApiRequest, text: string): ApiResponse {
  const query = `expiration=${req.url.searchParams.get('expiration')}&signature=${req.url.searchParams.get('signature')}`;
  const body = rewritePlaylistUris(text, (uri) => `${uri}${uri.includes('?') ? '&' : '?'}${query}`);
  return {
    status: 200,
    headers: {
      ...MEDIA_CORS,
      'Content-Type': CONTENT_TYPES['.m3u8']!,
      // A playlist still growing must be re-fetched; a finished one is stable for the link's lifetime.
      'Cache-Control': text.includes('#EXT-X-ENDLIST') ? 'private, max-age=60' : 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    },
    body,
  };
}
