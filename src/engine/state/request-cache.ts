// The answer to a repeated watermark request, kept by each instance while nothing but an explicit change can alter it:
// the video and its watermark, once the watermark is READY. A READY watermark of an INGESTED video changes only when
// someone deletes it, deletes or replaces its video, or writes its row (a container added, a retry), and every one of
// those writes sends a notice naming the watermark or the video in its own transaction; its expiry is checked against
// the clock on every hit. So a kept answer is the one a read would give, but for a notice lost without the LISTEN
// connection dropping, which the lifetime bounds (kept-reads.ts holds the rules every such cache keeps).
import { KeptReads, type NoticeSource } from './kept-reads.js';
import type { VideoRef, WatermarkAndVideo } from './state-store.js';

/** How long an instance answers a repeated request from what it kept, by default (the `db.requestCacheMs` setting). */
export const REQUEST_CACHE_MS = 30_000;
/** Requests kept at most. */
const REQUESTS_KEPT = 10_000;
/** Where a notice the store sends for its own writes names its sender (the change feed puts a process id there). */
const STORE_SENDER = 'store';

export type ChangedRow = `watermark:${string}` | `video:${string}`;

/** The notice a write sends for a row it changed; the change feed hears it too (it wakes that row's watchers). */
export function changeNotice(row: ChangedRow): string {
  return `${STORE_SENDER} ${row}`;
}

/** The row a notice names (its last word, `watermark:ID` or `video:ID`), whoever sent it; undefined for another notice. */
export function noticedRow(message: string): { kind: 'watermark' | 'video'; id: string } | undefined {
  const m = /(?:^|\s)(watermark|video):(\S+)$/.exec(message);
  return m ? { kind: m[1] as 'watermark' | 'video', id: m[2]! } : undefined;
}

/**
 * What a request is kept under: how it names its video (id or key) and what its settings make of any video (their
 * identity on no video), so two requests share an entry only when they would read the same rows. Undefined when it
 * names no video (nothing to keep).
 */
export function requestKey(ref: VideoRef, identify: (videoId: string) => string): string | undefined {
  if (ref.videoId) return `id\u0000${ref.videoId}\u0000${identify('')}`;
  if (ref.key !== undefined) return `key\u0000${ref.key}\u0000${identify('')}`;
  return undefined;
}

/** Whether a read may be kept: a READY watermark of an INGESTED video, the very one these settings make of it. */
export function isSettled(found: WatermarkAndVideo, identify: (videoId: string) => string): boolean {
  const { video, watermark } = found;
  return video?.status === 'INGESTED' && watermark?.status === 'READY' && watermark.videoId === video.id && watermark.id === identify(video.id);
}

/** Whether a kept answer still stands at `now`: its watermark has not expired (read again, the request is refused). */
export function isUnexpired(found: WatermarkAndVideo, now: number): boolean {
  const expiration = found.watermark?.expiration ?? null;
  return expiration === null || now <= expiration;
}

/** Whether a notice about `row` concerns a kept answer. */
export function concerns(row: { kind: 'watermark' | 'video'; id: string }, found: WatermarkAndVideo): boolean {
  return row.kind === 'watermark' ? found.watermark?.id === row.id : found.video?.id === row.id;
}

export class WatermarkRequestCache {
  private readonly kept: KeptReads<WatermarkAndVideo>;

  constructor(sourceOf: () => NoticeSource, lifetimeMs = REQUEST_CACHE_MS) {
    this.kept = new KeptReads(sourceOf, {
      lifetimeMs,
      max: REQUESTS_KEPT,
      heard: (message) => {
        const row = noticedRow(message);
        if (row) this.changed(row);
      },
    });
  }

  /** What `read` answers for the request, or what was kept of it: a settled answer is kept, an unsettled one read each time. */
  find(ref: VideoRef, identify: (videoId: string) => string, now: number, read: () => Promise<WatermarkAndVideo>): Promise<WatermarkAndVideo> {
    const key = requestKey(ref, identify);
    if (key === undefined) return read();
    return this.kept.read(
      key,
      now,
      read,
      (found) => isSettled(found, identify),
      (found) => isUnexpired(found, now),
    );
  }

  /** Forgets what names a row this process changed (its own notice, where it has one, comes back later). */
  changed(row: { kind: 'watermark' | 'video'; id: string }): void {
    this.kept.drop((_, found) => concerns(row, found));
  }

  /** Answers kept now. */
  get size(): number {
    return this.kept.size;
  }
}
