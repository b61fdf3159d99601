// The H.264 syntax module on real x264 output made at test time by the bundled ffmpeg: NAL units and emulation
// prevention round-trip, and every slice header parses and writes back to the same bits, or to changed fields that
// parse again.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../../../harness/tools.js';
import { fromRbsp, isSlice, joinNalUnits, type NalUnit, rbspOf, splitNalUnits, toRbsp } from '../../../../src/core/h264/annexb.js';
import { BitReader, BitWriter } from '../../../../src/core/h264/bits.js';
import { frameTypesOf } from '../../../../src/core/h264/frame-types.js';
import { type SliceHeader, writeSliceHeader } from '../../../../src/core/h264/slice-header.js';
import { ParameterSets } from '../../../../src/core/h264/splice-band.js';

/** A short x264 stream: 3 slices per picture, AUDs, P frames, an IDR every 10 frames. */
function x264Stream(extra: string[] = []): Uint8Array {
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=192x128:r=25:d=1', '-c:v', 'libx264', '-preset', 'veryfast'];
  const params = ['slices=3', 'aud=1', 'bframes=0', 'weightp=0', 'keyint=10', 'min-keyint=10', 'scenecut=0', ...extra].join(':');
  const r = spawnSync(FFMPEG, [...args, '-x264-params', params, '-f', 'h264', '-'], { maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(r.stderr.toString());
  return new Uint8Array(r.stdout);
}

const cabac = x264Stream();
const cavlc = x264Stream(['cabac=0']);

function slicesOf(stream: Uint8Array): { unit: NalUnit; slice: ReturnType<ParameterSets['slice']> }[] {
  const sets = new ParameterSets();
  const out: { unit: NalUnit; slice: ReturnType<ParameterSets['slice']> }[] = [];
  for (const unit of splitNalUnits(stream)) {
    sets.read([unit]);
    if (isSlice(unit)) out.push({ unit, slice: sets.slice(unit) });
  }
  return out;
}

/** The RBSP of a slice with `header` written in front of the original slice's data. */
function rewritten(slice: ReturnType<ParameterSets['slice']>, header: SliceHeader): Uint8Array {
  const w = writeSliceHeader(header, slice.sps, slice.pps);
  if (slice.pps.cabac) return w.bytes(slice.rbsp.subarray(slice.parsed.dataBitOffset / 8));
  const r = new BitReader(slice.rbsp);
  r.pos = slice.parsed.dataBitOffset;
  w.copyBits(r, slice.rbsp.length * 8 - r.pos);
  while (!w.byteAligned()) w.bit(0);
  return w.bytes();
}

describe('H.264 NAL units', () => {
  it('splits a stream into NAL units and joins them back to the same units', () => {
    const units = splitNalUnits(cabac);
    expect(units.filter((u) => u.type === 9)).toHaveLength(25);
    expect(units.filter(isSlice)).toHaveLength(75);
    const again = splitNalUnits(joinNalUnits(units));
    expect(again.map((u) => Buffer.from(u.bytes).toString('hex'))).toEqual(units.map((u) => Buffer.from(u.bytes).toString('hex')));
  });

  it('removes and puts back emulation prevention bytes', () => {
    for (const unit of splitNalUnits(cabac)) {
      const payload = unit.bytes.subarray(1);
      expect(Buffer.from(fromRbsp(toRbsp(payload)))).toEqual(Buffer.from(payload));
    }
    expect([...fromRbsp(Uint8Array.from([0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0]))]).toEqual([0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 4, 0, 0, 3]);
    expect([...toRbsp(Uint8Array.from([0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 4, 0, 0, 3]))]).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0]);
  });

  it('puts back emulation prevention in the worst case, a run of zero bytes (one 0x03 per two bytes, and a last one)', () => {
    const zeros = new Uint8Array(9);
    expect([...fromRbsp(zeros)]).toEqual([0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 3]);
  });

  it('splits a stream that is a view into a larger buffer at its own start codes only', () => {
    const whole = Uint8Array.from([0, 0, 1, 0x67, 0, 0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x65, 0x88, 0, 0, 1]);
    const units = splitNalUnits(whole.subarray(4, 15));
    expect(units.map((u) => [...u.bytes])).toEqual([
      [0x09, 0xf0],
      [0x65, 0x88],
    ]);
  });
});

describe('exp-Golomb codes', () => {
  it('reads back what it writes', () => {
    const values = [0, 1, 2, 3, 7, 8, 254, 255, 65535, 1 << 20];
    const signed = [0, 1, -1, 2, -2, 26, -26, 51, -51, 1000];
    const w = new BitWriter();
    for (const v of values) w.ue(v);
    for (const v of signed) w.se(v);
    w.u(5, 19).flag(true);
    while (!w.byteAligned()) w.bit(0);
    const r = new BitReader(w.bytes());
    expect(values.map(() => r.ue())).toEqual(values);
    expect(signed.map(() => r.se())).toEqual(signed);
    expect([r.u(5), r.flag()]).toEqual([19, true]);
  });
});

describe('H.264 slice headers', () => {
  it.each([
    ['CABAC', cabac],
    ['CAVLC', cavlc],
  ])('writes every %s slice header back to the same bits', (_name, stream) => {
    const slices = slicesOf(stream);
    expect(slices.length).toBe(75);
    for (const { slice } of slices) expect(Buffer.from(rewritten(slice, slice.parsed.header))).toEqual(Buffer.from(slice.rbsp));
  });

  it('rewrites first_mb_in_slice, QP delta, frame_num, the reference count and deblocking, and parses them back', () => {
    const sets = new ParameterSets();
    for (const unit of splitNalUnits(cabac)) {
      sets.read([unit]);
      if (!isSlice(unit)) continue;
      const slice = sets.slice(unit);
      const h = slice.parsed.header;
      const changed: SliceHeader = {
        ...h,
        firstMbInSlice: h.firstMbInSlice + 12,
        sliceQpDelta: h.sliceQpDelta - 5,
        frameNum: (h.frameNum + 3) % 16,
        // Only P and B slices carry the override.
        numRefIdxActiveOverride: h.sliceType % 5 === 0 || h.numRefIdxActiveOverride,
        disableDeblockingFilterIdc: 2,
      };
      const rbsp = rewritten(slice, changed);
      const again = new ParameterSets();
      again.read(splitNalUnits(cabac).filter((u) => u.type === 7 || u.type === 8));
      const parsed = again.slice({ ...unit, bytes: Uint8Array.from([unit.bytes[0]!, ...fromRbsp(rbsp)]) }).parsed;
      expect(parsed.header).toEqual(changed);
      // The slice data after the header is the original's, byte for byte.
      expect(Buffer.from(rbsp.subarray(parsed.dataBitOffset / 8))).toEqual(Buffer.from(slice.rbsp.subarray(slice.parsed.dataBitOffset / 8)));
    }
  });

  it('names the frame types for a qpfile', () => {
    const types = frameTypesOf(cabac);
    expect(types.join('')).toBe('IPPPPPPPPPIPPPPPPPPPIPPPP');
  });

  it('reads the parameter sets a splice compares', () => {
    const sets = new ParameterSets();
    const units = splitNalUnits(cabac);
    sets.read(units);
    const first = units.find(isSlice)!;
    const { sps, pps } = sets.slice(first);
    expect(sps.widthInMbs).toBe(12);
    expect(sps.heightInMapUnits).toBe(8);
    expect(pps.cabac).toBe(true);
    expect(pps.transform8x8Mode).toBe(true);
    expect(rbspOf(first).length).toBeGreaterThan(10);
  });
});
