// Image fixtures for IMAGE settings, made with the bundled ffmpeg (solid logos, a PNG with graded transparency, other
// formats, animations), and a loopback HTTP server that serves them as a CDN would, its answers changeable per path.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FFMPEG } from '../../harness/tools.js';

function ffmpeg(args: string[]): void {
  execFileSync(FFMPEG, ['-v', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** An opaque `width` x `height` picture of one colour (RRGGBB), in the format its file name says (png, jpg, webp). */
export function solidImage(file: string, colour: string, width: number, height: number): string {
  const codec = file.endsWith('.webp') ? ['-c:v', 'libwebp', '-lossless', '1'] : file.endsWith('.jpg') ? ['-q:v', '1'] : ['-pix_fmt', 'rgba'];
  ffmpeg(['-f', 'lavfi', '-i', `color=c=0x${colour}:s=${width}x${height}:d=1`, '-frames:v', '1', ...codec, file]);
  return file;
}

/**
 * A red PNG whose alpha steps across its width in quarters: opaque, half (128), a quarter (64), transparent. Drawn at
 * its own size, each quarter shows the background blended with red at that alpha.
 */
export function gradedAlphaPng(file: string, width = 64, height = 32): string {
  const alpha = `if(lt(X,W/4),255,if(lt(X,W/2),128,if(lt(X,3*W/4),64,0)))`;
  ffmpeg(['-f', 'lavfi', '-i', `color=c=red:s=${width}x${height}:d=1,format=rgba,geq=r=255:g=0:b=0:a='${alpha}'`, '-frames:v', '1', '-pix_fmt', 'rgba', file]);
  return file;
}

/** A PNG with an alpha channel and every pixel fully transparent: a logo exported wrongly. */
export function transparentPng(file: string, width = 32, height = 32): string {
  ffmpeg(['-f', 'lavfi', '-i', `color=c=red:s=${width}x${height}:d=1,format=rgba,geq=r=255:g=0:b=0:a=0`, '-frames:v', '1', '-pix_fmt', 'rgba', file]);
  return file;
}

/** A five-frame animation, as an animated PNG (.apng, served as .png) or an animated WebP. */
export function animatedImage(file: string, format: 'apng' | 'webp'): string {
  const out = ['-f', 'lavfi', '-i', 'testsrc2=s=64x64:r=5:d=1'];
  if (format === 'apng') ffmpeg([...out, '-plays', '0', '-f', 'apng', file]);
  else ffmpeg([...out, '-c:v', 'libwebp', '-loop', '0', file]);
  return file;
}

/** A PNG of the given size with a plain picture (a large size stays a small file). */
export function plainPng(file: string, width: number, height: number): string {
  ffmpeg(['-f', 'lavfi', '-i', `color=c=gray:s=${width}x${height}:d=1`, '-frames:v', '1', file]);
  return file;
}

export interface ImageServer {
  /** http://127.0.0.1:port */
  url: string;
  /** Serves this file (or these bytes) at `urlPath` from now on. */
  serve(urlPath: string, body: string | Buffer, options?: { status?: number; type?: string }): string;
  /** How many times each path was asked for. */
  hits(urlPath: string): number;
  close(): Promise<void>;
}

/** A CDN on loopback: paths map to files or bytes; anything else is 404. */
export async function imageServer(): Promise<ImageServer> {
  const routes = new Map<string, { body: Buffer; status: number; type: string }>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(p, (counts.get(p) ?? 0) + 1);
    const route = routes.get(p);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html><body>not found</body></html>');
      return;
    }
    res.writeHead(route.status, { 'content-type': route.type, 'content-length': route.body.length }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    serve(urlPath, body, options = {}) {
      const bytes = Buffer.isBuffer(body) ? body : readFileSync(body);
      const type = options.type ?? (urlPath.endsWith('.jpg') ? 'image/jpeg' : urlPath.endsWith('.webp') ? 'image/webp' : 'image/png');
      routes.set(urlPath, { body: bytes, status: options.status ?? 200, type });
      return `${url}${urlPath}`;
    },
    hits: (urlPath) => counts.get(urlPath) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const fixtureIn = (dir: string, name: string) => path.join(dir, name);
