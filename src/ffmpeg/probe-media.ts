// Reads what the engine needs to know about a media file (streams, size, frame rate, duration) with ffprobe.
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isWmarkError, WmarkError } from '../core/errors.js';
import type { ProcessRunner } from './run-ffmpeg.js';

export interface MediaInfo {
  formatName: string;
  durationSeconds: number;
  width: number;
  height: number;
  /** Frame rate as a rational, from avg_frame_rate (falls back to r_frame_rate). */
  fps: { num: number; den: number };
  videoCodec: string;
  hasAudio: boolean;
  audioCodec?: string;
  sizeBytes?: number;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
}

interface ProbeJson {
  streams?: ProbeStream[];
  format?: { format_name?: string; duration?: string; size?: string };
}

export function parseRational(text: string | undefined): { num: number; den: number } | undefined {
  if (!text) return undefined;
  const [n, d] = text.split('/').map(Number);
  if (!Number.isFinite(n) || !Number.isFinite(d ?? 1) || !n || (d ?? 1) === 0) return undefined;
  return { num: n!, den: d ?? 1 };
}

/** Pure: turns ffprobe's JSON into MediaInfo, or explains why the input is not a usable video. */
export function interpretProbe(json: ProbeJson, label: string): MediaInfo {
  const streams = json.streams ?? [];
  // Cover art in audio files is a "video" stream with attached_pic; it is not a video.
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (!video) {
    throw new WmarkError('NO_VIDEO_STREAM', `${label} has no video stream`, {
      hint: streams.length
        ? `It contains: ${streams.map((s) => (s.disposition?.attached_pic ? 'cover art' : (s.codec_type ?? 'unknown'))).join(', ')}.`
        : undefined,
    });
  }
  const fps = parseRational(video.avg_frame_rate) ?? parseRational(video.r_frame_rate);
  if (!fps || fps.num / fps.den > 240 || fps.num / fps.den < 1) {
    throw new WmarkError('BAD_FRAME_RATE', `${label}: cannot determine a usable frame rate (${video.avg_frame_rate ?? 'none'})`);
  }
  if (!video.width || !video.height) throw new WmarkError('BAD_DIMENSIONS', `${label}: the video stream has no picture size`);
  const duration = Number(json.format?.duration ?? video.duration);
  const audio = streams.find((s) => s.codec_type === 'audio');
  return {
    formatName: json.format?.format_name ?? 'unknown',
    durationSeconds: Number.isFinite(duration) ? duration : NaN,
    width: video.width,
    height: video.height,
    fps,
    videoCodec: video.codec_name ?? 'unknown',
    hasAudio: Boolean(audio),
    audioCodec: audio?.codec_name,
    sizeBytes: json.format?.size ? Number(json.format.size) : undefined,
  };
}

const PROBE_ARGS = [
  '-v',
  'error',
  '-show_entries',
  'format=format_name,duration,size:stream=codec_type,codec_name,width,height,avg_frame_rate,r_frame_rate,duration:stream_disposition=attached_pic',
  '-of',
  'json',
];

export async function probeMedia(runner: ProcessRunner, input: string, label = input, signal?: AbortSignal): Promise<MediaInfo> {
  let json: ProbeJson;
  try {
    const { stdout } = await runner.ffprobe([...PROBE_ARGS, input], { signal });
    json = JSON.parse(stdout.toString('utf8')) as ProbeJson;
  } catch (error) {
    if (isWmarkError(error) && error.code === 'FFMPEG_CRASHED') {
      // The bundled static ffprobe builds crash on MPEG-TS input; ffmpeg reads it fine, so remux to NUT and probe the pipe.
      json = await probeViaRemux(runner, input, signal);
    } else if (isWmarkError(error) && error.code === 'FFMPEG_FAILED') {
      const hint = unreadableHint(await readHead(input), firstLine(error.details[0]));
      throw new WmarkError('NOT_A_VIDEO', `${label} is not a readable media file`, { details: error.details, hint });
    } else throw error;
  }
  return interpretProbe(json, label);
}

/** The first bytes of a local file, to say what it holds instead; none for a URL or a file that cannot be read. */
async function readHead(input: string): Promise<Buffer | undefined> {
  try {
    const file = await open(input, 'r');
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(512), 0, 512, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * What a person needs when ffprobe cannot read a source: what the file seems to be (text or a web page rather than a
 * video), what wmark takes, and ffmpeg's own words last, for whoever knows them.
 */
export function unreadableHint(head: Buffer | undefined, ffmpegSays: string | undefined): string {
  // Text: no NUL byte and valid UTF-8 (a character cut at the 512th byte aside).
  const start = head?.toString('utf8').slice(0, -1) ?? '';
  const text = head !== undefined && head.length > 0 && !head.includes(0) && !start.includes('\uFFFD');
  const page = text && /^\s*<(!doctype html|html|\?xml)/i.test(start);
  const what = page ? 'It holds a web page or XML, not a video' : text ? 'It holds text, not a video' : 'It is no video format ffmpeg knows';
  return `${what}: give a video file (mp4, mov, mkv, webm, ...) or a URL that answers with one.${ffmpegSays ? ` (ffmpeg: ${ffmpegSays})` : ''}`;
}

function firstLine(text: string | undefined): string | undefined {
  return text
    ?.split('\n')
    .find((l) => l.trim())
    ?.trim();
}

async function probeViaRemux(runner: ProcessRunner, input: string, signal?: AbortSignal): Promise<ProbeJson> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wmark-probe-'));
  try {
    const nut = path.join(dir, 'probe.nut');
    await runner.ffmpeg(['-v', 'error', '-i', input, '-map', '0:v?', '-map', '0:a?', '-c', 'copy', '-f', 'nut', nut], { signal });
    const { stdout } = await runner.ffprobe([...PROBE_ARGS, nut], { signal });
    return JSON.parse(stdout.toString('utf8')) as ProbeJson;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Presentation time of a file's first video frame, read with showinfo (the bundled ffprobe cannot read MPEG-TS). */
export async function firstVideoTime(runner: ProcessRunner, file: string, signal?: AbortSignal): Promise<number> {
  const { stderr } = await runner.ffmpeg(['-copyts', '-i', file, '-map', '0:v:0', '-frames:v', '1', '-vf', 'showinfo', '-f', 'null', '-'], { signal });
  const m = /pts_time:\s*(-?[\d.]+)/.exec(stderr);
  if (!m) throw new WmarkError('PROBE_FAILED', 'could not read the first frame time of the working segments');
  return Number(m[1]);
}
