// The answer to a repeated watermark request, kept by each instance while nothing but an explicit change can alter it:
// the video and its watermark, once the watermark is settled (READY, or PLAYABLE on demand with nothing left for a job:
// what players ask for is rendered as they ask). A settled watermark of an INGESTED video changes only when someone
// deletes it, deletes or replaces its video, or writes its row (a container added, READY once players asked for every
// segment, a retry), and every one of those writes sends a notice naming the watermark or the video in its own
// transaction; its expiry is checked against the clock on every hit. So a kept answer is the one a read would give, but for a notice lost without the LISTEN
// connection dropping, which the lifetime bounds (kept-reads.ts holds the rules every such cache keeps).
import { randomUUID } from 'node:crypto';
import { KeptReads, type NoticeSource } from './kept-reads.js';
import type { VideoRef, WatermarkAndVideo, WatermarkRecord } from './state-store.js';

/** How long an instance answers a repeated request from what it kept, by default (the `db.requestCacheMs` setting). */
export const REQUEST_CACHE_MS = 30_000;
/** Requests kept at most. */
const REQUESTS_KEPT = 10_000;
/** Where a notice the store sends for its own writes names its sender (the change feed puts a process id there). */
const STORE_SENDER = 'store';

export type ChangedRow = `watermark:${string}` | `video:${string}`;

/**
 * The notice a write sends for a row it changed, its sender made unique so the writer knows its own when it comes
 * back; the change feed hears it too (it wakes that row's watchers).
 */
export function changeNotice(row: ChangedRow): string {
  return `${STORE_SENDER}-${randomUUID()} ${row}`;
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

/**
 * Whether a watermark's status moves on only by an explicit write: READY, or PLAYABLE on demand without an mp4 (no job
 * works on it; the on-demand render writes READY once every segment is there, with a notice like any write).
 */
function isSettledStatus(w: Pick<WatermarkRecord, 'status' | 'render' | 'containers'>): boolean {
  return w.status === 'READY' || (w.status === 'PLAYABLE' && w.render === 'on-demand' && !w.containers.includes('mp4'));
}

/** Whether a read may be kept: a settled watermark of an INGESTED video, the very one these settings make of it. */
export function isSettled(found: WatermarkAndVideo, identify: (videoId: string) => string): boolean {
  const { video, watermark } = found;
  return (
    video?.status === 'INGESTED' &&
    watermark !== undefined &&
    isSettledStatus(watermark) &&
    watermark.videoId === video.id &&
    watermark.id === identify(video.id)
  );
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

  /**
   * Runs a write of `row` with its notice, and returns once this process heard the notice back (`heardBack`: every
   * instance's LISTEN was signalled as it committed, so a request anywhere after this one's answer finds the row
   * dropped, barring a listener slower than that answer's way back and on), having dropped the row here.
   */
  async change(row: ChangedRow, write: (notice: string) => Promise<void>, heardBack: (notice: string) => Promise<void>): Promise<void> {
    const notice = changeNotice(row);
    const echo = heardBack(notice);
    await write(notice);
    await echo;
    const [kind, id] = row.split(':', 2) as ['watermark' | 'video', string];
    this.changed({ kind, id });
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
