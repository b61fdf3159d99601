// `wmark detect`: reads the forensic payload out of a leaked copy, against the video's sidecar, and names the watermark(s).
import { stat } from 'node:fs/promises';
import { WmarkError } from '../../core/errors.js';
import type { TimePiece } from '../../core/forensic/align.js';
import { analyseLeak } from '../../core/forensic/analyse.js';
import type { CandidateReading } from '../../core/forensic/candidate-reading.js';
import type { Warp } from '../../core/forensic/geometry.js';
import { forensicKey, type PackedCodebook, packedCodebook } from '../../core/forensic/keyed-bits.js';
import type { SegmentReading, Stage, Verdict } from '../../core/forensic/score.js';
import { decodeSidecar } from '../../core/forensic/sidecar-format.js';
import { FORENSIC_LAYOUT_TRADES, SIDECAR_HEIGHT, SIDECAR_WIDTH } from '../../core/forensic/variant-plan.js';
import { DEFAULT_FORENSIC_LAYOUT } from '../../core/forensic-layout.js';
import { encodeForensicContent } from '../../core/forensic-payload.js';
import { probeMedia } from '../../ffmpeg/probe-media.js';
import { mediaKeys, SIDECAR_NAME } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import type { VideoRecord } from '../state/state-store.js';
import type { VideoRef } from '../watermark/request.js';
import { readLeak } from './leak-reader.js';

interface DetectedPayload {
  payload: number;
  ascii: string | null;
  base64: string;
  z: number;
  watermarks: { id: string; createdOn: number }[];
}

export interface DetectResult {
  found: boolean;
  videoId: string;
  leak: { file: string; durationSeconds: number; frames: number };
  /** The first aligned piece (the whole leak when it is one contiguous excerpt), as v1 reported it. */
  alignment: { offsetSeconds: number; score: number; overlapSeconds: number };
  /** Every stretch of the leak found in the original: leak seconds [leakStart, leakEnd) = original scale * t + offset. */
  pieces: TimePiece[];
  /**
   * The candidate alignments read (the aligned one first; more than one when the content repeats itself): where each
   * puts the leak, how well the pictures fit, its best payload and z; `chosen` is the one the verdict comes from.
   */
  alignments: CandidateReading[];
  /**
   * The original's region the leak shows (bounding box), and the full warp (homography after a lens term); live: the
   * share of the leak frame that shows the original (a camcorder's dark lens border, a bezel or a burnt-in logo is
   * left out of the reading).
   */
  geometry: { x0: number; y0: number; w: number; h: number; score: number; warp: Warp; live: number };
  sidecarVersion: 1 | 2;
  /**
   * How much of the title a leak must show for its mark to be read at all (its layout's, docs/forensic.md): a shorter
   * leak that names nobody is `tooShort`, which says why better than its low score.
   */
  shortestLeakSeconds: number;
  tooShort: boolean;
  segmentsRead: number;
  slotsTotal: number;
  threshold: number;
  best?: { payload: number; z: number; rank: 1; gap: number };
  accused: DetectedPayload[];
  collusion: Verdict['collusion'];
  /** The chance that this verdict names anyone innocent: a distribution-free bound and a Gaussian estimate. */
  falseAccusation: { bound: number; estimate: number };
  /** Accusation stages: each accused payload, then the best that fell short. */
  stages: Stage[];
  candidates: { payload: number; z: number }[];
  elapsedMs: number;
  /** Seconds per step (probe, decode, codebook, analyse, and analyse.align / .register / .realign / .read / .score inside it). */
  timings: Record<string, number>;
  /** Alignment's work: 8-s windows looked up, windows that found their place, fingerprint votes cast. */
  alignStats: { windows: number; windowsAligned: number; votes: number };
  /** Only when asked for (the bench re-scores them). */
  readings?: SegmentReading[];
}

export interface DetectOptions {
  keepReadings?: boolean;
  /** Memory budget for the decoded leak (bytes); see leak-reader. */
  frameBudgetBytes?: number;
  /** Decode without deblocking (see leak-reader); default: for leaks of LONG_LEAK_SECONDS or more. */
  skipLoopFilter?: boolean;
}

/**
 * A leak this long is decoded without deblocking: its decode is most of detection's time, and with thousands of slots
 * read it has evidence to spare. Shorter leaks, where every slot counts and the decode takes seconds, are decoded
 * exactly.
 */
export const LONG_LEAK_SECONDS = 20 * 60;

/** Whether a leak of this duration (from the probe; NaN when unknown) is decoded without deblocking. */
export const skipsLoopFilter = (durationSeconds: number): boolean => durationSeconds >= LONG_LEAK_SECONDS;

/** Codebooks an engine keeps: each is 65,536 payloads x a title's code bits, a few MB. */
const CODEBOOKS_KEPT = 4;

/** The packed codebook of a title (65,536 payloads x its code bits), kept by the engine for the next leak. */
function titleCodebook(engine: Engine, videoId: string, bits: number): PackedCodebook {
  return engine.caches.remember('codebooks', `${videoId}:${bits}`, CODEBOOKS_KEPT, () => packedCodebook(forensicKey(engine.secret), videoId, bits));
}

async function describePayload(engine: Engine, videoId: string, payload: number, z: number): Promise<DetectedPayload> {
  const watermarks = (await engine.store.listWatermarks(videoId))
    .filter((w) => w.forensicPayload === payload)
    .map((w) => ({ id: w.id, createdOn: w.createdOn }));
  return { payload, ascii: encodeForensicContent(payload, '1.0') ?? null, base64: encodeForensicContent(payload, '2.0')!, z, watermarks };
}

export async function detectLeak(
  engine: Engine,
  ref: VideoRef,
  file: string,
  onStage?: (s: string) => void,
  options: DetectOptions = {},
): Promise<DetectResult> {
  const started = engine.now();
  const video = ref.videoId ? await engine.store.getVideo(ref.videoId) : ref.key !== undefined ? await engine.store.getVideoByKey(ref.key) : undefined;
  if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `no video with ${ref.videoId ? `id "${ref.videoId}"` : `key "${ref.key}"`}`);
  if (!video.enableForensic)
    throw new WmarkError('FORENSIC_NOT_ENABLED', `video ${video.key} was not ingested with forensic preparation, so it has no marks to look for`);
  const sidecarKey = mediaKeys.forensicFile(video.id, SIDECAR_NAME);
  const sidecar = decodeSidecar(
    await engine.media.read(sidecarKey).catch(() => {
      throw new WmarkError('SIDECAR_MISSING', `the detection sidecar of video ${video.key} is missing (${engine.media.describe(sidecarKey)})`);
    }),
  );
  try {
    await stat(file);
  } catch {
    throw new WmarkError('LEAK_NOT_FOUND', `no such file: ${file}`);
  }
  const timings: Record<string, number> = {};
  let mark = engine.now();
  const lap = (name: string) => {
    const now = engine.now();
    timings[name] = (now - mark) / 1000;
    mark = now;
  };
  onStage?.('probing the leak');
  const info = await probeMedia(engine.runner, file, file);
  lap('probe');
  onStage?.('decoding the leak');
  const streamed = await readLeak({
    runner: engine.runner,
    now: engine.now,
    file,
    fps: info.fps,
    durationSeconds: info.durationSeconds,
    width: SIDECAR_WIDTH,
    height: SIDECAR_HEIGHT,
    budgetBytes: options.frameBudgetBytes,
    skipLoopFilter: options.skipLoopFilter ?? skipsLoopFilter(info.durationSeconds),
  });
  lap('decode');
  const fps = info.fps.num / info.fps.den;
  const count = streamed.frameCount;
  const trade = layoutTrade(video, sidecar.version);
  if (count < fps * 5) throw new WmarkError('LEAK_TOO_SHORT', `the leak has only ${count} frames; a mark is read from ${trade.shortestLeak} of the title`);
  onStage?.('aligning, registering and reading the mark');
  const book = titleCodebook(engine, video.id, sidecar.slotStarts.length);
  lap('codebook');
  const a = analyseLeak(sidecar, streamed.frames, streamed.times, streamed.signature, book, engine.now);
  lap('analyse');
  // The analysis' own steps, inside 'analyse' (not added to it): alignment's cost is what grows with a long leak.
  for (const [step, seconds] of Object.entries(a.timings)) timings[`analyse.${step}`] = seconds;
  const verdict = a.verdict;
  const first = a.map.pieces[0];
  const found = verdict.accused.length > 0;
  return {
    found,
    videoId: video.id,
    leak: { file, durationSeconds: count / fps, frames: count },
    alignment: first
      ? { offsetSeconds: first.offset, score: Number(first.score.toFixed(4)), overlapSeconds: Number(a.alignedSeconds.toFixed(2)) }
      : { offsetSeconds: 0, score: 0, overlapSeconds: 0 },
    pieces: a.map.pieces,
    alignments: a.candidates.map((c) => ({ ...c, alignmentScore: Number(c.alignmentScore.toFixed(4)), z: Number(c.z.toFixed(3)) })),
    geometry: { ...a.box, score: Number(a.registration.score.toFixed(4)), warp: a.warp, live: Number(a.registration.liveFraction.toFixed(4)) },
    sidecarVersion: sidecar.version,
    shortestLeakSeconds: trade.shortestLeakSeconds,
    tooShort: !found && count / fps < trade.shortestLeakSeconds,
    segmentsRead: verdict.segmentsRead,
    slotsTotal: sidecar.slotStarts.length,
    threshold: verdict.threshold,
    ...(verdict.best ? { best: verdict.best } : {}),
    accused: await Promise.all(verdict.accused.map((u) => describePayload(engine, video.id, u, verdict.stages.find((s) => s.payload === u)?.z ?? 0))),
    collusion: verdict.collusion,
    falseAccusation: verdict.falseAccusation,
    stages: verdict.stages,
    candidates: verdict.candidates.slice(0, 5),
    elapsedMs: engine.now() - started,
    timings,
    alignStats: a.alignStats,
    ...(options.keepReadings ? { readings: a.readings } : {}),
  };
}

/** The trades of the title's layout (the shortest leak it names anyone from); titles from before layouts (sidecar v1) carry one bit a segment. */
function layoutTrade(video: VideoRecord, sidecarVersion: 1 | 2) {
  return FORENSIC_LAYOUT_TRADES[video.forensicLayout ?? (sidecarVersion === 1 ? 'single' : DEFAULT_FORENSIC_LAYOUT)];
}
