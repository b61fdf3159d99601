// The ffmpeg arguments that turn a source into the working form (CFR H.264 + AAC in closed-GOP MPEG-TS segments), and reading back the muxer's list.
import { framesPerSegment, leadSegmentFrames, segmentBoundaries } from './segment-timing.js';
import { type EncodeOptions, x264Gop } from './x264.js';

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
  // Inside the first GOP: the cuts between lead segments (the last one is the GOP's own boundary).
  const inner = segmentBoundaries(lead, gop).slice(0, -1);
  const cuts = lead.length
    ? [
        '-force_key_frames',
        `expr:${inner.map((n) => `eq(n,${n})+`).join('')}not(mod(n,${gop}))`,
        '-segment_frames',
        segmentBoundaries(lead, gop, plan.maxFrames).join(','),
      ]
    : ['-segment_time', segmentSeconds.toFixed(6), '-segment_time_delta', halfFrame.toFixed(6)];
  return [
    '-y',
    '-i',
    plan.source,
    '-map',
    '0:v:0',
    ...(plan.hasAudio ? ['-map', '0:a:0'] : []),
    '-vf',
    filters.join(','),
    // fastdecode: the working copy is only ever decoded by wmark, and decoding is a large share of every segment render.
    '-c:v',
    'libx264',
    '-preset',
    plan.encode.preset,
    '-tune',
    'fastdecode',
    '-crf',
    String(plan.encode.crf),
    ...x264Gop(gop),
    ...(plan.hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-ar', '48000'] : []),
    '-sn',
    '-dn',
    '-map_metadata',
    '-1',
    '-f',
    'segment',
    '-segment_format',
    'mpegts',
    ...cuts,
    '-segment_list',
    `${plan.outDir}/segments.csv`,
    '-segment_list_type',
    'csv',
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
