// The segments of one watermark: what each is drawn on (the clean working segment, or for a forensic viewer the
// variant its codeword picks), and how it is put in place: rendered by the engine's renderer, or, for a forensic
// viewer with no visible text, a copy of a prepared variant under the watermark's own name (no encode at all).
import { createHash } from 'node:crypto';
import { WmarkError } from '../../core/errors.js';
import { codeword, forensicKey } from '../../core/forensic/keyed-bits.js';
import { type ForensicLayout, parseLayout, variantFileFor } from '../../core/forensic/title-layout.js';
import { framesPerSegment } from '../../core/plan/segment-timing.js';
import { canonicalSettings } from '../../core/watermark-identity.js';
import { isMediaNotFound } from '../../media/media-store.js';
import { LAYOUT_NAME, mediaKeys } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import type { RenderUrgency } from '../render/segment-renderer.js';
import type { VideoRecord, WatermarkRecord } from '../state/state-store.js';
import { renderStrategy } from './band-strategy.js';
import { visibleSettings, watermarkDrawing } from './drawing.js';

export interface WatermarkSegments {
  video: VideoRecord;
  /** The watermark's folder (media key). */
  folder: string;
  /** A forensic viewer with no text: every segment is a copy of a prepared variant, never an encode. */
  linksOnly: boolean;
  /** Whether segment `index` is in place. */
  has(index: number): Promise<boolean>;
  /** Puts segment `index` in place (rendered, or copied), whether or not it is there; a render is asked for at once. */
  make(index: number, urgency: RenderUrgency, signal?: AbortSignal): Promise<void>;
  /** Puts segment `index` in place unless it is there already. */
  put(index: number, urgency: RenderUrgency, signal?: AbortSignal): Promise<void>;
}

/** A forensic title's layout, from its layout file (a title prepared before layouts has none: one slot a segment). */
export async function readTitleLayout(engine: Engine, video: VideoRecord): Promise<ForensicLayout> {
  const text = await engine.media.read(mediaKeys.forensicFile(video.id, LAYOUT_NAME)).then(
    (bytes) => bytes.toString('utf8'),
    (error: unknown) => (isMediaNotFound(error) ? undefined : Promise.reject(error)),
  );
  return parseLayout(text, video.segments.length);
}

/**
 * `deletionCheckedAtEnd`: the caller (a job under the watermark's lease, which a delete is refused while it lives) reads
 * the watermark once its renders are over and drops a deleted one's folder then (dropDeleted), so a segment made
 * here does not read it again; a database server would count that read as a transaction per segment. `video`: the
 * watermark's video, when the caller read it with the watermark.
 */
export async function watermarkSegments(
  engine: Engine,
  w: WatermarkRecord,
  options: { deletionCheckedAtEnd?: boolean; video?: VideoRecord } = {},
): Promise<WatermarkSegments> {
  const video = options.video ?? (await engine.store.getVideo(w.videoId));
  if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `the video of watermark ${w.id} is gone`);
  // The renderer must reach the video's working media (a farm with a shared store may need it uploaded first).
  await engine.renderer.useSources(video.id);
  const folder = mediaKeys.watermark(video.id, w.id);
  const visible = visibleSettings(w);
  const drawing = await watermarkDrawing(engine, w, video);
  const gop = framesPerSegment({ num: video.fpsNum!, den: video.fpsDen! });

  // A forensic viewer's segment k is the variant its payload's codeword picks; otherwise the clean working segment.
  const layout = w.forensicPayload !== null ? await readTitleLayout(engine, video) : undefined;
  const code = layout ? codeword(forensicKey(engine.secret), video.id, w.forensicPayload!, layout.slots) : undefined;
  const sourceOf = (index: number) =>
    code ? mediaKeys.forensicFile(video.id, variantFileFor(layout!, code, index)) : mediaKeys.workingSegment(video.id, index);
  // Text and images over a forensic variant: rendered segments are shared by every viewer with the same visible settings
  // (and image bytes), so each (drawing, variant, segment) is encoded at most once; a viewer with unique text costs one
  // encode per segment.
  const drawn = canonicalSettings(visible, { withImages: true });
  const textHash = code && visible.length ? createHash('sha256').update(drawn).digest('hex').slice(0, 32) : undefined;
  const sharedOf = (index: number) => (textHash ? mediaKeys.sharedText(video.id, textHash, variantFileFor(layout!, code!, index)) : undefined);
  const linksOnly = Boolean(code) && visible.length === 0;
  // A mark that fits one of the title's bands renders the band alone (the renderer falls back to a full render).
  const strategy = linksOnly ? undefined : await renderStrategy(engine, w, video);

  const plan: WatermarkSegments = {
    video,
    folder,
    linksOnly,
    has: (index) => engine.media.exists(mediaKeys.segment(video.id, w.id, index)),
    async put(index, urgency, signal) {
      if (!(await plan.has(index))) await plan.make(index, urgency, signal);
    },
    async make(index, urgency, signal) {
      const target = mediaKeys.segment(video.id, w.id, index);
      if (signal?.aborted) throw new WmarkError('CANCELLED', 'watermark job cancelled');
      const shared = sharedOf(index);
      if (!linksOnly && !(shared && (await engine.media.exists(shared)))) {
        const output = shared ?? target;
        await engine.renderer.render(
          {
            input: sourceOf(index),
            output,
            drawing,
            drawingFolder: output.slice(0, output.lastIndexOf('/')),
            gop,
            hasAudio: video.hasAudio,
            // Viewers of a clean segment may share its decode; forensic viewers draw on different variants.
            shareable: !code,
            group: w.id,
            ...(strategy?.segment ? { band: strategy.segment(index, gop) } : {}),
          },
          urgency,
          signal,
        );
      }
      // A copy under the watermark's own name, so no URL says which variant (or shared render) it is.
      const from = linksOnly ? sourceOf(index) : shared;
      if (from) await engine.media.copy(from, target);
      if (!options.deletionCheckedAtEnd) await dropIfDeleted(engine, w.id, folder);
    },
  };
  return plan;
}

/**
 * A watermark deleted while its segment rendered: what was written after the delete is removed again, and whoever
 * waited hears CANCELLED (deleting drops the renders still queued, but not one already under way).
 */
async function dropIfDeleted(engine: Engine, watermarkId: string, folder: string): Promise<void> {
  if (!(await engine.store.getWatermark(watermarkId))) await dropDeleted(engine, watermarkId, folder);
}

/** What was written for a watermark found deleted is removed again, and whoever waited hears CANCELLED. */
export async function dropDeleted(engine: Engine, watermarkId: string, folder: string): Promise<never> {
  await engine.media.deletePrefix(`${folder}/`);
  throw new WmarkError('CANCELLED', `watermark ${watermarkId} was deleted while it rendered`);
}
