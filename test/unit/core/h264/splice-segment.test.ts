// A shared segment read once and spliced with many viewers' band streams (streams made at test time by the bundled
// ffmpeg, so this checks the syntax and the containers, not the clamp): each viewer's result is the one a splice of
// the whole segment gives, whatever came before it, and a TS segment carries the raw splice's pictures.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../../../harness/tools.js';
import { joinNalUnits, splitNalUnits } from '../../../../src/core/h264/annexb.js';
import { spliceStreams } from '../../../../src/core/h264/splice-band.js';
import { isTransportStream, prepareSharedSegment, spliceTsSegment, spliceViewer } from '../../../../src/core/h264/splice-segment.js';
import { videoPesPayloads } from '../../../../src/core/mpegts/pes-rewrite.js';
import { withToneToTs } from '../../../helpers/ffmpeg-args.js';

function run(args: string[], input?: Uint8Array): Uint8Array {
  const r = spawnSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', ...args], { input, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(r.stderr.toString());
  return new Uint8Array(r.stdout);
}

function encode(size: string, params: string[], filter = 'null'): Uint8Array {
  const x264 = ['aud=1', 'bframes=0', 'weightp=0', 'keyint=10', 'min-keyint=10', 'scenecut=0', 'ref=2', ...params].join(':');
  return run([
    '-f',
    'lavfi',
    '-i',
    `testsrc2=s=${size}:r=25:d=1`,
    '-vf',
    filter,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-x264-params',
    x264,
    '-f',
    'h264',
    '-',
  ]);
}

const rows = { top: 5, bottom: 8 };
const shared = encode('192x128', ['slice-max-mbs=60', 'no-deblock=1']);
const bands = ['hue=h=90', 'hue=h=200', 'negate'].map((filter) => encode('192x48', [], filter));
// The shared stream in an HLS-like TS segment with audio, one picture per PES.
const segment = run(['-r', '25', '-f', 'h264', '-i', '-', ...withToneToTs(1, '-')], shared);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('prepareSharedSegment and spliceViewer', () => {
  it('tells a TS segment from a raw stream', () => {
    expect(isTransportStream(segment)).toBe(true);
    expect(isTransportStream(shared)).toBe(false);
  });

  it('splices each viewer of a raw stream as a whole-stream splice does, in any order', () => {
    const prepared = prepareSharedSegment(shared);
    const want = bands.map((band) => hex(spliceStreams(shared, band, rows)));
    expect(new Set(want).size).toBe(3);
    for (const i of [0, 1, 2, 1, 0]) expect(hex(spliceViewer(prepared, bands[i]!, rows))).toBe(want[i]);
  });

  it('splices each viewer of a TS segment: the raw splice in its PES, the other packets as they were', () => {
    const prepared = prepareSharedSegment(segment);
    for (const i of [2, 0, 1, 0]) {
      const out = spliceViewer(prepared, bands[i]!, rows);
      expect(hex(out)).toBe(hex(spliceTsSegment(segment, bands[i]!, rows)));
      const pictures = videoPesPayloads(out);
      expect(pictures).toHaveLength(25);
      // Every PES starts with its AUD, and together they are the raw splice (start codes as the splice writes them).
      for (const payload of pictures) expect([...payload.subarray(0, 5)]).toEqual([0, 0, 0, 1, 0x09]);
      expect(hex(joinNalUnits(pictures.flatMap((p) => splitNalUnits(p))))).toBe(hex(spliceStreams(shared, bands[i]!, rows)));
    }
    const decoded = run(['-i', '-', '-f', 'framemd5', '-'], spliceViewer(prepared, bands[1]!, rows));
    expect(
      Buffer.from(decoded)
        .toString()
        .split('\n')
        .filter((l) => l.startsWith('0,')),
    ).toHaveLength(25);
  });

  it('refuses a band stream of another length or size for a prepared segment, with SPLICE_MISMATCH', () => {
    const prepared = prepareSharedSegment(segment);
    expect(() => spliceViewer(prepared, encode('192x64', []), rows)).toThrow(/macroblock rows high/);
    expect(() => spliceViewer(prepared, bands[0]!.subarray(0, bands[0]!.length / 2), rows)).toThrow(expect.objectContaining({ code: 'SPLICE_MISMATCH' }));
  });
});
