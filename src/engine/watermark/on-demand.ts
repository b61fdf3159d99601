// Segments rendered when a player asks for them: the request waits for its segment (never a 404 or a partial file),
// and the next few of an on-demand watermark are rendered ahead, at low urgency, for when the player gets there.
import type { Engine } from '../engine.js';
import type { WatermarkRecord } from '../state/state-store.js';
import { markCompleteIfDone } from './watermark-job.js';
import { type WatermarkSegments, watermarkSegments } from './watermark-segments.js';

/** How many segments past the one a player asks for are rendered ahead, at low urgency. */
export const RENDER_AHEAD_SEGMENTS = 2;
/** Watermarks whose segment plan an engine keeps at hand (a player asks for segment after segment). */
const PLANS_KEPT = 64;
const PLANS = 'watermark-segments';

function cachedSegments(engine: Engine, w: WatermarkRecord): Promise<WatermarkSegments> {
  return engine.caches.remember(PLANS, w.id, PLANS_KEPT, () => watermarkSegments(engine, w));
}

/** Forgets a watermark's cached plan (it was deleted: the same settings later make the same id anew). */
export function forgetSegments(engine: Engine, watermarkId: string): void {
  engine.caches.map<string, unknown>(PLANS).delete(watermarkId);
}

/**
 * A player asks for segment `index` of a watermark that is not complete: renders it now unless it is there (sharing a
 * render already under way), and queues the next few of an on-demand watermark as render-ahead. Resolves when the
 * segment is in place; false when the watermark has no such segment. While a dependency is down, a segment that is
 * not there yet is its 503 (QUEUE_UNAVAILABLE, ...), at once or as soon as it goes down.
 */
export async function ensureSegment(engine: Engine, w: WatermarkRecord, index: number): Promise<boolean> {
  if (w.status === 'FAILED') return false;
  const segments = await cachedSegments(engine, w);
  const count = segments.video.segments.length;
  if (index >= count) return false;
  const there = await segments.has(index);
  // A render needs every dependency (a farm's queue and store): refused at once while one is down.
  if (!there) engine.dependencies.require();
  // Asked for first, so that the render-ahead queued next never takes the threads it needs.
  const asked = there ? undefined : segments.make(index, 'now');
  if (w.render === 'on-demand' && engine.dependencies.allUp) {
    for (let k = index + 1; k < Math.min(count, index + 1 + RENDER_AHEAD_SEGMENTS); k++) {
      // A failed render-ahead costs nothing but time: the player's own request renders it again and reports the error.
      void segments
        .put(k, 'ahead')
        .then(() => markCompleteIfDone(engine, w.id, segments.folder, count))
        .catch(() => undefined);
    }
  }
  if (!asked) return true;
  // A dependency lost meanwhile ends the wait with its 503; the render itself goes on when it is back.
  await engine.dependencies.whileUp(asked);
  if (w.render === 'on-demand') await markCompleteIfDone(engine, w.id, segments.folder, count);
  return true;
}
