// The player page: /player/{v}/ checks its own signature, then serves a page that plays the signed
// playlist with hls.js (served locally: the service works offline), waiting while the watermark is PENDING. The page
// needs none of the full build's extras (subtitles, alternate audio, DRM), so it loads the light build.
import { createRequire } from 'node:module';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { PACKAGE_FILES } from '../../package-root.js';
import { CONTENT_TYPES, fileResponse } from '../file-response.js';
import type { ApiResponse } from '../http-types.js';
import type { Routes } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

const require = createRequire(import.meta.url);
const PLAYER_DIR = PACKAGE_FILES.player;
const HLS_DIST = path.join(path.dirname(require.resolve('hls.js/package.json')), 'dist');
const ASSETS: Readonly<Record<string, string>> = {
  'hls.light.min.js': path.join(HLS_DIST, 'hls.light.min.js'),
  'hls.worker.js': path.join(HLS_DIST, 'hls.worker.js'),
  'player.js': path.join(PLAYER_DIR, 'player.js'),
  'player.css': path.join(PLAYER_DIR, 'player.css'),
  'favicon.svg': path.join(PLAYER_DIR, 'favicon.svg'),
};

// hls.js runs its transmuxer in a Web Worker loaded from its own small script (hls.worker.js), not from a blob: copy
// of the whole library, which the browser would have to parse a second time before the first segment could play.
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self'; media-src * blob:; connect-src *; img-src 'self' data:; frame-ancestors *";

export function playerRoutes(routes: Routes, ctx: ServerContext): void {
  routes.add(['GET', 'HEAD'], ['/player/1.0/', '/player/2.0/'], async (req) => {
    const check = ctx.service.media.checkPlayerLink(req.url, ctx.signedPrefix + req.url.pathname);
    if (!check.ok) return refusal(check.reason === 'expired' ? 'This link has expired. Ask for a new one.' : 'This link is not valid.');
    return fileResponse(req, path.join(PLAYER_DIR, 'index.html'), {
      contentType: CONTENT_TYPES['.html']!,
      cacheControl: 'no-store',
      headers: { 'Content-Security-Policy': PAGE_CSP, 'Referrer-Policy': 'no-referrer' },
    });
  });
  routes.add(['GET', 'HEAD'], ['/player/assets/:name'], async (req, params) => {
    const file = ASSETS[params.name!];
    if (!file) throw new WmarkError('NOT_FOUND', `no route for ${req.path}`);
    return fileResponse(req, file, { contentType: CONTENT_TYPES[path.extname(file)]!, cacheControl: 'public, max-age=3600' });
  });
}

function refusal(text: string): ApiResponse {
  return {
    status: 403,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
    body: `<!doctype html><meta charset="utf-8"><title>wmark</title><body style="font:16px system-ui;background:#000;color:#ff8a80;display:flex;align-items:center;justify-content:center;height:100vh;margin:0"><p>${text}</p>`,
  };
}
