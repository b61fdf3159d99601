// Plans for band rendering: where a band lies in macroblock rows, the patched x264's arguments for the shared encode
// and for a viewer's band encode, ffmpeg's arguments that cut (and mark) the band's source rows, and the qpfile that
// gives the band encode the shared encode's frame types.
import { WmarkError } from '../errors.js';
import type { BandRows } from '../h264/splice-band.js';

/** Macroblock rows above, inside and below the band: the clamp needs 3 or more in each region that exists. */
const MIN_REGION_ROWS = 3;

export interface BandEncodeOptions {
  preset: string;
  crf: number;
  /** Frames between IDR frames (fixed GOP: segments cut on them). */
  gop: number;
  refs: number;
  /** x264 threads of the shared encode; a band encode runs one (it is small, and many run side by side). */
  threads?: number;
  /**
   * Let x264 start a GOP at a scene cut. Off for HLS, whose segments cut on a fixed GOP (as the ingest encodes); the
   * band encode copies whatever frame types the shared encode chose either way.
   */
  sceneCuts?: boolean;
}

/** The band of `heightPx` pixels (rounded up to whole macroblock rows) at the top or bottom of a picture. */
export function bandRowsAt(where: 'top' | 'bottom', pictureHeight: number, heightPx: number): BandRows {
  const rows = Math.ceil(pictureHeight / 16);
  const size = Math.max(MIN_REGION_ROWS, Math.ceil(heightPx / 16));
  const band = where === 'top' ? { top: 0, bottom: size } : { top: rows - size, bottom: rows };
  checkBandRows(band, pictureHeight);
  return band;
}

export function checkBandRows(band: BandRows, pictureHeight: number): void {
  checkBands([band], pictureHeight);
}

/**
 * Several bands of one shared encode: sorted top to bottom, not overlapping, each band and each region above, between
 * and below them 3 or more macroblock rows (a region may be empty only at the picture's top or bottom edge).
 */
export function checkBands(bands: readonly BandRows[], pictureHeight: number): void {
  const rows = Math.ceil(pictureHeight / 16);
  if (bands.length === 0) throw new WmarkError('SPLICE_MISMATCH', 'a shared encode needs at least one band');
  const edges = [...bands.flatMap((band) => [band.top, band.bottom]), rows];
  let previous = 0;
  edges.forEach((edge, i) => {
    const size = edge - previous;
    const emptyEdge = size === 0 && (i === 0 || i === edges.length - 1);
    if (!Number.isInteger(edge) || edge > rows || (size < MIN_REGION_ROWS && !emptyEdge)) {
      const list = bands.map((band) => `${band.top}-${band.bottom}`).join(', ');
      throw new WmarkError(
        'SPLICE_MISMATCH',
        `band rows ${list} do not fit ${rows} macroblock rows (sorted, 3+ rows in each band and beside and between them)`,
      );
    }
    previous = edge;
  });
}
/**
 * Whether x264's --fullhelp text names the several-band form of --band-rows (`top,bottom[,top,bottom...]`) that a
 * shared encode with a top and a bottom band needs; an older patch took one band (`top,bottom`).
 */
export function speaksSeveralBands(help: string): boolean {
  return /--band-rows\s+<top,bottom\[,top,bottom/.test(help);
}

/** Settings both encodes share: the slice data of one must decode under the other's PPS and reference structure. */
function common(options: BandEncodeOptions): string[] {
  return [
    '--preset',
    options.preset,
    '--crf',
    String(options.crf),
    '--bframes',
    '0',
    '--weightp',
    '0',
    '--ref',
    String(options.refs),
    '--keyint',
    String(options.gop),
    '--min-keyint',
    String(options.gop),
    '--aud',
    ...(options.threads ? ['--threads', String(options.threads)] : []),
  ];
}

/**
 * The shared encode: slices split at every band's rows and no macroblock's motion reading another region's rows, so
 * any one band's slice can be replaced. One band, or several (top to bottom, as `checkBands` takes them).
 */
export function sharedEncodeArgs(input: string, output: string, bands: BandRows | readonly BandRows[], options: BandEncodeOptions): string[] {
  const list = Array.isArray(bands) ? bands : [bands as BandRows];
  const edges = list.map((band) => `${band.top},${band.bottom}`).join(',');
  return [...common(options), ...(options.sceneCuts ? [] : ['--scenecut', '0']), '--band-rows', edges, '-o', output, input];
}

/**
 * A viewer's band encode: its own rows only, the shared encode's frame types forced through `qpfile`. One thread:
 * x264's frame threads cost a small band more than they save (about 6 % more CPU with two at 720p), and a machine's
 * cores are better spent on other viewers' bands.
 */
export function bandEncodeArgs(input: string, output: string, qpfile: string, options: BandEncodeOptions): string[] {
  return [...common({ ...options, threads: 1 }), '--band-self', '--scenecut', '0', '--qpfile', qpfile, '-o', output, input];
}

/**
 * ffmpeg arguments that cut the band's rows out of a y4m source of `width` x `height`, `filter` (a mark) drawn on
 * them, as y4m. A band that reaches below the picture (a height that is not a multiple of 16) is padded to whole
 * macroblock rows: the stream's cropping hides those rows.
 */
export function bandSourceArgs(input: string, output: string, band: BandRows, size: { width: number; height: number }, filter?: string): string[] {
  const rows = 16 * (band.bottom - band.top);
  const visible = Math.min(rows, size.height - 16 * band.top);
  const cut = `crop=${size.width}:${visible}:0:${16 * band.top}${visible < rows ? `,pad=${size.width}:${rows}:0:0` : ''}`;
  return ['-y', '-i', input, '-vf', filter ? `${cut},${filter}` : cut, '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe', output];
}

/** x264's qpfile for frame types: `I` IDR, `i` other I frame, `P`; QP -1 leaves the rate control to x264. */
export function qpfileFor(types: readonly string[]): string {
  return types.map((type, frame) => `${frame} ${type} -1\n`).join('');
}

/** Reference frames of every band encode: the shared encode and the viewers' band encodes must agree. */
export const BAND_REFS = 3;

/** Which macroblock rows a band's stored source rows hold, and the picture they were cut from. */
export interface BandCut {
  rows: BandRows;
  width: number;
  height: number;
}

/** Pixel rows of a band cut that lie inside the picture (a bottom band may reach into the cropped rows). */
function visibleRows(cut: BandCut): { offset: number; rows: number; visible: number } {
  const rows = 16 * (cut.rows.bottom - cut.rows.top);
  const offset = 16 * cut.rows.top;
  return { offset, rows, visible: Math.min(rows, cut.height - offset) };
}

/** The band's rows cut out of a picture of the title's size, padded to whole macroblock rows. */
function cropBand(cut: BandCut): string {
  const { offset, rows, visible } = visibleRows(cut);
  return `crop=${cut.width}:${visible}:0:${offset}${visible < rows ? `,pad=${cut.width}:${rows}:0:0` : ''}`;
}

/** Output options of a y4m file with every decoded frame, as it came (the encoders count frames, not timestamps). */
const Y4M_FRAMES = ['-vsync', 'passthrough', '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe'];

/**
 * How a band's source rows are kept: lossless Ut Video in NUT (exact timestamps, so a mark that moves over time is drawn
 * where a full render draws it). A viewer's render decodes them every time, and Ut Video decodes in about a third of the
 * CPU of lossless H.264 at the same size.
 */
const BAND_ROWS_OUTPUT = ['-vsync', 'passthrough', '-c:v', 'utvideo', '-pix_fmt', 'yuv420p', '-f', 'nut'] as const;

/**
 * ffmpeg arguments that decode a working segment once into the shared encode's input (y4m, whole frames) and each
 * band's source rows (kept as BAND_ROWS_OUTPUT, with the segment's timestamps).
 */
export function bandIngestArgs(input: string, y4m: string, cuts: readonly { cut: BandCut; output: string }[]): string[] {
  const split = `[0:v:0]split=${cuts.length + 1}[full]${cuts.map((_, i) => `[c${i}]`).join('')}`;
  const chains = cuts.map(({ cut }, i) => `[c${i}]${cropBand(cut)}[b${i}]`);
  return [
    '-y',
    '-copyts',
    '-i',
    input,
    '-filter_complex',
    [split, ...chains].join(';'),
    '-map',
    '[full]',
    ...Y4M_FRAMES,
    y4m,
    ...cuts.flatMap(({ output }, i) => ['-map', `[b${i}]`, ...BAND_ROWS_OUTPUT, output]),
  ];
}

/**
 * ffmpeg arguments that put a shared encode (raw H.264) into an HLS segment with the working segment's audio, in two
 * runs: the video alone with its first frame at `start` seconds (as in the working segment; raw H.264 has no
 * timestamps of its own), then with the working segment's audio at its own times. One picture per PES, AUD first.
 */
export function bandSegmentMuxArgs(
  video: string,
  working: string,
  output: string,
  plan: { start: number; fps: string; hasAudio: boolean; videoOnly: string },
): string[][] {
  const timed = [
    '-y',
    '-r',
    plan.fps,
    '-i',
    video,
    '-map',
    '0:v:0',
    '-c',
    'copy',
    '-output_ts_offset',
    plan.start.toFixed(6),
    '-muxdelay',
    '0',
    '-f',
    'mpegts',
  ];
  if (!plan.hasAudio) return [[...timed, output]];
  return [
    [...timed, plan.videoOnly],
    ['-y', '-copyts', '-i', plan.videoOnly, '-i', working, '-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', '-muxdelay', '0', '-f', 'mpegts', output],
  ];
}

/**
 * The filter a viewer's band source rows go through: the rows put back at their place in a picture of the title's
 * size (so the watermark's graph, written for whole frames, draws exactly where a full render draws), `graph`, and the
 * band's rows cut out again, padded to whole macroblock rows. Only blank rows are added: nothing is decoded.
 */
export function bandDrawFilter(cut: BandCut, graph: string): string {
  const { offset, visible } = visibleRows(cut);
  return `crop=${cut.width}:${visible}:0:0,pad=${cut.width}:${cut.height}:0:${offset},${graph},${cropBand(cut)}`;
}

/** ffmpeg arguments that draw on a band's source rows (`filterScript`: bandDrawFilter) into y4m for the band encode. */
export function bandDrawArgs(input: string, output: string, filterScript: string, threads: number): string[] {
  const t = String(threads);
  return ['-y', '-copyts', '-threads', t, '-i', input, '-threads', t, '-filter_script:v', filterScript, '-map', '0:v:0', ...Y4M_FRAMES, output];
}
