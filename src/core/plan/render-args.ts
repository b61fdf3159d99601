// The ffmpeg arguments that render watermarked segments (one viewer, or several sharing one decode) and join finished segments into an mp4.
import { type EncodeOptions, x264Gop } from './x264.js';

/** An output's last options: 4:2:0 video in MPEG-TS, timestamps as they came (no mux delay added). */
const YUV_TS_OUTPUT = ['-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts'] as const;

export interface SegmentRenderPlan {
  input: string;
  output: string;
  /** File holding the filtergraph (read with -filter_script, so no shell or argv quoting is involved). */
  filterScript: string;
  gop: number;
  threads: number;
  encode: EncodeOptions;
  hasAudio: boolean;
}

/** Re-encodes one working segment with the watermark, keeping its timestamps so segments join seamlessly. */
export function segmentRenderArgs(plan: SegmentRenderPlan): string[] {
  const threads = String(plan.threads);
  // -threads before -i limits the decoder, after it the filters and encoder; both are needed for a truly single-threaded worker.
  return [
    '-y',
    '-copyts',
    '-threads',
    threads,
    '-i',
    plan.input,
    '-threads',
    threads,
    '-filter_script:v',
    plan.filterScript,
    '-map',
    '0:v:0',
    ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []),
    '-c:v',
    'libx264',
    '-preset',
    plan.encode.preset,
    '-crf',
    String(plan.encode.crf),
    ...x264Gop(plan.gop),
    ...YUV_TS_OUTPUT,
    plan.output,
  ];
}

/** Viewers per shared render: each adds an encoder to one process, so its memory and its run time grow with them. */
export const MAX_SHARED_RENDERS = 8;

export interface SharedSegmentRenderPlan extends Omit<SegmentRenderPlan, 'output' | 'filterScript'> {
  /** One output per viewer, each with its own filter chain over the one decoded input ('null' draws nothing). */
  outputs: { output: string; chain: string }[];
  /** Where the caller writes `sharedFilterGraph(chains)` (read with -filter_complex_script). */
  filterScript: string;
}

/** The filtergraph of a shared render: the decoded frames split once per viewer, each through its own chain. */
export function sharedFilterGraph(chains: string[]): string {
  const labels = chains.map((_, j) => `[d${j}]`).join('');
  return [`[0:v:0]split=${chains.length}${labels}`, ...chains.map((chain, j) => `[d${j}]${chain}[v${j}]`)].join(';\n');
}

/**
 * One working segment decoded once for several viewers of the same video: the frames are split, each copy gets its
 * viewer's drawing and its own encode, with the same encoder settings as segmentRenderArgs (so each output matches
 * what a render of its own would give). `-threads` is per output, so every encoder gets it.
 */
export function sharedSegmentRenderArgs(plan: SharedSegmentRenderPlan): string[] {
  const threads = String(plan.threads);
  return [
    '-y',
    '-copyts',
    '-threads',
    threads,
    '-i',
    plan.input,
    '-filter_complex_script',
    plan.filterScript,
    ...plan.outputs.flatMap((o, j) => [
      '-map',
      `[v${j}]`,
      ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []),
      '-threads',
      threads,
      '-c:v',
      'libx264',
      '-preset',
      plan.encode.preset,
      '-crf',
      String(plan.encode.crf),
      ...x264Gop(plan.gop),
      ...YUV_TS_OUTPUT,
      o.output,
    ]),
  ];
}

/** Joins finished MPEG-TS segments into an mp4 by stream copy (no second encode). */
export function joinMp4Args(segmentFiles: string[], output: string, hasAudio: boolean): string[] {
  return [
    '-y',
    '-i',
    `concat:${segmentFiles.join('|')}`,
    '-map',
    '0:v:0',
    ...(hasAudio ? ['-map', '0:a:0'] : []),
    '-c',
    'copy',
    ...(hasAudio ? ['-bsf:a', 'aac_adtstoasc'] : []),
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    output,
  ];
}
