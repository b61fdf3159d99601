// Unit tests for the ffmpeg arguments of band rendering's ingest and per-viewer draw: where the band's rows are cut,
// how the drawing is put back on a picture of the title's size, and how a shared encode gets its segment's timing.
import { describe, expect, it } from 'vitest';
import { bandDrawFilter, bandIngestArgs, bandSegmentMuxArgs, speaksSeveralBands } from '../../../../src/core/plan/band-plan.js';

const BOTTOM = { rows: { top: 9, bottom: 12 }, width: 320, height: 180 };
const TOP = { rows: { top: 0, bottom: 3 }, width: 320, height: 180 };

describe('bandDrawFilter', () => {
  it('puts the visible rows back at their place in a picture of the title, draws, and cuts the whole macroblock rows out again', () => {
    expect(bandDrawFilter(BOTTOM, 'drawtext=x=1')).toBe('crop=320:36:0:0,pad=320:180:0:144,drawtext=x=1,crop=320:36:0:144,pad=320:48:0:0');
    expect(bandDrawFilter(TOP, 'drawtext=x=1')).toBe('crop=320:48:0:0,pad=320:180:0:0,drawtext=x=1,crop=320:48:0:0');
  });

  it("wraps a graph of several statements (an image's overlay) around its unlabelled input and output", () => {
    const graph = 'null[a0];movie=filename=i.png[i0];[a0][i0]overlay=x=1:y=2';
    expect(bandDrawFilter(TOP, graph)).toBe(`crop=320:48:0:0,pad=320:180:0:0,${graph},crop=320:48:0:0`);
  });
});

describe('bandIngestArgs', () => {
  it('decodes once: whole frames to y4m, and each band cut to a lossless stream keeping the timestamps', () => {
    const args = bandIngestArgs('seg.ts', 'full.y4m', [
      { cut: TOP, output: 'rows0.nut' },
      { cut: BOTTOM, output: 'rows1.nut' },
    ]);
    expect(args.slice(0, 4)).toEqual(['-y', '-copyts', '-i', 'seg.ts']);
    expect(args[args.indexOf('-filter_complex') + 1]).toBe('[0:v:0]split=3[full][c0][c1];[c0]crop=320:48:0:0[b0];[c1]crop=320:36:0:144,pad=320:48:0:0[b1]');
    // Ut Video (lossless, cheap to decode) in NUT (exact timestamps), once per band.
    expect(args.filter((a) => a === 'utvideo').length).toBe(2);
    expect(args.slice(-3)).toEqual(['-f', 'nut', 'rows1.nut']);
  });
});

describe('bandSegmentMuxArgs', () => {
  it("times the raw shared encode from the segment's first frame, then adds the segment's audio as it was", () => {
    const runs = bandSegmentMuxArgs('s.264', 'seg.ts', 'out.ts', { start: 4.5, fps: '25/1', hasAudio: true, videoOnly: 'v.ts' });
    expect(runs).toHaveLength(2);
    expect(runs[0]!.join(' ')).toBe('-y -r 25/1 -i s.264 -map 0:v:0 -c copy -output_ts_offset 4.500000 -muxdelay 0 -f mpegts v.ts');
    expect(runs[1]!.join(' ')).toContain('-copyts -i v.ts -i seg.ts -map 0:v:0 -map 1:a:0 -c copy');
    expect(bandSegmentMuxArgs('s.264', 'seg.ts', 'out.ts', { start: 0, fps: '25/1', hasAudio: false, videoOnly: 'v.ts' })).toHaveLength(1);
  });
});

describe('speaksSeveralBands', () => {
  it("tells the several-band --band-rows of x264's help from the one-band form of an older patch", () => {
    expect(speaksSeveralBands('      --band-rows <top,bottom[,top,bottom...]> Bands of macroblock rows: slices\n')).toBe(true);
    expect(speaksSeveralBands('      --band-rows <top,bottom> Slices split at these macroblock rows; motion outside\n')).toBe(false);
    expect(speaksSeveralBands('')).toBe(false);
  });
});
