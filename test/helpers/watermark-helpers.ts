// Shared by the watermark integration tests: ingest + watermark on a real engine, frame regions and comparisons, plain-ffmpeg reference renders, playlists.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ingestVideo, watermarkDir } from '../../harness/engine.js';
import { FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { parseSettings } from '../../src/core/setting-schema.js';
import type { Setting } from '../../src/core/setting-types.js';
import { PLAYLIST_NAME } from '../../src/engine/data-folder/layout.js';
import type { Engine } from '../../src/engine/engine.js';
import type { Container, VideoRecord, WatermarkRecord } from '../../src/engine/state/state-store.js';
import { requestWatermark, type WatermarkRequestResult } from '../../src/engine/watermark/request.js';
import { runWatermarkJob } from '../../src/engine/watermark/watermark-job.js';
import { diffBox, type RgbFrame } from './media.js';

const run = promisify(execFile);

export const SMALL = { width: 320, height: 180 } as const;

/** A TEXT setting's own fields at their defaults as SDKs that serialise every field send them (colours 0x-prefixed). */
export const SERIALISED_TEXT_DEFAULTS = {
  fontSize: 0.05,
  fontOpacity: 0.3,
  fontColor: '0xffffff',
  shadowOpacity: 0.1,
  shadowColor: '0x000000',
  shadowOffsetX: 0.08,
  shadowOffsetY: 0.08,
} as const;
export type Rgb = [number, number, number];
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export async function ingestFixture(engine: Engine, source: string, key: string): Promise<VideoRecord> {
  const { video } = await ingestVideo(engine, { source, key });
  return video;
}

/** Settings as a client would send them (the API's setting objects), validated and normalised like a real request. */
export function settingsOf(raw: unknown[]): Setting[] {
  const parsed = parseSettings(raw, { apiVersion: '2.0' });
  if (!parsed.ok) throw new Error(`test settings are invalid: ${parsed.issues.join('; ')}`);
  return parsed.value;
}

export interface Rendered {
  request: WatermarkRequestResult;
  record: WatermarkRecord;
  dir: string;
  playlist: string;
}

/** One watermark request run to completion on the engine. */
export async function renderWith(
  engine: Engine,
  key: string,
  raw: unknown[],
  options: { containers?: Container[]; expirationSeconds?: number } = {},
): Promise<Rendered> {
  const request = await requestWatermark(engine, {
    video: { key },
    settings: settingsOf(raw),
    containers: options.containers ?? ['m3u8'],
    expirationSeconds: options.expirationSeconds,
  });
  const record = (await runWatermarkJob(engine, request.watermark.id))!;
  const dir = watermarkDir(engine, request.video.id, record.id);
  return { request, record, dir, playlist: path.join(dir, PLAYLIST_NAME) };
}

/**
 * Where the frame shown at `seconds` (the first frame at or after it) is among the segments of `video`, from the
 * durations ingest planned (lead segments of 0.5, 0.5, 1 and 2 s, then 4-s GOPs, so the segment at 5 s is no longer 5 / 4):
 * the segment's index, and `offset`, the same moment as ffmpeg's `t` counts it when the segment file is read alone
 * (from the file's own start).
 */
export function segmentAt(video: VideoRecord, seconds: number): { index: number; offset: number } {
  const frame = video.fpsDen! / video.fpsNum!;
  const wanted = Math.ceil(seconds / frame - 1e-6);
  let start = 0;
  for (const [index, d] of video.segments.entries()) {
    const frames = Math.round(d / frame);
    if (wanted < start + frames) return { index, offset: Math.max(0, seconds - start * frame) };
    start += frames;
  }
  throw new Error(`${seconds} s is past the end of a ${video.segments.reduce((a, b) => a + b, 0)} s video`);
}

export const segmentIndexAt = (video: VideoRecord, seconds: number): number => segmentAt(video, seconds).index;

const clampBox = (b: Box, size: { width: number; height: number }): Box => ({
  x0: Math.max(0, b.x0),
  y0: Math.max(0, b.y0),
  x1: Math.min(size.width - 1, b.x1),
  y1: Math.min(size.height - 1, b.y1),
});

export function grow(b: Box, margin: number, size: { width: number; height: number }): Box {
  return clampBox({ x0: b.x0 - margin, y0: b.y0 - margin, x1: b.x1 + margin, y1: b.y1 + margin }, size);
}

export function unionBox(...boxes: (Box | undefined)[]): Box {
  const present = boxes.filter((b): b is Box => b !== undefined);
  if (!present.length) throw new Error('no box to unite');
  return {
    x0: Math.min(...present.map((b) => b.x0)),
    y0: Math.min(...present.map((b) => b.y0)),
    x1: Math.max(...present.map((b) => b.x1)),
    y1: Math.max(...present.map((b) => b.y1)),
  };
}

/** Mean colour of a box (inclusive bounds). */
export function meanRgb(f: RgbFrame, b: Box): Rgb {
  const sum = [0, 0, 0];
  let n = 0;
  for (let y = b.y0; y <= b.y1; y++) {
    for (let x = b.x0; x <= b.x1; x++) {
      const p = f.at(x, y);
      sum[0]! += p[0];
      sum[1]! += p[1];
      sum[2]! += p[2];
      n++;
    }
  }
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}

/** Per-channel alpha blend of `over` onto `under`, as a compositor would produce it. */
export function blend(under: Rgb, over: Rgb, alpha: number): Rgb {
  return [0, 1, 2].map((c) => under[c]! * (1 - alpha) + over[c]! * alpha) as Rgb;
}

export function maxChannelDiff(a: Rgb, b: Rgb): number {
  return Math.max(...[0, 1, 2].map((c) => Math.abs(a[c]! - b[c]!)));
}

export interface FrameDiff {
  /** Mean absolute difference per channel sample over the region. */
  mean: number;
  /** Largest mean absolute difference of any `block` x `block` square in the region (encoder noise averages out, a missing glyph does not). */
  maxBlock: number;
}

export function compareRegion(a: RgbFrame, b: RgbFrame, region: Box, block = 4): FrameDiff {
  let total = 0;
  let n = 0;
  for (let y = region.y0; y <= region.y1; y++) {
    for (let x = region.x0; x <= region.x1; x++) {
      const p = a.at(x, y);
      const q = b.at(x, y);
      total += Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]);
      n += 3;
    }
  }
  let maxBlock = 0;
  for (let by = region.y0; by + block - 1 <= region.y1; by += 2) {
    for (let bx = region.x0; bx + block - 1 <= region.x1; bx += 2) {
      let s = 0;
      for (let y = by; y < by + block; y++) {
        for (let x = bx; x < bx + block; x++) {
          const p = a.at(x, y);
          const q = b.at(x, y);
          s += Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]);
        }
      }
      maxBlock = Math.max(maxBlock, s / (block * block * 3));
    }
  }
  return { mean: total / n, maxBlock };
}

export interface ReferenceText {
  text: string;
  fontPx: number;
  /** drawtext colour with alpha, e.g. `white@1` or `0xFFFFFF@0.5`. */
  color: string;
  /** drawtext x/y expressions, free of commas (e.g. `(w-tw)/2`). */
  x: string;
  y: string;
  shadow?: { color: string; x: number; y: number };
  /** drawtext's expansion mode; `none` (the default here) draws the text as it is. */
  expansion?: 'none' | 'normal';
}

/**
 * The frame at `seconds` of `input` with the text drawn by plain ffmpeg: text from a file, expansion off,
 * our own filter string, no re-encode. It is what "drawn literally" looks like.
 */
export function referenceFrame(input: string, seconds: number, ref: ReferenceText, size: { width: number; height: number }): Promise<RgbFrame> {
  const shadow = ref.shadow ? `:shadowcolor=${ref.shadow.color}:shadowx=${ref.shadow.x}:shadowy=${ref.shadow.y}` : '';
  // The script is read with -filter_script, so only filtergraph escaping could matter; these paths need none.
  const graph = `drawtext=fontfile=${FONT}:textfile=text.txt:expansion=${ref.expansion ?? 'none'}:fontsize=${ref.fontPx}:fontcolor=${ref.color}:x=${ref.x}:y=${ref.y}${shadow}`;
  return filteredFrame(input, seconds, graph, new Map([['text.txt', ref.text]]), size);
}

/**
 * The frame at `seconds` of `input` through a filter graph, unencoded (raw RGB): `files` (name -> UTF-8 content) are
 * written next to the graph, which is run from that folder, so relative textfile= names find them.
 */
export async function filteredFrame(
  input: string,
  seconds: number,
  graph: string,
  files: Map<string, string>,
  size: { width: number; height: number },
): Promise<RgbFrame> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-ref-'));
  try {
    for (const [name, content] of files) writeFileSync(path.join(dir, name), content, 'utf8');
    writeFileSync(path.join(dir, 'filter.txt'), `${graph},select=gte(t\\,${seconds})`);
    const { stdout } = await run(
      FFMPEG,
      [
        '-v',
        'error',
        '-i',
        path.resolve(input),
        '-filter_script:v',
        'filter.txt',
        '-vsync',
        '0',
        '-frames:v',
        '1',
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        'pipe:1',
      ],
      { cwd: dir, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
    );
    const expected = size.width * size.height * 3;
    if (stdout.length !== expected) throw new Error(`reference decoded ${stdout.length} bytes, expected ${expected}`);
    return {
      width: size.width,
      height: size.height,
      data: stdout,
      at: (x, y) => {
        const i = (y * size.width + x) * 3;
        return [stdout[i]!, stdout[i + 1]!, stdout[i + 2]!];
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function durationOf(file: string): Promise<number> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

// m3u8-parser is CommonJS without type declarations; require it and type the part used here.
export interface ParsedPlaylist {
  segments: Array<{ uri: string; duration: number }>;
  targetDuration?: number;
  endList?: boolean;
  playlistType?: string;
}
const { Parser } = createRequire(import.meta.url)('m3u8-parser') as {
  Parser: new () => { push(text: string): void; end(): void; manifest: ParsedPlaylist };
};

export function parsePlaylist(file: string): ParsedPlaylist {
  const parser = new Parser();
  parser.push(readFileSync(file, 'utf8'));
  parser.end();
  return parser.manifest;
}

/**
 * An executable stand-in for ffmpeg (for WMARK_FFMPEG): logs every invocation to `log`, optionally sleeps before
 * segment renders (to catch a job mid-way) and fails the render of one segment while `failFlag` exists.
 */
export function ffmpegWrapper(dir: string, options: { log: string; sleepPerSegment?: number; failSegment?: string; failFlag?: string }): string {
  const file = path.join(dir, 'ffmpeg-wrapper.sh');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const lines = ['#!/bin/sh', `printf '%s\\n' "$*" >> ${q(options.log)}`, 'render=""', 'for a in "$@"; do case "$a" in *.ts.part) render="$a";; esac; done'];
  if (options.failSegment && options.failFlag) {
    lines.push(
      `case "$render" in *${options.failSegment}.part) if [ -e ${q(options.failFlag)} ]; then echo "simulated encoder failure on ${options.failSegment}" >&2; exit 1; fi;; esac`,
    );
  }
  if (options.sleepPerSegment) lines.push(`if [ -n "$render" ]; then sleep ${options.sleepPerSegment}; fi`);
  lines.push(`exec ${q(FFMPEG)} "$@"`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Lines of a wrapper log that were libx264 encodes (real work). */
export function loggedEncodes(log: string): string[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l.includes('libx264'));
}

/** Bounding box of pixels inside `region` that differ from `background` by more than `threshold` (sum over channels). */
export function diffBoxIn(f: RgbFrame, background: Rgb, region: Box, threshold = 60): (Box & { count: number }) | undefined {
  return diffBox(f, background, threshold, region);
}

/** Bounding box of pixels within `tolerance` (max channel difference) of `colour`. */
export function colourBox(
  f: RgbFrame,
  colour: Rgb,
  tolerance: number,
  region: Box = { x0: 0, y0: 0, x1: f.width - 1, y1: f.height - 1 },
): (Box & { count: number }) | undefined {
  let x0 = Infinity,
    y0 = Infinity,
    x1 = -1,
    y1 = -1,
    count = 0;
  for (let y = region.y0; y <= region.y1; y++) {
    for (let x = region.x0; x <= region.x1; x++) {
      if (maxChannelDiff(f.at(x, y), colour) <= tolerance) {
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

/** Boxes of the text lines in a frame: runs of rows holding ink (pixels off `background`), top to bottom. */
export function lineBoxes(f: RgbFrame, background: Rgb, threshold = 60): (Box & { count: number })[] {
  const whole = { x0: 0, x1: f.width - 1 };
  const inked = Array.from({ length: f.height }, (_, y) => diffBoxIn(f, background, { ...whole, y0: y, y1: y }, threshold) !== undefined);
  const boxes: (Box & { count: number })[] = [];
  for (let y = 0; y < f.height; y++) {
    if (!inked[y] || (y > 0 && inked[y - 1])) continue;
    let end = y;
    while (end + 1 < f.height && inked[end + 1]) end++;
    boxes.push(diffBoxIn(f, background, { ...whole, y0: y, y1: end }, threshold)!);
  }
  return boxes;
}

/**
 * Mean absolute luma difference (0..255) between same-sized crops of two frames, each at its own top-left corner.
 * Luma only: on yuv420p video the chroma of a glyph's edge depends on whether it lands on an even or odd pixel.
 */
export function cropDifference(a: RgbFrame, aBox: Box, b: RgbFrame, bBox: Box): number {
  const w = Math.max(aBox.x1 - aBox.x0, bBox.x1 - bBox.x0) + 1;
  const h = Math.max(aBox.y1 - aBox.y0, bBox.y1 - bBox.y0) + 1;
  const luma = ([r, g, b]: Rgb) => 0.299 * r + 0.587 * g + 0.114 * b;
  let sum = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const p = a.at(Math.min(aBox.x0 + x, a.width - 1), Math.min(aBox.y0 + y, a.height - 1));
      const q = b.at(Math.min(bBox.x0 + x, b.width - 1), Math.min(bBox.y0 + y, b.height - 1));
      sum += Math.abs(luma(p) - luma(q));
    }
  }
  return sum / (w * h);
}
