// The B-frame probe's figures: bytes at equal quality (log-bytes read off a CRF sweep), and the z code slots give.
import { describe, expect, it } from 'vitest';
import { bytesAtPsnr, zOver } from '../forensic-bframe.js';

describe('bytes at a PSNR, from a rate curve', () => {
  // Bytes double every 3 dB on this curve, so log-bytes are a straight line through every point.
  const curve = [38, 35, 41, 32].map((psnr) => ({ psnr, bytes: 1000 * 2 ** ((psnr - 32) / 3) }));

  it('gives a point of the sweep exactly, in whatever order the sweep came', () => {
    expect(bytesAtPsnr(curve, 35)).toBeCloseTo(2000, 6);
    expect(bytesAtPsnr(curve, 41)).toBeCloseTo(8000, 6);
  });

  it('interpolates between two points on the log scale, not the linear one', () => {
    // Halfway from 2000 to 4000 bytes in PSNR is their geometric mean.
    expect(bytesAtPsnr(curve, 36.5)).toBeCloseTo(Math.sqrt(2000 * 4000), 6);
  });

  it('extends the nearest pair beyond either end of the sweep', () => {
    expect(bytesAtPsnr(curve, 29)).toBeCloseTo(500, 6);
    expect(bytesAtPsnr(curve, 44)).toBeCloseTo(16000, 6);
  });
});

describe("a true viewer's z over code slots", () => {
  it('is capped by the square root of the slots read when every slot reads clearly', () => {
    expect(zOver(100, 1e6)).toBeCloseTo(10, 6);
  });

  it("falls with the slots' signal-to-noise: at 1 it is sqrt(slots / 2)", () => {
    expect(zOver(4, 1)).toBeCloseTo(Math.SQRT2, 9);
    expect(zOver(60, 0.5)).toBeLessThan(zOver(60, 1));
  });
});
