// Pure ffmpeg argument plans: ingest normalisation, per-segment watermark render, mp4 join, and the drawtext filter graph.
import type { FontMetrics } from './font-metrics.js';
import type { TextSetting } from './setting-types.js';

export interface EncodeOptions {
  preset: string;
  crf: number;
}

export const SEGMENT_SECONDS = 4;

/** Frames per working segment: the GOP length, so every segment is exactly one closed GOP (the last may be shorter). */
export function framesPerSegment(fps: { num: number; den: number }, seconds = SEGMENT_SECONDS): number {
  return Math.max(1, Math.round((seconds * fps.num) / fps.den));
}

export function x264Gop(gop: number): string[] {
  // Fixed GOPs, no scene-cut keyframes, closed GOPs: segment boundaries land on IDR frames and each segment decodes alone.
  return ['-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0', '-x264-params', 'open-gop=0'];
}

/**
 * The opening of a video is cut into shorter segments (1 s, 1 s, 2 s, then one GOP each), so a watermark is playable
 * once its first second is rendered rather than its first four, and the next segments follow in time.
 */
export const LEAD_SEGMENT_SECONDS = [1, 1, 2] as const;

/**
 * Frames of the lead segments at this rate: they add up to exactly one GOP, so every later boundary falls on a
 * multiple of the GOP. Empty when the rate is too low to cut a GOP into three.
 */
export function leadSegmentFrames(fps: { num: number; den: number }): number[] {
  const gop = framesPerSegment(fps);
  const first = Math.max(1, Math.round(fps.num / fps.den));
  const third = gop - 2 * first;
  return third >= 1 ? [first, first, third] : [];
}

/**
 * Frame counts of a video's segments: with `lead`, the lead segments, then one GOP each; the last holds what is left.
 * `totalFrames` is the number of frames the encode produced.
 */
export function segmentFrameCounts(fps: { num: number; den: number }, totalFrames: number, lead: boolean): number[] {
  const gop = framesPerSegment(fps);
  const counts: number[] = [];
  let left = totalFrames;
  for (const n of [...(lead ? leadSegmentFrames(fps) : []), ...new Array<number>(Math.ceil(totalFrames / gop)).fill(gop)]) {
    if (left <= 0) break;
    counts.push(Math.min(n, left));
    left -= n;
  }
  return counts;
}

export interface IngestPlan {
  source: string;
  outDir: string;
  fps: { num: number; den: number };
  width: number;
  height: number;
  hasAudio: boolean;
  encode: EncodeOptions;
  /** Cut the opening into the shorter lead segments (forensic videos keep one GOP per segment: see ingest). */
  lead: boolean;
  /** With lead: an upper bound on the frames the source can yield (the muxer's list of cuts ends there). */
  maxFrames?: number;
}

/** Frame numbers where a new segment starts: after each lead segment, then every GOP, up to `maxFrames`. */
export function segmentBoundaries(lead: number[], gop: number, maxFrames = 0): number[] {
  const cuts: number[] = [];
  let at = 0;
  for (const n of lead) cuts.push((at += n));
  while ((at += gop) < maxFrames) cuts.push(at);
  return cuts;
}

/** The working form: CFR H.264 (high quality, it is encoded again per watermark) + AAC, cut into closed-GOP MPEG-TS segments. */
export function ingestArgs(plan: IngestPlan): string[] {
  const gop = framesPerSegment(plan.fps);
  const segmentSeconds = (gop * plan.fps.den) / plan.fps.num;
  const halfFrame = plan.fps.den / plan.fps.num / 2;
  const lead = plan.lead && plan.maxFrames ? leadSegmentFrames(plan.fps) : [];
  // Always scaled to the recorded size, rounded down to even (4:2:0 needs it): every segment then has the size the
  // record says, even when a source changes resolution mid-stream. ffmpeg passes frames through when nothing changes.
  const filters = [`fps=${plan.fps.num}/${plan.fps.den}`, `scale=${plan.width - (plan.width % 2)}:${plan.height - (plan.height % 2)}`, 'format=yuv420p'];
  // Lead boundaries are forced keyframes; x264 counts its GOP from the last keyframe, so forcing every multiple of the
  // GOP as well keeps later boundaries where the fixed GOP puts them. The muxer then cuts at exact frame numbers. Its
  // list has to be finite, so it runs well past the probed length (frames beyond it would join the last segment).
  const cuts = lead.length
    ? ['-force_key_frames', `expr:eq(n,${lead[0]})+eq(n,${lead[0]! + lead[1]!})+not(mod(n,${gop}))`,
       '-segment_frames', segmentBoundaries(lead, gop, plan.maxFrames).join(',')]
    : ['-segment_time', segmentSeconds.toFixed(6), '-segment_time_delta', halfFrame.toFixed(6)];
  return [
    '-y', '-i', plan.source,
    '-map', '0:v:0', ...(plan.hasAudio ? ['-map', '0:a:0'] : []),
    '-vf', filters.join(','),
    // fastdecode: the working copy is only ever decoded by wmark, and decoding is ~40 % of every segment render.
    '-c:v', 'libx264', '-preset', plan.encode.preset, '-tune', 'fastdecode', '-crf', String(plan.encode.crf), ...x264Gop(gop),
    ...(plan.hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-ar', '48000'] : []),
    '-sn', '-dn', '-map_metadata', '-1',
    '-f', 'segment', '-segment_format', 'mpegts', ...cuts,
    '-segment_list', `${plan.outDir}/segments.csv`, '-segment_list_type', 'csv',
    `${plan.outDir}/seg_%05d.ts`,
  ];
}

/** Reads the segment muxer's CSV list (name,start,end) into per-segment durations. */
export function parseSegmentList(csv: string): { file: string; duration: number }[] {
  return csv
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [file, start, end] = line.split(',');
      return { file: file!, duration: Number(end) - Number(start) };
    });
}

export function segmentFileName(index: number): string {
  return `seg_${String(index).padStart(5, '0')}.ts`;
}

/** Escapes a value for an ffmpeg filter option inside a filtergraph (option level, then graph level). */
export function escapeFilterValue(value: string): string {
  const optionLevel = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return optionLevel.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

const num = (n: number): string => {
  // Expressions must never see exponent notation or -0.
  const fixed = Number(n.toFixed(6));
  return Object.is(fixed, -0) ? '0' : fixed.toString();
};

export interface DrawtextInput {
  setting: TextSetting;
  /** Path of a file holding the exact text (drawn with expansion off, so nothing in it is interpreted). */
  textFile: string;
  fontFile: string;
  frameHeight: number;
  /** Presentation time of the video's first frame: drawtext's t minus this is the position on the video timeline. */
  timeOrigin: number;
}

const H_FACTOR = { LEFT: 0, CENTER: 0.5, RIGHT: 1 } as const;
const V_FACTOR = { TOP: 0, MIDDLE: 0.5, BOTTOM: 1 } as const;

/** Anchor coordinate as a drawtext expression: constant, or a clamped linear move over [startTime, endTime]. */
function anchorExpr(from: number, to: number | undefined, anim: TextSetting['animation'], timeOrigin: number): string {
  if (!anim || to === undefined || to === from) return num(from);
  const span = anim.endTime - anim.startTime;
  const progress = `clip((t-${num(timeOrigin + anim.startTime)})/${num(span)},0,1)`;
  return `(${num(from)}+${num(to - from)}*${progress})`;
}

export function fontPixels(setting: TextSetting, frameHeight: number): number {
  return Math.max(1, Math.round(setting.fontSize * frameHeight));
}

export function drawtextFilter(input: DrawtextInput): string {
  const { setting: s } = input;
  const size = fontPixels(s, input.frameHeight);
  const x = `W*${anchorExpr(s.x, s.animation?.toX, s.animation, input.timeOrigin)}-tw*${H_FACTOR[s.align]}`;
  const y = `H*${anchorExpr(s.y, s.animation?.toY, s.animation, input.timeOrigin)}-th*${V_FACTOR[s.verticalAlign]}`;
  const shadow = shadowOf(s, size);
  return drawtext({ fontFile: input.fontFile, textFile: input.textFile, size, color: colour(s.fontColor, s.fontOpacity), x, y, shadow });
}

interface Drawtext {
  fontFile: string;
  textFile: string;
  size: number;
  color: string;
  x: string;
  y: string;
  shadow?: { color: string; dx: number; dy: number } | undefined;
}

function drawtext(d: Drawtext): string {
  const opts = [
    `fontfile=${escapeFilterValue(d.fontFile)}`,
    `textfile=${escapeFilterValue(d.textFile)}`,
    'expansion=none',
    `fontsize=${d.size}`,
    `fontcolor=${d.color}`,
    `x=${escapeFilterValue(d.x)}`,
    `y=${escapeFilterValue(d.y)}`,
  ];
  if (d.shadow) opts.push(`shadowcolor=${d.shadow.color}`, `shadowx=${d.shadow.dx}`, `shadowy=${d.shadow.dy}`);
  return `drawtext=${opts.join(':')}`;
}

const colour = (rgb: string, opacity: number) => `0x${rgb}@${num(opacity)}`;

function shadowOf(s: TextSetting, size: number): Drawtext['shadow'] {
  const dx = Math.round(s.shadowOffsetX * size);
  const dy = Math.round(s.shadowOffsetY * size);
  return s.shadowOpacity > 0 && (dx !== 0 || dy !== 0) ? { color: colour(s.shadowColor, s.shadowOpacity), dx, dy } : undefined;
}

export interface TextFile {
  /** File name, relative to ffmpeg's working folder. */
  name: string;
  content: string;
}

export interface TextDrawing {
  /** The files the filters read their text from; the caller writes them (UTF-8) before running ffmpeg. */
  files: TextFile[];
  filters: string[];
}

export interface TextDrawingInput extends Omit<DrawtextInput, 'textFile'> {
  /** The setting's position in the watermark: names its text files (text_<i>.txt, or text_<i>_<line>.txt). */
  index: number;
  metrics: FontMetrics;
  /** Folder the filters read the text files from (absolute, for a graph run elsewhere); default: ffmpeg's working folder. */
  textDir?: string;
}

/**
 * The drawtext filters for one TEXT setting. One line is one drawtext, its glyphs' box placed at the anchor. drawtext
 * lays several lines out left-aligned only, so multi-line text gets one drawtext per line, each line aligned on its own
 * (LEFT, CENTER, RIGHT) at the anchor, on baselines one font line pitch (ascent + descent + line gap) apart; the block
 * (first line's ascent to last line's descent) sits at the anchor by verticalAlign. All shadows are drawn before any
 * text, as drawtext does for one string. Empty lines draw nothing but keep their row.
 */
export function textDrawing(input: TextDrawingInput): TextDrawing {
  const { setting: s, index, metrics } = input;
  const lines = s.content.split('\n');
  if (lines.length === 1) {
    const name = `text_${index}.txt`;
    return { files: [{ name, content: s.content }], filters: [drawtextFilter({ ...input, textFile: inDir(input.textDir, name) })] };
  }
  const size = fontPixels(s, input.frameHeight);
  const pitch = (metrics.ascent + metrics.descent + metrics.lineGap) * size;
  const blockHeight = (lines.length - 1) * pitch + (metrics.ascent + metrics.descent) * size;
  const anchorX = `W*${anchorExpr(s.x, s.animation?.toX, s.animation, input.timeOrigin)}`;
  const top = `H*${anchorExpr(s.y, s.animation?.toY, s.animation, input.timeOrigin)}-${num(blockHeight * V_FACTOR[s.verticalAlign])}`;
  const placed = lines.flatMap((line, j) => {
    if (line === '') return [];
    // drawtext puts its first baseline `ascent` (the line's own tallest glyph) below y.
    const baseline = num(j * pitch + metrics.ascent * size);
    return [{ name: `text_${index}_${j}.txt`, content: line, x: `${anchorX}-tw*${H_FACTOR[s.align]}`, y: `${top}+${baseline}-ascent` }];
  });
  const shadow = shadowOf(s, size);
  const base = { fontFile: input.fontFile, size };
  const shadows = shadow
    ? placed.map((p) => drawtext({ ...base, textFile: inDir(input.textDir, p.name), color: shadow.color, x: `${p.x}+${shadow.dx}`, y: `${p.y}+${shadow.dy}` }))
    : [];
  const texts = placed.map((p) => drawtext({ ...base, textFile: inDir(input.textDir, p.name), color: colour(s.fontColor, s.fontOpacity), x: p.x, y: p.y }));
  return { files: placed.map(({ name, content }) => ({ name, content })), filters: [...shadows, ...texts] };
}

const inDir = (dir: string | undefined, name: string) => (dir ? `${dir.replace(/\/+$/, '')}/${name}` : name);

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
    '-y', '-copyts', '-threads', threads, '-i', plan.input,
    '-threads', threads, '-filter_script:v', plan.filterScript,
    '-map', '0:v:0', ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []),
    '-c:v', 'libx264', '-preset', plan.encode.preset, '-crf', String(plan.encode.crf), ...x264Gop(plan.gop),
    '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts', plan.output,
  ];
}

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
    '-y', '-copyts', '-threads', threads, '-i', plan.input,
    '-filter_complex_script', plan.filterScript,
    ...plan.outputs.flatMap((o, j) => [
      '-map', `[v${j}]`, ...(plan.hasAudio ? ['-map', '0:a:0', '-c:a', 'copy'] : []),
      '-threads', threads,
      '-c:v', 'libx264', '-preset', plan.encode.preset, '-crf', String(plan.encode.crf), ...x264Gop(plan.gop),
      '-pix_fmt', 'yuv420p', '-muxdelay', '0', '-f', 'mpegts', o.output,
    ]),
  ];
}

/** Joins finished MPEG-TS segments into an mp4 by stream copy (no second encode). */
export function joinMp4Args(segmentFiles: string[], output: string, hasAudio: boolean): string[] {
  return [
    '-y', '-i', `concat:${segmentFiles.join('|')}`,
    '-map', '0:v:0', ...(hasAudio ? ['-map', '0:a:0'] : []),
    '-c', 'copy', ...(hasAudio ? ['-bsf:a', 'aac_adtstoasc'] : []),
    '-movflags', '+faststart', '-f', 'mp4', output,
  ];
}

export interface SamplePlan {
  output: string;
  width: number;
  height: number;
  seconds: number;
  fps: number;
  /**
   * 'natural': a zooming fractal with film grain and a tone (motion, texture, audio); 'flat': one colour, for pixel
   * tests; 'scene': the demo's landscape at dusk (colour gradients, a rising sun, hills drifting at two speeds).
   */
  kind: 'natural' | 'flat' | 'scene';
  color?: string;
  audio?: boolean;
}

/**
 * The demo's scene: a dusk sky (a vertical colour gradient), a soft sun rising slowly, and two ranges of hills that
 * drift sideways at different speeds, with the hue swaying a little over time. Every layer is drawn once (geq on one
 * frame, then looped) and only moved afterwards, so it costs little more than an encode; the hills repeat every frame
 * width, so scrolling them by a width modulo is seamless.
 */
function sceneGraph(p: SamplePlan): string {
  const { width: w, height: h, fps } = p;
  const still = `loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB`;
  const sun = Math.max(8, Math.round(h / 2.25));
  const c = sun / 2;
  const glow = `clip(1-(hypot(X-${c}\,Y-${c})-${num(sun / 6)})/${num(sun / 3)}\,0\,1)`;
  const ridge = (base: number, waves: string) => `255*gte(Y\,H*${base}+${waves})`;
  return (
    `nullsrc=s=${w}x${h}:d=0.04,format=gbrp,geq=r='22+228*pow(Y/H\,1.3)':g='38+120*pow(Y/H\,1.6)':b='112-40*Y/H',${still},format=rgba[sky];` +
    `nullsrc=s=${sun}x${sun}:d=0.04,format=rgba,geq=r=255:g=214:b=120:a='255*${glow}*${glow}',${still}[sun];` +
    `nullsrc=s=${2 * w}x${h}:d=0.04,format=rgba,geq=r='92+40*Y/H':g='70+20*Y/H':b=128:` +
    `a='${ridge(0.6, `H*0.07*sin(2*PI*X/${w}*2)+H*0.03*sin(2*PI*X/${w}*5+1)`)}',${still}[far];` +
    `nullsrc=s=${2 * w}x${h}:d=0.04,format=rgba,geq=r='28+30*Y/H':g='78+40*(1-Y/H)':b=58:` +
    `a='${ridge(0.74, `H*0.06*sin(2*PI*X/${w}*3+2)+H*0.025*sin(2*PI*X/${w}*7)`)}',${still}[near];` +
    `[sky][sun]overlay=x='W*0.12+t*W*0.025-${c}':y='H*0.62-t*H*0.018-${c}':shortest=1[s1];` +
    `[s1][far]overlay=x='-mod(t*${w}/40\,${w})':y=0[s2];` +
    `[s2][near]overlay=x='-mod(t*${w}/14\,${w})':y=0,hue=h='12*sin(2*PI*t/20)',setsar=1,format=yuv420p[v]`
  );
}

/**
 * A generated test/sample video, so nothing large has to ship with the package. 'natural' is a slow camera pan over a
 * multi-scale cloud texture with film grain: real motion and texture everywhere in the frame, cheap to generate
 * (the texture is drawn once, then only cropped), and never periodic within a title.
 */
export function sampleVideoArgs(p: SamplePlan): string[] {
  const size = `${p.width}x${p.height}`;
  const layer = (grid: string, seed: number, chroma: boolean) =>
    `nullsrc=s=${grid}:d=0.04,format=yuv444p,geq=lum='random(${seed})*255':cb='${chroma ? `128+60*(random(${seed + 1})-0.5)` : '128'}':cr='${chroma ? `128+60*(random(${seed + 2})-0.5)` : '128'}',scale=1920:1080:flags=bicubic`;
  const natural =
    `${layer('40x23', 1, true)}[l0];${layer('160x90', 4, false)}[l1];${layer('640x360', 7, false)}[l2];` +
    `[l0][l1]blend=all_expr='A*0.65+B*0.35'[ab];[ab][l2]blend=c0_expr='A*0.85+B*0.15':c1_expr=A:c2_expr=A,` +
    `loop=loop=-1:size=1:start=0,setpts=N/${p.fps}/TB,` +
    `crop=1280:720:x='320+300*sin(2*PI*t/97)':y='180+170*sin(2*PI*t/131)',scale=${p.width}:${p.height}:flags=bicubic,` +
    `noise=alls=6:allf=t,setsar=1,format=yuv420p[v]`;
  const flat = `color=c=0x${p.color ?? '336699'}:size=${size}:rate=${p.fps},format=yuv420p[v]`;
  const graph = p.kind === 'flat' ? flat : p.kind === 'scene' ? sceneGraph(p) : natural;
  const audio = p.audio !== false;
  return [
    '-y',
    ...(audio ? ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:beep_factor=4'] : []),
    '-filter_complex', graph,
    '-map', '[v]', ...(audio ? ['-map', '0:a'] : []),
    '-t', String(p.seconds), '-r', String(p.fps),
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', p.kind === 'flat' ? '12' : '18', '-pix_fmt', 'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-b:a', '96k'] : []),
    '-movflags', '+faststart', p.output,
  ];
}
