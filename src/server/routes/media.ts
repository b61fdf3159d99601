// Signed media (DESIGN 3): a watermark's playlist, with every segment URI carrying the request's own folder-scoped
// signature, its segments and its mp4, with CORS, ranges and caching for players.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { rewritePlaylistUris } from '../../core/playlist.js';
import { mediaScope } from '../../core/watermark-urls.js';
import { mediaKey } from '../../engine/media-publish.js';
import { ensureSegment, MP4_NAME, PLAYLIST_NAME, watermarkDir } from '../../engine/watermark.js';
import type { MediaStore } from '../../media/media-store.js';
import { CONTENT_TYPES, fileResponse } from '../file-response.js';
import { storeResponse } from '../store-response.js';
import { MEDIA_CORS, type ApiRequest, type ApiResponse } from '../http-types.js';
import { versioned, type Routes } from '../route-table.js';
import type { ServerContext } from '../server-context.js';
import type { SignedLinks } from '../signed-links.js';

const MEDIA_FILE = /^(video\.m3u8|video\.mp4|seg_\d{5}\.ts)$/;
const SEGMENT_FILE = /^seg_(\d{5})\.ts$/;

export function mediaRoutes(routes: Routes, ctx: ServerContext, links: SignedLinks): void {
  const engine = ctx.service.engine;
  for (const { version, paths } of versioned('/watermark/:videoId/:watermarkId/:file')) {
    routes.add(
      ['GET', 'HEAD'],
      paths,
      async (req, params) => {
        const file = params.file!;
        if (!MEDIA_FILE.test(file)) throw new WmarkError('NOT_FOUND', 'no such file');
        const { watermark: w, expirationMs } = links.watermark(req, version, params, mediaScope(version, params.videoId!, params.watermarkId!));
        const dir = watermarkDir(engine, w.videoId, w.id);
        if (file === PLAYLIST_NAME) return playlistResponse(req, path.join(dir, PLAYLIST_NAME), engine.media && { store: engine.media, key: mediaKey(engine.paths.media, path.join(dir, PLAYLIST_NAME)) });
        if (file === MP4_NAME && !w.containers.includes('mp4')) throw new WmarkError('NOT_FOUND', 'this watermark was not requested with the mp4 container');
        // Until every segment is there, a segment a player asks for is rendered now (the request waits for it), and
        // an on-demand watermark's next few are queued behind it. A complete watermark is served straight from disk.
        const segment = SEGMENT_FILE.exec(file);
        if (segment && w.status !== 'READY' && !(await ensureSegment(engine, w, Number(segment[1])))) throw new WmarkError('NOT_FOUND', 'no such segment');
        const maxAge = Math.max(0, Math.floor((expirationMs - engine.now()) / 1000));
        const options = { contentType: CONTENT_TYPES[path.extname(file)]!, cacheControl: `private, max-age=${Math.min(maxAge, 31_536_000)}, immutable`, headers: MEDIA_CORS };
        // With a shared store (serve --media), rendered segments and the mp4 live only there; else on this disk.
        if (engine.media) return storeResponse(req, engine.media, mediaKey(engine.paths.media, path.join(dir, file)), options);
        return fileResponse(req, path.join(dir, file), options);
      },
      { cors: true },
    );
  }
}

/** A playlist with each segment URI carrying the request's own (folder-scoped) signature. */
async function playlistResponse(req: ApiRequest, file: string, stored?: { store: MediaStore; key: string }): Promise<ApiResponse> {
  // serve writes the playlist itself and keeps its copy; the store's serves when that copy is gone (a new data disk).
  const text = await readFile(file, 'utf8').catch(async () => {
    const copy = stored && (await readObject(stored.store, stored.key).catch(() => undefined));
    if (copy === undefined) throw new WmarkError('NOT_READY', 'the playlist is not available yet');
    return copy;
  });
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

async function readObject(store: MediaStore, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.openRange(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
