// `wmark detect`: reads the forensic payload out of a leaked copy, against the video's sidecar, and names the watermark(s).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stat } from 'node:fs/promises';
import { alignLeak, frameSignature, leakMeanImage, readSegments, registerGeometry, scorePayloads, SIGNATURE_CELLS, type Verdict } from '../core/forensic/detect-math.js';
import { allCodewords, forensicKey } from '../core/forensic/keyed-bits.js';
import { decodeSidecar } from '../core/forensic/sidecar-format.js';
import { encodeForensicContent } from '../core/forensic-payload.js';
import { WmarkError } from '../core/errors.js';
import { probeMedia } from '../ffmpeg/probe-media.js';
import type { Engine } from './engine.js';
import { FORENSIC_DIR, SIDECAR_HEIGHT, SIDECAR_NAME, SIDECAR_WIDTH } from './forensic-prepare.js';
import { videoDir } from './ingest.js';
import type { VideoRef } from './watermark.js';

export interface DetectedPayload {
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
  alignment: { offsetSeconds: number; score: number; overlapSeconds: number };
  geometry: { x0: number; y0: number; w: number; h: number; score: number };
  segmentsRead: number;
  threshold: number;
  best?: { payload: number; z: number; rank: 1; gap: number };
  accused: DetectedPayload[];
  collusion: Verdict['collusion'];
  candidates: { payload: number; z: number }[];
  elapsedMs: number;
}

const codewordCache = new Map<string, Int8Array>();

function describePayload(engine: Engine, videoId: string, payload: number, z: number): DetectedPayload {
  const watermarks = engine.store
    .listWatermarks(videoId)
    .filter((w) => w.forensicPayload === payload)
    .map((w) => ({ id: w.id, createdOn: w.createdOn }));
  return { payload, ascii: encodeForensicContent(payload, '1.0') ?? null, base64: encodeForensicContent(payload, '2.0')!, z, watermarks };
}

export async function detectLeak(engine: Engine, ref: VideoRef, file: string, onStage?: (s: string) => void): Promise<DetectResult> {
  const started = Date.now();
  const video = ref.videoId ? engine.store.getVideo(ref.videoId) : ref.key !== undefined ? engine.store.getVideoByKey(ref.key) : undefined;
  if (!video) throw new WmarkError('VIDEO_NOT_FOUND', `no video with ${ref.videoId ? `id "${ref.videoId}"` : `key "${ref.key}"`}`);
  if (!video.enableForensic) throw new WmarkError('FORENSIC_NOT_ENABLED', `video ${video.key} was not ingested with forensic preparation, so it has no marks to look for`);
  const sidecarFile = path.join(videoDir(engine, video.id), FORENSIC_DIR, SIDECAR_NAME);
  const sidecar = decodeSidecar(await readFile(sidecarFile).catch(() => {
    throw new WmarkError('SIDECAR_MISSING', `the detection sidecar of video ${video.key} is missing (${sidecarFile})`);
  }));
  try {
    await stat(file);
  } catch {
    throw new WmarkError('LEAK_NOT_FOUND', `no such file: ${file}`);
  }
  onStage?.('probing the leak');
  const info = await probeMedia(engine.runner, file, file);
  const fps = info.fps.num / info.fps.den;
  onStage?.('decoding the leak');
  const { stdout } = await engine.runner.ffmpeg(
    ['-v', 'error', '-i', file, '-map', '0:v:0', '-vf', `fps=${info.fps.num}/${info.fps.den},scale=${SIDECAR_WIDTH}:${SIDECAR_HEIGHT}:flags=area,format=gray16le`, '-f', 'rawvideo', 'pipe:1'],
    { captureStdout: true },
  );
  const n = SIDECAR_WIDTH * SIDECAR_HEIGHT;
  const frames = new Uint16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
  const count = Math.floor(frames.length / n);
  if (count < fps * 5) throw new WmarkError('LEAK_TOO_SHORT', `the leak has only ${count} frames; at least a few seconds are needed`);
  const times = Float64Array.from({ length: count }, (_, i) => i / fps);
  const leak = { width: SIDECAR_WIDTH, height: SIDECAR_HEIGHT, times, frames: frames.subarray(0, count * n) };

  onStage?.('aligning to the original');
  const sig = new Float32Array(count * SIGNATURE_CELLS);
  const scratch = new Float32Array(n);
  for (let i = 0; i < count; i++) {
    for (let p = 0; p < n; p++) scratch[p] = leak.frames[i * n + p]! / 256;
    frameSignature(scratch, SIDECAR_WIDTH, SIDECAR_HEIGHT, sig, i * SIGNATURE_CELLS);
  }
  const alignment = alignLeak(sidecar, times, sig);

  // Registration: compare the leak's mean picture with the original's over the same stretch of the timeline.
  const covered: number[] = [];
  sidecar.segmentStarts.forEach((s, k) => {
    const mid = s + sidecar.segmentDurations[k]! / 2 - alignment.offset;
    if (mid >= 0 && mid <= times[count - 1]!) covered.push(k);
  });
  const origMean = new Float32Array(n);
  for (const k of covered) for (let p = 0; p < n; p++) origMean[p]! += sidecar.mean[k * n + p]! / covered.length;
  const geometry = covered.length ? registerGeometry(origMean, leakMeanImage(leak), SIDECAR_WIDTH, SIDECAR_HEIGHT) : { x0: 0, y0: 0, w: 1, h: 1, score: 0 };

  onStage?.('reading the mark');
  const readings = readSegments(sidecar, leak, alignment, geometry);
  const segments = sidecar.segmentStarts.length;
  const cacheKey = `${video.id}:${segments}`;
  let codes = codewordCache.get(cacheKey);
  if (!codes) {
    codes = allCodewords(forensicKey(engine.secret), video.id, segments);
    codewordCache.set(cacheKey, codes);
  }
  const verdict = scorePayloads(readings, codes, segments);
  return {
    found: verdict.accused.length > 0,
    videoId: video.id,
    leak: { file, durationSeconds: count / fps, frames: count },
    alignment: { offsetSeconds: alignment.offset, score: Number(alignment.score.toFixed(4)), overlapSeconds: alignment.overlapSeconds },
    geometry: { ...geometry, score: Number(geometry.score.toFixed(4)) },
    segmentsRead: verdict.segmentsRead,
    threshold: verdict.threshold,
    ...(verdict.best ? { best: verdict.best } : {}),
    accused: verdict.accused.map((u) => describePayload(engine, video.id, u, verdict.candidates.find((c) => c.payload === u)?.z ?? 0)),
    collusion: verdict.collusion,
    candidates: verdict.candidates.slice(0, 5),
    elapsedMs: Date.now() - started,
  };
}
