// The splice on x264 streams made at test time by the bundled ffmpeg (no band clamp there, so this checks the
// syntax, not the pictures): a fitting band stream splices into a stream that decodes whole, and every kind of
// misfit is refused with SPLICE_MISMATCH before anything is written.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../../../harness/tools.js';
import { splitNalUnits } from '../../../../src/core/h264/annexb.js';
import { ParameterSets, spliceStreams } from '../../../../src/core/h264/splice-band.js';

function encode(size: string, params: string[], seconds = 1, filter = 'null'): Uint8Array {
  const x264 = ['aud=1', 'bframes=0', 'weightp=0', 'keyint=10', 'min-keyint=10', 'scenecut=0', 'ref=2', ...params].join(':');
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=25:d=${seconds}`, '-vf', filter];
  const r = spawnSync(FFMPEG, [...args, '-c:v', 'libx264', '-preset', 'veryfast', '-x264-params', x264, '-f', 'h264', '-'], { maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(r.stderr.toString());
  return new Uint8Array(r.stdout);
}

const rows = { top: 5, bottom: 8 };
// 12x8 macroblocks cut after row 5, no deblocking at all.
const shared = encode('192x128', ['slice-max-mbs=60', 'no-deblock=1']);
const band = encode('192x48', [], 1, 'hue=h=90');

function decodes(stream: Uint8Array): { frames: number; errors: string } {
  const r = spawnSync(FFMPEG, ['-hide_banner', '-v', 'error', '-f', 'h264', '-i', '-', '-f', 'framemd5', '-'], { input: stream, maxBuffer: 1 << 26 });
  return {
    frames: r.stdout
      .toString()
      .split('\n')
      .filter((l) => l && !l.startsWith('#')).length,
    errors: r.stderr.toString(),
  };
}

describe('spliceStreams', () => {
  it('splices a fitting band stream into a stream that decodes whole', () => {
    const out = spliceStreams(shared, band, rows);
    expect(decodes(out)).toEqual({ frames: 25, errors: '' });
    // The band slices now start at row 5 under the shared PPS, with deblocking off at their edges.
    const sets = new ParameterSets();
    const starts: number[] = [];
    for (const unit of splitNalUnits(out)) {
      sets.read([unit]);
      if (unit.type === 1 || unit.type === 5) starts.push(sets.slice(unit).parsed.header.firstMbInSlice);
    }
    expect(new Set(starts)).toEqual(new Set([0, 60]));
  });

  it('splices either middle band of a picture of four slices, and both in turn', () => {
    // 12x10 macroblocks cut every 3 rows: slices at rows 0, 3, 6 and 9.
    const four = encode('192x160', ['slice-max-mbs=36', 'no-deblock=1']);
    const second = encode('192x48', [], 1, 'hue=h=180');
    const firstMbs = (stream: Uint8Array) => {
      const sets = new ParameterSets();
      const starts = new Set<number>();
      for (const unit of splitNalUnits(stream)) {
        sets.read([unit]);
        if (unit.type === 1 || unit.type === 5) starts.add(sets.slice(unit).parsed.header.firstMbInSlice);
      }
      return starts;
    };
    const upper = spliceStreams(four, band, { top: 3, bottom: 6 });
    const both = spliceStreams(upper, second, { top: 6, bottom: 9 });
    for (const out of [upper, spliceStreams(four, second, { top: 6, bottom: 9 }), both]) {
      expect(decodes(out)).toEqual({ frames: 25, errors: '' });
      expect(firstMbs(out)).toEqual(new Set([0, 36, 72, 108]));
    }
    // The band slices are the band streams' own, so the pictures differ from the shared stream where they went in.
    expect(both).not.toEqual(upper);
  });

  it.each([
    ['a band slice that runs past the band', () => spliceStreams(shared, encode('192x32', []), { top: 5, bottom: 7 }), /does not end at macroblock row 7/],
    ['a band of another width', () => spliceStreams(shared, encode('176x48', []), rows), /macroblocks wide/],
    ['a band of another height', () => spliceStreams(shared, encode('192x64', []), rows), /macroblock rows high/],
    ['a band with fewer pictures', () => spliceStreams(shared, encode('192x48', [], 0.8), rows), /pictures/],
    [
      'a band coded with CAVLC into a CABAC stream',
      () => spliceStreams(shared, encode('192x48', ['cabac=0']), rows),
      /PPS differs from the shared PPS in cabac/,
    ],
    ['a shared stream deblocked across its slices', () => spliceStreams(encode('192x128', ['slice-max-mbs=60']), band, rows), /deblocked across slice edges/],
    ['a band row that is not a slice edge', () => spliceStreams(shared, band, { top: 4, bottom: 7 }), /band slice does not start at macroblock row 4/],
  ])('refuses %s', (_name, splice, message) => {
    expect(splice).toThrow(message);
    try {
      splice();
    } catch (error) {
      expect((error as { code: string }).code).toBe('SPLICE_MISMATCH');
    }
  });
});
