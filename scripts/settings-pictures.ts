// Draws the pictures of docs/settings.md: each example's settings go through the same validation (parseSettings) and
// drawing plan (watermarkGraph: drawtext for text, a rendition overlaid for an image) as a real watermark, and the
// bundled ffmpeg and font render them onto a small frame with a quarter grid and a red dot at each anchor, so the
// pictures show where text and logos really land. IMAGE examples draw a stand-in logo the script makes.
// Run: node --import tsx scripts/settings-pictures.ts [out-dir]   (default docs/img)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FALLBACK_FONT_METRICS, parseFontMetrics } from '../src/core/font-metrics.js';
import { readImageHeader } from '../src/core/image-header.js';
import { imageRenditionArgs } from '../src/core/plan/image-drawing.js';
import { escapeFilterValue } from '../src/core/plan/text-drawing.js';
import { watermarkGraph } from '../src/core/plan/watermark-graph.js';
import { parseSettings } from '../src/core/setting-schema.js';
import { type ImageRef, isVisible, type Setting } from '../src/core/setting-types.js';
import { locateTools } from '../src/ffmpeg/locate-tools.js';

export interface PictureExample {
  /** File name in the output folder (PNG). */
  name: string;
  /** Setting objects exactly as a request sends them. */
  settings: Record<string, unknown>[];
  /** Frames (seconds of the video timeline) shown side by side; one frame at 0 when unset. */
  times?: number[];
}

export const FRAME = { width: 480, height: 270 } as const;

export const EXAMPLES: PictureExample[] = [
  { name: 'defaults.png', settings: [{ content: 'alice@example.com' }] },
  {
    name: 'corners.png',
    settings: [
      { content: 'x 0.03, y 0.04, LEFT TOP', x: 0.03, y: 0.04, align: 'LEFT', verticalAlign: 'TOP', fontOpacity: 0.9 },
      { content: 'x 0.97, y 0.95, RIGHT BOTTOM', x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontOpacity: 0.9 },
    ],
  },
  {
    name: 'align.png',
    settings: [
      { content: 'align LEFT', x: 0.5, y: 0.25, align: 'LEFT', fontOpacity: 0.9 },
      { content: 'align CENTER', x: 0.5, y: 0.5, align: 'CENTER', fontOpacity: 0.9 },
      { content: 'align RIGHT', x: 0.5, y: 0.75, align: 'RIGHT', fontOpacity: 0.9 },
    ],
  },
  {
    name: 'vertical-align.png',
    settings: [
      { content: 'TOP', x: 0.2, y: 0.5, verticalAlign: 'TOP', fontOpacity: 0.9 },
      { content: 'MIDDLE', x: 0.5, y: 0.5, verticalAlign: 'MIDDLE', fontOpacity: 0.9 },
      { content: 'BOTTOM', x: 0.8, y: 0.5, verticalAlign: 'BOTTOM', fontOpacity: 0.9 },
    ],
  },
  {
    name: 'font-size.png',
    settings: [
      { content: 'fontSize 0.03', x: 0.05, y: 0.2, align: 'LEFT', fontSize: 0.03, fontOpacity: 0.9 },
      { content: 'fontSize 0.05 (default)', x: 0.05, y: 0.45, align: 'LEFT', fontSize: 0.05, fontOpacity: 0.9 },
      { content: 'fontSize 0.1', x: 0.05, y: 0.75, align: 'LEFT', fontSize: 0.1, fontOpacity: 0.9 },
    ],
  },
  {
    name: 'opacity-shadow.png',
    settings: [
      { content: 'fontOpacity 0.3 (default)', x: 0.5, y: 0.2, fontSize: 0.08 },
      { content: 'fontOpacity 1', x: 0.5, y: 0.45, fontSize: 0.08, fontOpacity: 1 },
      {
        content: 'shadow 0.8 at 0.1, 0.1',
        x: 0.5,
        y: 0.75,
        fontSize: 0.08,
        fontOpacity: 1,
        fontColor: 'FFD54F',
        shadowOpacity: 0.8,
        shadowOffsetX: 0.1,
        shadowOffsetY: 0.1,
      },
    ],
  },
  {
    name: 'multiline.png',
    settings: [{ content: 'Alice Example\nalice@example.com\nsession 4711', x: 0.95, y: 0.9, align: 'RIGHT', verticalAlign: 'BOTTOM', fontOpacity: 0.9 }],
  },
  {
    name: 'animation.png',
    settings: [{ content: 'moving', x: 0.1, y: 0.2, fontSize: 0.1, fontOpacity: 0.9, animation: { toX: 0.9, toY: 0.8, startTime: 2, endTime: 6 } }],
    times: [0, 4, 8],
  },
  {
    name: 'image-logo.png',
    settings: [
      { type: 'IMAGE', content: 'https://cdn.example.com/logo.png', x: 0.03, y: 0.04, align: 'LEFT', verticalAlign: 'TOP' },
      { content: 'for alice@example.com', x: 0.97, y: 0.95, align: 'RIGHT', verticalAlign: 'BOTTOM', fontOpacity: 0.9 },
    ],
  },
  {
    name: 'image-width-opacity.png',
    settings: [
      { type: 'IMAGE', content: 'logo.png', x: 0.17, y: 0.45, width: 0.1 },
      { type: 'IMAGE', content: 'logo.png', x: 0.5, y: 0.45 },
      { type: 'IMAGE', content: 'logo.png', x: 0.83, y: 0.45, opacity: 0.4 },
      { content: 'width 0.1', x: 0.17, y: 0.75, fontOpacity: 0.9 },
      { content: 'width 0.2 (default)', x: 0.5, y: 0.75, fontOpacity: 0.9 },
      { content: 'opacity 0.4', x: 0.83, y: 0.75, fontOpacity: 0.9 },
    ],
  },
];

/** The stand-in logo: "LOGO" on a blue 200x100 card with a transparent margin of 20 px (a PNG with alpha). */
function makeLogo(ffmpeg: string, font: string, file: string): ImageRef {
  const card = [
    'color=c=0x1E88E5:s=200x100:d=1',
    'format=rgba',
    `drawtext=fontfile=${escapeFilterValue(font)}:text=LOGO:fontsize=56:fontcolor=white:x=(w-tw)/2:y=(h-th)/2`,
    'pad=240:140:20:20:color=0x00000000',
  ].join(',');
  execFileSync(ffmpeg, ['-v', 'error', '-y', '-f', 'lavfi', '-i', card, '-frames:v', '1', '-pix_fmt', 'rgba', file], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const bytes = readFileSync(file);
  const header = readImageHeader(bytes);
  if (!header.ok) throw new Error(`the stand-in logo ${header.problem}`);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), format: header.format, width: header.width, height: header.height };
}

/** Renders one example to a PNG at `output` with the bundled ffmpeg and font. */
export function renderPicture(example: PictureExample, output: string): void {
  const parsed = parseSettings(example.settings, { apiVersion: '2.0' });
  if (!parsed.ok) throw new Error(`${example.name}: ${parsed.issues.join('; ')}`);
  const tools = locateTools({ ffmpeg: process.env.WMARK_FFMPEG, font: process.env.WMARK_FONT });
  const metrics = parseFontMetrics(readFileSync(tools.font.path)) ?? FALLBACK_FONT_METRICS;
  const times = example.times ?? [0];
  const { width: W, height: H } = FRAME;
  const work = mkdtempSync(path.join(os.tmpdir(), 'wmark-pictures-'));
  try {
    // Every IMAGE draws the stand-in logo, as a request would once the logo was fetched and checked.
    const logo = parsed.value.some((s) => s.type === 'IMAGE') ? makeLogo(tools.ffmpeg.path, tools.font.path, path.join(work, 'logo-source.png')) : undefined;
    const settings: Setting[] = parsed.value.map((s) => (s.type === 'IMAGE' ? { ...s, image: logo! } : s));
    const drawn = watermarkGraph({ settings, fontFile: tools.font.path, metrics, frame: FRAME, timeOrigin: 0 });
    for (const file of drawn.files) writeFileSync(path.join(work, file.name), file.content, 'utf8');
    for (const image of drawn.images) {
      execFileSync(tools.ffmpeg.path, imageRenditionArgs(path.join(work, 'logo-source.png'), path.join(work, image.name), image.size), {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
    const dot = (x: number, y: number) => `drawbox=x=${Math.round(x * W) - 3}:y=${Math.round(y * H) - 3}:w=7:h=7:color=0xFF3B30@1:t=fill`;
    // Anchors where each setting starts (and ends, when it moves): the dot is the point x, y names.
    const dots = settings.filter(isVisible).flatMap((s) => (s.animation ? [dot(s.x, s.y), dot(s.animation.toX, s.animation.toY)] : [dot(s.x, s.y)]));
    const select = times.map((t) => `eq(n\\,${t})`).join('+');
    // The watermark's graph starts on the gridded frames and ends with the drawn ones; the dots and tiling follow.
    const graph = [
      `color=c=0x25323f:s=${W}x${H}:r=1:d=${Math.max(...times) + 1},drawgrid=w=iw/4:h=ih/4:t=1:c=0xFFFFFF@0.18[base]`,
      `[base]${[drawn.graph, ...dots, `select='${select}'`, ...(times.length > 1 ? [`pad=iw+4:ih:0:0:color=0x0b1016`, `tile=${times.length}x1`] : []), 'format=rgb24'].join(',')}`,
    ].join(';');
    writeFileSync(path.join(work, 'graph.txt'), `${graph}[out]`);
    execFileSync(
      tools.ffmpeg.path,
      ['-v', 'error', '-y', '-filter_complex_script', 'graph.txt', '-map', '[out]', '-frames:v', '1', '-vsync', '0', path.resolve(output)],
      {
        cwd: work,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.resolve(process.argv[2] ?? 'docs/img');
  mkdirSync(out, { recursive: true });
  for (const example of EXAMPLES) {
    renderPicture(example, path.join(out, example.name));
    console.log(path.join(out, example.name));
  }
}
