// The working form a source is normalised to at ingest (constant frame rate H.264 in closed-GOP segments, lead
// segments first), and the exact duration of each segment: the same plan whether this process or a farm worker
// transcodes.
import { WmarkError } from '../errors.js';
import { framesPerSegment, leadSegmentFrames, segmentFrameCounts } from './segment-timing.js';

/** High quality working form: it is decoded and encoded again for every watermark. */
// CRF 15 keeps the second generation (every watermark re-encodes it) close to a one-shot encode of the source; a higher
// CRF loses markedly more on grainy footage.
export const WORKING_ENCODE = { preset: 'veryfast', crf: 15 } as const;

/** What the plan needs of a probed video. */
export interface ProbedVideo {
  fpsNum: number | null;
  fpsDen: number | null;
  width: number | null;
  height: number | null;
  hasAudio: boolean;
  durationSeconds: number | null;
  enableForensic: boolean;
}

/** The working form a video is transcoded to. */
export function workingFormPlan(video: ProbedVideo) {
  const fps = { num: video.fpsNum!, den: video.fpsDen! };
  // Forensic videos keep one GOP per segment: their code slots need halves of 1.5 s or more, and a forensic viewer's
  // segments are copies of prepared files, so there is no first render for short lead segments to speed up.
  const maxFrames = leadFramesBound(video.durationSeconds, fps);
  const lead = !video.enableForensic && maxFrames !== undefined;
  return {
    fps,
    width: video.width!,
    height: video.height!,
    hasAudio: video.hasAudio,
    encode: WORKING_ENCODE,
    lead,
    ...(maxFrames !== undefined ? { maxFrames } : {}),
  };
}

/**
 * A bound on the frames a source of this probed length can yield at the working rate, with a wide margin (containers
 * misreport durations); undefined when the length is unknown, and such a source is cut without lead segments.
 */
function leadFramesBound(durationSeconds: number | null, fps: { num: number; den: number }): number | undefined {
  if (durationSeconds === null || !Number.isFinite(durationSeconds) || durationSeconds <= 0) return undefined;
  return Math.ceil(((durationSeconds * fps.num) / fps.den) * 1.5) + 10 * framesPerSegment(fps);
}

/**
 * Exact segment durations from frame counts: every segment holds its planned frames (lead segments, then one GOP)
 * except the last. The segment muxer's own list measures from the muxer's clock origin, not the first frame, so it is
 * only used for the file names.
 */
export function segmentDurations(count: number, totalFrames: number | undefined, fps: { num: number; den: number }, lead = false): number[] {
  const counts = totalFrames ? segmentFrameCounts(fps, totalFrames, lead) : [];
  if (!totalFrames || counts.length !== count) {
    const plan = lead ? `${leadSegmentFrames(fps).join(', ')}, then ${framesPerSegment(fps)}` : String(framesPerSegment(fps));
    throw new WmarkError('FRAME_COUNT_MISMATCH', `ffmpeg reported ${totalFrames ?? 'no'} frames for ${count} segments of ${plan} frames`);
  }
  const frameSeconds = fps.den / fps.num;
  return counts.map((n) => Number((n * frameSeconds).toFixed(6)));
}
