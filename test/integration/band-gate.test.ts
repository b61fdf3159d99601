// The bit-exact gate of band rendering: clips with motion toward and away from the band, a pan, a zoom, a scene cut
// and a still image get a shared encode (patched x264, band at the bottom and at the top), a band encode with a
// moving text mark, and the splice. Decoded, the spliced stream must equal the shared encode outside the band and the
// band stream inside it, frame by frame (framemd5 of the crops); ffprobe reads every frame without an error.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FFMPEG, FFPROBE, FONT } from '../../harness/tools.js';
import { frameTypesOf } from '../../src/core/h264/frame-types.js';
import { type BandRows, spliceStreams } from '../../src/core/h264/splice-band.js';
import { videoPesPayloads } from '../../src/core/mpegts/pes-rewrite.js';
import { bandRowsAt, sharedEncodeArgs } from '../../src/core/plan/band-plan.js';
import { encodeBand, encodeShared } from '../../src/engine/band/encode-band.js';
import { spliceSegmentFile } from '../../src/engine/band/splice-file.js';
import { locateBandX264 } from '../../src/ffmpeg/locate-x264.js';
import { createProcessRunner } from '../../src/ffmpeg/run-ffmpeg.js';
import { withToneToTs } from '../helpers/ffmpeg-args.js';

const X264 = locateBandX264();
if (!X264) console.warn('band gate skipped: no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)');

const W = 320;
const H = 176;
const runner = createProcessRunner(FFMPEG, FFPROBE);
const options = { preset: 'veryfast', crf: 23, gop: 50, refs: 3, threads: 2 };

/** lavfi graphs of 3 s at 25 fps, 320x176. */
const CLIPS: Record<string, string> = {
  // A textured box racing up and down through both bands over a moving background.
  motion: `testsrc2=s=${W}x${H}:r=25:d=3[bg];testsrc=s=96x48:r=25:d=3[box];[bg][box]overlay=x='100+90*sin(3*t)':y='64+80*sin(5*t)'`,
  pan: `testsrc2=s=960x540:r=25:d=3,crop=${W}:${H}:x='40+t*120':y='300-t*90'`,
  zoom: `testsrc2=s=${W}x${H}:r=25:d=3,zoompan=z='1+0.4*on/75':d=1:s=${W}x${H}:x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)'`,
  scenecut: `testsrc2=s=${W}x${H}:r=25:d=1.5[a];testsrc=s=${W}x${H}:r=25:d=1.5,hue=h=120[b];[a][b]concat=n=2:v=1`,
  still: `smptebars=s=${W}x${H}:r=25:d=3`,
};

const MARK = `drawtext=fontfile=${FONT}:text='viewer 42':fontsize=22:fontcolor=white:box=1:boxcolor=black@0.5:x='8+60*t':y=12`;

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-band-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function md5s(file: string, crop: { y: number; h: number; w?: number }): Promise<string[]> {
  const vf = `crop=${crop.w ?? W}:${crop.h}:0:${crop.y}`;
  const { stdout } = await runner.ffmpeg(['-i', file, '-an', '-vf', vf, '-f', 'framemd5', '-'], { captureStdout: true });
  return stdout
    .toString()
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.trim().split(/\s+/).at(-1)!);
}

/** The regions outside the band as crops (one or two). */
function outside(rows: BandRows): { y: number; h: number }[] {
  const crops = [];
  if (rows.top > 0) crops.push({ y: 0, h: 16 * rows.top });
  if (16 * rows.bottom < H) crops.push({ y: 16 * rows.bottom, h: H - 16 * rows.bottom });
  return crops;
}

async function source(name: string): Promise<string> {
  const file = path.join(dir, `${name}.y4m`);
  await runner.ffmpeg(['-y', '-filter_complex', CLIPS[name]!, '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe', file]);
  return file;
}

const TITLE = X264 ? 'band splice gate (patched x264)' : 'band splice gate: skipped, no patched x264 (run scripts/build-x264.sh, or set WMARK_X264)';
describe.skipIf(!X264)(TITLE, () => {
  const encoders = { x264: X264!, runner };

  describe.each(Object.keys(CLIPS))('%s', (name) => {
    it.each(['bottom', 'top'] as const)('splices a band at the %s bit-exactly, every frame', async (where) => {
      const rows = bandRowsAt(where, H, 48);
      const src = await source(name);
      const shared = path.join(dir, `${name}-${where}.shared.264`);
      const band = path.join(dir, `${name}-${where}.band.264`);
      const spliced = path.join(dir, `${name}-${where}.spliced.264`);
      // The scene cut also gets x264's own keyframe at the cut, which the band encode must then copy.
      const clipOptions = name === 'scenecut' ? { ...options, sceneCuts: true } : options;
      await encodeShared(encoders, { source: src, output: shared, rows, height: H, options: clipOptions });
      await encodeBand(encoders, { source: src, shared, output: band, rows, width: W, height: H, filter: MARK, options: clipOptions, workDir: dir });
      writeFileSync(spliced, spliceStreams(readFileSync(shared), readFileSync(band), rows));
      if (name === 'scenecut') expect(frameTypesOf(readFileSync(shared)).join('')).toMatch(/^IP+IP+$/);

      for (const crop of outside(rows)) {
        const want = await md5s(shared, crop);
        expect(want.length).toBeGreaterThanOrEqual(75);
        expect(await md5s(spliced, crop)).toEqual(want);
      }
      const inside = { y: 16 * rows.top, h: 16 * (rows.bottom - rows.top) };
      const bandFrames = await md5s(band, { y: 0, h: inside.h });
      expect(await md5s(spliced, inside)).toEqual(bandFrames);
      // The mark is really there: the band differs from the shared encode's band on every frame.
      const sharedBand = await md5s(shared, inside);
      expect(bandFrames.filter((md5, i) => md5 === sharedBand[i])).toEqual([]);

      const probe = await runner.ffprobe(['-v', 'error', '-show_frames', spliced]);
      expect(probe.stderr).toBe('');
      expect(probe.stdout.toString().match(/^\[FRAME\]/gm)).toHaveLength(bandFrames.length);
    });
  });

  describe.each(['motion', 'pan'])('%s, a top and a bottom band in one shared encode', (name) => {
    const bands = [bandRowsAt('top', H, 48), bandRowsAt('bottom', H, 48)];
    const key = (which: number[]) => `${name}-multi-${which.join('')}`;
    let src = '';
    let shared = '';
    const bandStreams: string[] = [];
    beforeAll(async () => {
      src = await source(name);
      shared = path.join(dir, `${name}-multi.shared.264`);
      const run = await runner.x264(X264!, sharedEncodeArgs(src, shared, bands, options));
      expect(run.stderr).not.toMatch(/band clamp missed/);
      for (const [i, rows] of bands.entries()) {
        const band = path.join(dir, `${name}-multi-${i}.band.264`);
        await encodeBand(encoders, { source: src, shared, output: band, rows, width: W, height: H, filter: MARK, options, workDir: dir });
        bandStreams.push(band);
      }
    });

    it.each([[[0]], [[1]], [[0, 1]], [[1, 0]]])('splices band(s) %j in turn bit-exactly, every frame', async (which) => {
      // Each splice takes the last one's output as its shared stream: the other band's slice stays the shared one.
      let stream: Uint8Array = readFileSync(shared);
      for (const i of which) stream = spliceStreams(stream, readFileSync(bandStreams[i]!), bands[i]!);
      const spliced = path.join(dir, `${key(which)}.spliced.264`);
      writeFileSync(spliced, stream);
      // Slices: above (none: the top band starts at row 0), top band, between, bottom band.
      const middle = { y: 16 * bands[0]!.bottom, h: 16 * (bands[1]!.top - bands[0]!.bottom) };
      const want = await md5s(shared, middle);
      expect(want.length).toBeGreaterThanOrEqual(75);
      expect(await md5s(spliced, middle)).toEqual(want);
      for (const [i, rows] of bands.entries()) {
        const inside = { y: 16 * rows.top, h: 16 * (rows.bottom - rows.top) };
        const from = which.includes(i) ? await md5s(bandStreams[i]!, { y: 0, h: inside.h }) : await md5s(shared, inside);
        expect(await md5s(spliced, inside)).toEqual(from);
      }
      const probe = await runner.ffprobe(['-v', 'error', '-show_frames', spliced]);
      expect(probe.stderr).toBe('');
    });
  });

  it.each([
    ['0,3,5,11', /regions beside and between them need 3\+ of the 11 macroblock rows/],
    ['0,3,8', /invalid argument: band-rows = 0,3,8/],
    ['0,3,8,11,', /invalid argument/],
  ])('x264 refuses --band-rows %s with a reason', async (edges, reason) => {
    const src = await source('still');
    await expect(runner.x264(X264!, ['--band-rows', edges, '-o', path.join(dir, 'refused.264'), src])).rejects.toThrow(reason);
  });

  it.each(['medium', 'veryslow'])('holds under the %s preset (more references, RD refinement, every partition, frame threads)', async (preset) => {
    const rows = bandRowsAt('top', H, 48);
    const src = await source('motion');
    const shared = path.join(dir, `${preset}.shared.264`);
    const band = path.join(dir, `${preset}.band.264`);
    const spliced = path.join(dir, `${preset}.spliced.264`);
    const heavier = { ...options, preset, refs: 8, threads: 3 };
    await encodeShared(encoders, { source: src, output: shared, rows, height: H, options: heavier });
    await encodeBand(encoders, { source: src, shared, output: band, rows, width: W, height: H, filter: MARK, options: heavier, workDir: dir });
    writeFileSync(spliced, spliceStreams(readFileSync(shared), readFileSync(band), rows));
    const below = { y: 48, h: H - 48 };
    expect(await md5s(spliced, below)).toEqual(await md5s(shared, below));
    expect(await md5s(spliced, { y: 0, h: 48 })).toEqual(await md5s(band, { y: 0, h: 48 }));
  });

  it('splices a bottom band that reaches into the cropped rows of a 640x360 picture', async () => {
    const size = { width: 640, height: 360 };
    const rows = bandRowsAt('bottom', size.height, 48);
    expect(rows).toEqual({ top: 20, bottom: 23 });
    const src = path.join(dir, 'wide.y4m');
    await runner.ffmpeg(['-y', '-filter_complex', `${CLIPS.motion},scale=640:360`, '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe', src]);
    const shared = path.join(dir, 'wide.shared.264');
    const band = path.join(dir, 'wide.band.264');
    const spliced = path.join(dir, 'wide.spliced.264');
    await encodeShared(encoders, { source: src, output: shared, rows, height: size.height, options });
    await encodeBand(encoders, { source: src, shared, output: band, rows, ...size, filter: MARK, options, workDir: dir });
    writeFileSync(spliced, spliceStreams(readFileSync(shared), readFileSync(band), rows));
    const above = { y: 0, h: 320, w: 640 };
    expect(await md5s(spliced, above)).toEqual(await md5s(shared, above));
    expect(await md5s(spliced, { y: 320, h: 40, w: 640 })).toEqual(await md5s(band, { y: 0, h: 40, w: 640 }));
  });

  it('keeps the AUD first and one picture per PES in a spliced TS segment, with timing and audio untouched', async () => {
    const rows = bandRowsAt('bottom', H, 48);
    const src = await source('motion');
    const shared = path.join(dir, 'ts.shared.264');
    const band = path.join(dir, 'ts.band.264');
    await encodeShared(encoders, { source: src, output: shared, rows, height: H, options });
    await encodeBand(encoders, { source: src, shared, output: band, rows, width: W, height: H, filter: MARK, options, workDir: dir });
    const segment = path.join(dir, 'shared.ts');
    await runner.ffmpeg(['-y', '-copyts', '-r', '25', '-i', shared, ...withToneToTs(3, segment)]);
    const out = path.join(dir, 'spliced.ts');
    await spliceSegmentFile(segment, band, out, rows);

    const pes = videoPesPayloads(readFileSync(out));
    expect(pes).toHaveLength(75);
    for (const payload of pes) expect([...payload.subarray(0, 5)]).toEqual([0, 0, 0, 1, 0x09]);
    const raw = path.join(dir, 'ts.spliced.264');
    writeFileSync(raw, spliceStreams(readFileSync(shared), readFileSync(band), rows));
    expect(await md5s(out, { y: 0, h: H })).toEqual(await md5s(raw, { y: 0, h: H }));
    // Packet timing and the audio are the shared segment's (the bundled ffprobe crashes on MPEG-TS, so ffmpeg reads them).
    const timing = async (file: string) =>
      (await runner.ffmpeg(['-i', file, '-map', '0', '-c', 'copy', '-f', 'framemd5', '-'], { captureStdout: true })).stdout.toString();
    const lines = (text: string, stream: string) => text.split('\n').filter((l) => l.startsWith(`${stream},`));
    const [a, b] = [await timing(segment), await timing(out)];
    expect(lines(b, '1')).toEqual(lines(a, '1'));
    expect(lines(b, '0').map((l) => l.split(',').slice(1, 4).join())).toEqual(lines(a, '0').map((l) => l.split(',').slice(1, 4).join()));
    // A decode of the whole segment reports no error.
    expect((await runner.ffmpeg(['-v', 'error', '-i', out, '-f', 'null', '-'])).stderr.trim()).toBe('');
  });

  it('fails outside the band without the clamp (the gate can see a broken shared encode)', async () => {
    const rows = bandRowsAt('bottom', H, 48);
    const src = await source('motion');
    const shared = path.join(dir, 'unclamped.shared.264');
    const band = path.join(dir, 'unclamped.band.264');
    // The same slices, no deblocking at all, but no band clamp on the motion search.
    const common = ['--preset', 'veryfast', '--crf', '23', '--bframes', '0', '--weightp', '0', '--ref', '3', '--keyint', '50', '--aud', '--threads', '2'];
    await runner.x264(X264!, [...common, '--slice-max-mbs', String(20 * rows.top), '--no-deblock', '-o', shared, src]);
    await encodeBand(encoders, { source: src, shared, output: band, rows, width: W, height: H, filter: MARK, options, workDir: dir });
    const spliced = path.join(dir, 'unclamped.spliced.264');
    writeFileSync(spliced, spliceStreams(readFileSync(shared), readFileSync(band), rows));
    const crop = { y: 0, h: 16 * rows.top };
    const want = await md5s(shared, crop);
    const got = await md5s(spliced, crop);
    expect(got.filter((md5, i) => md5 !== want[i]).length).toBeGreaterThan(0);
  });
});
