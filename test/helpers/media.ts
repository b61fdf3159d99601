// Reading real media back in tests: decoded RGB frames, packet timing and keyframe flags.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG, FFPROBE } from '../../harness/tools.js';

const run = promisify(execFile);

export interface RgbFrame {
  width: number;
  height: number;
  data: Buffer;
  at(x: number, y: number): [number, number, number];
}

function frame(width: number, height: number, data: Buffer): RgbFrame {
  return {
    width,
    height,
    data,
    at: (x, y) => {
      const i = (y * width + x) * 3;
      return [data[i]!, data[i + 1]!, data[i + 2]!];
    },
  };
}

/**
 * Decodes the frame shown at `seconds` on the video timeline (decoding from the start, so the timing is exact;
 * HLS input seeks to segment boundaries otherwise).
 */
export async function decodeFrame(input: string, seconds: number, size: { width: number; height: number }): Promise<RgbFrame> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', input, '-vf', `select='gte(t\\,${seconds})'`, '-vsync', '0', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const expected = size.width * size.height * 3;
  if (stdout.length !== expected) throw new Error(`decoded ${stdout.length} bytes, expected ${expected} (${input} @ ${seconds}s)`);
  return frame(size.width, size.height, stdout);
}

export interface Packet {
  pts: number;
  keyframe: boolean;
}

/** Video packets of any file the bundled ffmpeg reads (MPEG-TS goes through NUT: the bundled ffprobe crashes on TS). */
export async function videoPackets(input: string): Promise<Packet[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-pk-'));
  try {
    const nut = path.join(dir, 'v.nut');
    await run(FFMPEG, ['-v', 'error', '-copyts', '-i', input, '-map', '0:v:0', '-c', 'copy', '-f', 'nut', nut]);
    const { stdout } = await run(FFPROBE, ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', nut], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [pts, flags] = l.split(',');
        return { pts: Number(pts), keyframe: (flags ?? '').includes('K') };
      })
      .sort((a, b) => a.pts - b.pts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Decodes every frame of a file; rejects with ffmpeg's message when anything is corrupt. */
export async function decodesCleanly(input: string): Promise<void> {
  await run(FFMPEG, ['-v', 'error', '-xerror', '-i', input, '-f', 'null', '-']);
}

/**
 * Bounding box of the pixels inside `region` (default: the whole frame) that differ from `background` by more than
 * `threshold` (sum of channel differences).
 */
export function diffBox(
  f: RgbFrame,
  background: [number, number, number],
  threshold = 60,
  region = { x0: 0, y0: 0, x1: f.width - 1, y1: f.height - 1 },
): { x0: number; y0: number; x1: number; y1: number; count: number } | undefined {
  let x0 = Infinity,
    y0 = Infinity,
    x1 = -1,
    y1 = -1,
    count = 0;
  for (let y = region.y0; y <= region.y1; y++) {
    for (let x = region.x0; x <= region.x1; x++) {
      const [r, g, b] = f.at(x, y);
      if (Math.abs(r - background[0]) + Math.abs(g - background[1]) + Math.abs(b - background[2]) > threshold) {
        count++;
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
    }
  }
  return count ? { x0, y0, x1, y1, count } : undefined;
}

/** Every frame of a file's video, area-scaled to width x height, as 16-bit grey (full range, levels x 256). */
export async function grayFrames(input: string, width: number, height: number): Promise<Uint16Array> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', input, '-map', '0:v:0', '-vf', `scale=${width}:${height}:flags=area,format=gray16le`, '-f', 'rawvideo', 'pipe:1'],
    {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const bytes = stdout as unknown as Buffer;
  return new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}
