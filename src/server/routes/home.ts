// What a browser finds at the address `wmark serve` prints: GET / as a small HTML page (version, the docs, a status)
// or, asked for JSON, the same facts as data; the docs themselves as plain text; and the service's icon, so no page
// of the service asks for a file that is not there.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { PACKAGE_FILES } from '../../package-root.js';
import { VERSION } from '../../version.js';
import { CONTENT_TYPES, fileResponse } from '../file-response.js';
import { json } from '../http-types.js';
import type { Routes } from '../route-table.js';
import type { ServerContext } from '../server-context.js';

const DOCS_DIR = PACKAGE_FILES.docs;
const FAVICON = path.join(PACKAGE_FILES.player, 'favicon.svg');
const DOC_NAME = /^[a-z0-9-]+\.md$/;
const DOC_IMAGE = /^[a-z0-9-]+\.png$/;
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'";

interface ServiceStatus {
  service: 'wmark';
  version: string;
  apiVersions: ['1.0', '2.0'];
  docs: Record<string, string>;
  status: { videos: number; ingested: number; watermarks: number; ready: number; uptimeSeconds: number };
}

export function homeRoutes(routes: Routes, ctx: ServerContext): void {
  const started = Date.now();

  async function status(): Promise<ServiceStatus> {
    const base = ctx.linkBase;
    const names = (await readdir(DOCS_DIR).catch(() => [] as string[])).filter((n) => DOC_NAME.test(n)).sort();
    const counts = await ctx.service.operations.counts();
    return {
      service: 'wmark',
      version: VERSION,
      apiVersions: ['1.0', '2.0'],
      docs: Object.fromEntries(names.map((n) => [n.replace(/\.md$/, ''), `${base}/docs/${n}`])),
      status: { ...counts, uptimeSeconds: Math.floor((Date.now() - started) / 1000) },
    };
  }

  routes.add(['GET', 'HEAD'], ['/'], async (req) => {
    const s = await status();
    if (!prefersHtml(req.headers.accept)) return json(200, s, { Vary: 'Accept' });
    return {
      status: 200,
      headers: {
        'Content-Type': CONTENT_TYPES['.html']!,
        'Cache-Control': 'no-store',
        'Content-Security-Policy': PAGE_CSP,
        'X-Content-Type-Options': 'nosniff',
        Vary: 'Accept',
      },
      body: homePage(s),
    };
  });
  routes.add(['GET', 'HEAD'], ['/favicon.ico'], async (req) =>
    fileResponse(req, FAVICON, { contentType: CONTENT_TYPES['.svg']!, cacheControl: 'public, max-age=86400' }),
  );
  routes.add(['GET', 'HEAD'], ['/docs/:name'], async (req, params) => {
    if (!DOC_NAME.test(params.name!)) throw new WmarkError('NOT_FOUND', `no document ${params.name}`);
    return fileResponse(req, path.join(DOCS_DIR, params.name!), { contentType: 'text/plain; charset=utf-8', cacheControl: 'public, max-age=300' });
  });
  routes.add(['GET', 'HEAD'], ['/docs/img/:name'], async (req, params) => {
    if (!DOC_IMAGE.test(params.name!)) throw new WmarkError('NOT_FOUND', `no picture ${params.name}`);
    return fileResponse(req, path.join(DOCS_DIR, 'img', params.name!), { contentType: 'image/png', cacheControl: 'public, max-age=300' });
  });
}

/** HTML unless the client asks for JSON without also asking for HTML (browsers send text/html first). */
export function prefersHtml(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  return types.includes('text/html') || types.includes('application/xhtml+xml');
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function homePage(s: ServiceStatus): string {
  const docs = Object.entries(s.docs)
    .map(([name, url]) => `<li><a href="${escapeHtml(url)}">docs/${escapeHtml(name)}.md</a></li>`)
    .join('');
  const st = s.status;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>wmark ${escapeHtml(s.version)}</title><link rel="icon" type="image/svg+xml" href="player/assets/favicon.svg">
<style>body{font:16px/1.5 system-ui,sans-serif;background:#101820;color:#e8eef3;max-width:44rem;margin:3rem auto;padding:0 1rem}
a{color:#4fc3f7}code{background:#1c2a36;padding:.1em .35em;border-radius:4px}h1{font-size:1.6rem;margin-bottom:.2rem}
.muted{color:#9fb0bf}dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{color:#9fb0bf}dd{margin:0}</style></head>
<body><h1>wmark <span class="muted">${escapeHtml(s.version)}</span></h1>
<p class="muted">Per-viewer video watermarking. This service speaks the Video Watermarking Service API 1.0 and 2.0.</p>
<h2>Status</h2><dl id="status"><dt>Running for</dt><dd>${st.uptimeSeconds} s</dd>
<dt>Videos</dt><dd>${st.videos} (${st.ingested} ingested)</dd><dt>Watermarks</dt><dd>${st.watermarks} (${st.ready} complete)</dd></dl>
<h2>Docs</h2><ul id="docs">${docs}</ul>
<h2>Start</h2><p>Create credentials with <code>wmark auth keys create --label app</code>, then call
<code>POST /2.0/watermark</code> with <code>x-api-client-id</code> and <code>x-api-key</code>. Or run <code>wmark demo</code>.</p>
<p class="muted">For machines: <code>curl -H 'Accept: application/json' /</code> gives this page as JSON.</p>
</body></html>`;
}
