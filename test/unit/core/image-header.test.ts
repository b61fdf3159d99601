// Unit tests for reading an image's header: the format and size of PNG, JPEG and WebP, and the refusals (SVG, GIF,
// animations, HTML, nonsense) that come before any decoder sees the bytes.
import { describe, expect, it } from 'vitest';
import { readImageHeader } from '../../../src/core/image-header.js';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const chunk = (type: string, data: Buffer = Buffer.alloc(0)) => Buffer.concat([u32(data.length), Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
const PNG_SIG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const png = (width: number, height: number, ...extra: Buffer[]) =>
  Buffer.concat([PNG_SIG, chunk('IHDR', Buffer.concat([u32(width), u32(height), Buffer.from([8, 6, 0, 0, 0])])), ...extra, chunk('IDAT', Buffer.alloc(10))]);

function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xda, 0, 2])]);
}

function riff(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt32LE(body.length + 4);
  return Buffer.concat([Buffer.from('RIFF'), size, Buffer.from('WEBP'), body]);
}
const le = (n: number, bytes: number) => {
  const b = Buffer.alloc(bytes);
  b.writeUIntLE(n, 0, bytes);
  return b;
};
const vp8x = (width: number, height: number, flags: number) =>
  riff(Buffer.concat([Buffer.from('VP8X'), le(10, 4), Buffer.from([flags, 0, 0, 0]), le(width - 1, 3), le(height - 1, 3)]));
const vp8 = (width: number, height: number) =>
  riff(Buffer.concat([Buffer.from('VP8 '), le(20, 4), Buffer.from([0, 0, 0, 0x9d, 0x01, 0x2a]), le(width, 2), le(height, 2), Buffer.alloc(8)]));
const vp8l = (width: number, height: number) =>
  riff(Buffer.concat([Buffer.from('VP8L'), le(10, 4), Buffer.from([0x2f]), le((width - 1) | ((height - 1) << 14), 4), Buffer.alloc(4)]));

describe('readImageHeader', () => {
  it('reads the format and size of PNG, JPEG and the three kinds of WebP', () => {
    expect(readImageHeader(png(640, 200))).toEqual({ ok: true, format: 'png', width: 640, height: 200 });
    expect(readImageHeader(jpeg(1024, 768))).toEqual({ ok: true, format: 'jpeg', width: 1024, height: 768 });
    expect(readImageHeader(vp8x(300, 100, 0x10))).toEqual({ ok: true, format: 'webp', width: 300, height: 100 });
    expect(readImageHeader(vp8(320, 240))).toEqual({ ok: true, format: 'webp', width: 320, height: 240 });
    expect(readImageHeader(vp8l(5000, 16))).toEqual({ ok: true, format: 'webp', width: 5000, height: 16 });
  });

  it('reads the declared size of a huge image without decoding it (the caller refuses it by that size)', () => {
    expect(readImageHeader(png(60_000, 60_000))).toMatchObject({ ok: true, width: 60_000, height: 60_000 });
  });

  it('refuses animations: an APNG (acTL before the image data) and an animated WebP', () => {
    expect(readImageHeader(png(64, 64, chunk('acTL', Buffer.alloc(8))))).toEqual({ ok: false, problem: 'is an animated PNG; wmark draws still images' });
    expect(readImageHeader(vp8x(64, 64, 0x12))).toEqual({ ok: false, problem: 'is an animated WebP; wmark draws still images' });
  });

  it('names SVG, GIF and HTML, and refuses anything else, empty or cut short', () => {
    const problem = (b: Buffer) => {
      const h = readImageHeader(b);
      return h.ok ? 'ok' : h.problem;
    };
    expect(problem(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toMatch(/^is an SVG drawing/);
    expect(problem(Buffer.from('\uFEFF<?xml version="1.0"?>\n<!-- logo -->\n<svg></svg>'))).toMatch(/^is an SVG drawing/);
    expect(problem(Buffer.from('GIF89a\x01\x00\x01\x00'))).toMatch(/^is a GIF/);
    expect(problem(Buffer.from('<!DOCTYPE html><html><body>404</body></html>'))).toBe('is an HTML page, not an image');
    expect(problem(Buffer.from('BM6\x00\x00\x00'))).toBe('is not a PNG, JPEG or WebP image');
    expect(problem(Buffer.alloc(0))).toBe('is empty (0 bytes)');
    expect(problem(png(10, 10).subarray(0, 20))).toBe('is cut short (its header is incomplete)');
    expect(problem(png(0, 10))).toBe('declares an empty picture (0x10)');
    expect(problem(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0]))).toMatch(/^is a JPEG without a frame header/);
  });
});
