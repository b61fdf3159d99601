// Signed media for the HTTP server: checking a watermark link (its signature over its path or folder, then the
// watermark it names, which must exist, belong to that video and not have expired), and the media behind it: the
// playlist, a segment rendered when a player first asks for it, and where each object is stored.
import { WmarkError } from '../../core/errors.js';
import { verifySignedUrl } from '../../core/sign-url.js';
import { verifyPlayerUrl } from '../../core/watermark-urls.js';
import type { MediaStore } from '../../media/media-store.js';
import { isMediaNotFound } from '../../media/media-store.js';
import { mediaKeys, PLAYLIST_NAME } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import type { WatermarkRecord } from '../state/state-store.js';
import { ensureSegment } from '../watermark/on-demand.js';
import { isExpired } from '../watermark/request.js';
import { STATUS_URL_GRACE_MS } from './api-bodies.js';

/** How long a looked-up watermark is trusted before the store is read again (a status change shows within this). */
const LOOKUP_TTL_MS = 1_000;
const LOOKUP_CACHE_SIZE = 2_000;

export const WATERMARK_ID = /^[0-9a-f]{32}$/;
export const VIDEO_ID = /^[0-9a-fA-F-]{36}$/;

export class MediaAccess {
  /** A player fetches a segment every few seconds, and each would otherwise read the store for its watermark. */
  private readonly lookups = new Map<string, { w: WatermarkRecord | undefined; at: number }>();

  constructor(private readonly engine: Engine) {}

  private async lookup(id: string): Promise<WatermarkRecord | undefined> {
    const now = this.engine.now();
    const hit = this.lookups.get(id);
    if (hit && now - hit.at < LOOKUP_TTL_MS) return hit.w;
    const w = await this.engine.store.getWatermark(id);
    if (this.lookups.size >= LOOKUP_CACHE_SIZE) this.lookups.delete(this.lookups.keys().next().value!);
    this.lookups.set(id, { w, at: now });
    return w;
  }

  /**
   * Verifies a watermark link (`signedUrl`: its path and query as they were signed, over `scope` or its own path) and
   * returns the watermark it names and the link's expiration. Any other form is an error that says why.
   */
  async checkLink(
    signedUrl: string,
    ids: { videoId: string; watermarkId: string },
    scope?: string,
  ): Promise<{ watermark: WatermarkRecord; expirationMs: number }> {
    const { videoId, watermarkId } = ids;
    const expired = (w: WatermarkRecord) => new WmarkError('WATERMARK_EXPIRED', `this watermarked video expired on ${new Date(w.expiration!).toISOString()}`);
    const check = verifySignedUrl(this.engine.secret, signedUrl, this.engine.now(), scope ? { scope } : {});
    if (!check.ok) {
      // Links are capped at the watermark's own expiration, so a genuine link (reason 'expired' is only given after the
      // HMAC matched) that ran out with its watermark says so: renewing the link cannot help.
      if (check.reason === 'expired') {
        const gone = await this.lookup(watermarkId);
        if (gone && gone.videoId === videoId && isExpired(gone, this.engine.now())) throw expired(gone);
      }
      const messages = {
        missing: 'this link needs its expiration and signature parameters',
        malformed: 'malformed signed link',
        expired: 'this link has expired',
        invalid: 'invalid signature',
      };
      throw new WmarkError(check.reason === 'expired' ? 'SIGNATURE_EXPIRED' : 'SIGNATURE_INVALID', messages[check.reason]);
    }
    const w = await this.lookup(watermarkId);
    if (!w || w.videoId !== videoId) throw new WmarkError('WATERMARK_NOT_FOUND', 'no such watermark');
    if (isExpired(w, this.engine.now())) throw expired(w);
    return { watermark: w, expirationMs: check.expirationMs };
  }

  /** A 1.0 long-poll link stops working shortly after its watermark is READY (the playlist link is for playing). */
  checkStatusLinkAge(w: WatermarkRecord): void {
    if (w.readyOn !== null && this.engine.now() > w.readyOn + STATUS_URL_GRACE_MS) {
      throw new WmarkError('LINK_EXPIRED', 'this long-poll link expired after the watermark became READY; use the playlist link');
    }
  }

  /** Checks a player page link: its signature over its path and exactly the playlist and status links it loads. */
  checkPlayerLink(url: URL, signedPath: string) {
    return verifyPlayerUrl(this.engine.secret, url, this.engine.now(), signedPath);
  }

  /** The watermark's playlist as written (its segment URIs without signatures). */
  async playlist(w: WatermarkRecord): Promise<string> {
    const bytes = await this.engine.media.read(mediaKeys.watermarkFile(w.videoId, w.id, PLAYLIST_NAME)).catch((error: unknown) => {
      throw isMediaNotFound(error) ? new WmarkError('NOT_READY', 'the playlist is not available yet') : error;
    });
    return bytes.toString('utf8');
  }

  /**
   * Until every segment is there, a segment a player asks for is rendered now (the request waits for it), and an
   * on-demand watermark's next few are rendered ahead. False when the watermark has no such segment.
   */
  async segment(w: WatermarkRecord, index: number): Promise<boolean> {
    return w.status === 'READY' || ensureSegment(this.engine, w, index);
  }

  /** Where one of the watermark's files is stored. */
  object(w: WatermarkRecord, name: string): { store: MediaStore; key: string } {
    return { store: this.engine.media, key: mediaKeys.watermarkFile(w.videoId, w.id, name) };
  }
}
