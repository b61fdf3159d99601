// The signed URLs of a watermark, exactly as `wmark serve` serves them
// (docs/api.md, "Signed media and the player page").

import { timingSafeEqual } from 'node:crypto';
import type { ApiVersion } from './api-version.js';
import { type SigningSecret, signPath, signUrl, type VerifySignedUrlResult } from './sign-url.js';

export interface WatermarkUrlInput {
  baseUrl: string;
  apiVersion: ApiVersion;
  videoId: string;
  watermarkId: string;
  secret: SigningSecret;
  /** When the media and player links stop working (Unix ms). */
  mediaExpirationMs: number;
  /** When the status / long-poll link stops working (Unix ms). */
  statusExpirationMs: number;
  includeMp4: boolean;
}

export interface WatermarkUrls {
  m3u8: string;
  mp4?: string;
  player: string;
  /** 1.0: the long-poll href; 2.0: the resource link that returns the watermark with renewed signatures. */
  status: string;
  iframe: string;
}

/** All files of one watermark share one folder-prefix signature, so a playlist can pass it on to its segments. */
export function mediaScope(apiVersion: string, videoId: string, watermarkId: string): string {
  return `/${apiVersion}/watermark/${encodeURIComponent(videoId)}/${encodeURIComponent(watermarkId)}/`;
}

function statusPath(apiVersion: string, videoId: string, watermarkId: string): string {
  return `/${apiVersion}/watermark/${encodeURIComponent(videoId)}/${encodeURIComponent(watermarkId)}`;
}

function playerPath(apiVersion: string): string {
  return `/player/${apiVersion}/`;
}

/**
 * What a player link's signature covers: its path and the links it will load, so a valid player link cannot be
 * pointed at another playlist.
 */
function playerScope(pathname: string, sourceUrl: string | null, href: string | null): string {
  return `${pathname}?sourceUrl=${encodeURIComponent(sourceUrl ?? '')}&href=${encodeURIComponent(href ?? '')}`;
}

function join(base: string, pathname: string): URL {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/+$/, '') + pathname;
  return url;
}

function escapeHtmlAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function watermarkUrls(input: WatermarkUrlInput): WatermarkUrls {
  const { baseUrl, apiVersion, videoId, watermarkId, secret } = input;
  const scope = mediaScope(apiVersion, videoId, watermarkId);
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const media = (file: string) => signUrl(secret, join(baseUrl, scope + file), { expirationMs: input.mediaExpirationMs, scope: basePath + scope });
  const m3u8 = media('video.m3u8');
  const status = signUrl(secret, join(baseUrl, statusPath(apiVersion, videoId, watermarkId)), { expirationMs: input.statusExpirationMs });
  const playerUrl = join(baseUrl, playerPath(apiVersion));
  playerUrl.searchParams.set('sourceUrl', m3u8);
  if (apiVersion === '1.0') playerUrl.searchParams.set('href', status);
  const player = signPlayerUrl(secret, playerUrl, input.mediaExpirationMs);
  return {
    m3u8,
    ...(input.includeMp4 ? { mp4: media('video.mp4') } : {}),
    player,
    status,
    iframe: `<iframe src="${escapeHtmlAttribute(player)}" width="640" height="360" frameborder="0" allow="autoplay; fullscreen" allowfullscreen></iframe>`,
  };
}

/** Signs a player link over its path and the sourceUrl/href it carries (any old expiration/signature replaced). */
export function signPlayerUrl(secret: SigningSecret, url: URL | string, expirationMs: number): string {
  const copy = new URL(String(url));
  copy.searchParams.delete('signature');
  copy.searchParams.set('expiration', String(expirationMs));
  copy.searchParams.set(
    'signature',
    signPath(secret, playerScope(copy.pathname, copy.searchParams.get('sourceUrl'), copy.searchParams.get('href')), expirationMs),
  );
  return copy.href;
}

/** Checks a player link: its signature must cover the path and the exact sourceUrl/href it carries. */
export function verifyPlayerUrl(secret: SigningSecret, url: URL, nowMs: number, pathname = url.pathname): VerifySignedUrlResult {
  const params = url.searchParams;
  const expiration = params.getAll('expiration');
  const signature = params.getAll('signature');
  if (!expiration.length || !signature.length) return { ok: false, reason: 'missing' };
  if (expiration.length > 1 || signature.length > 1 || !/^(0|[1-9]\d{0,15})$/.test(expiration[0]!) || !/^[A-Za-z0-9_-]{43}$/.test(signature[0]!)) {
    return { ok: false, reason: 'malformed' };
  }
  const expirationMs = Number(expiration[0]);
  // Sixteen digits reach past 2^53, where a number no longer names one expiry (and signPath refuses it).
  if (!Number.isSafeInteger(expirationMs)) return { ok: false, reason: 'malformed' };
  const expected = Buffer.from(signPath(secret, playerScope(pathname, params.get('sourceUrl'), params.get('href')), expirationMs));
  const given = Buffer.from(signature[0]!);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'invalid' };
  if (nowMs > expirationMs) return { ok: false, reason: 'expired' };
  return { ok: true, expirationMs };
}
