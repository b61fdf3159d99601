// What an image's first bytes say it is: PNG, JPEG or WebP with its size, or why wmark will not draw it (SVG, GIF, an
// animation, something else). Read before any decoder sees the bytes, so a decompression bomb is refused by its
// declared size, and an animated PNG or WebP (which a decoder would show as one still frame) is refused as animated.
import type { ImageFormat } from './setting-types.js';

export type ImageHeader = { ok: true; format: ImageFormat; width: number; height: number } | { ok: false; problem: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function readImageHeader(bytes: Buffer): ImageHeader {
  if (bytes.length === 0) return refuse('is empty (0 bytes)');
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return png(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return jpeg(bytes);
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return webp(bytes);
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return refuse('is a GIF; wmark draws PNG, JPEG and WebP images (convert it to PNG)');
  const text = bytes
    .subarray(0, 512)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart()
    .toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg|<svg)/.test(text) || (text.startsWith('<?xml') && text.includes('<svg'))) {
    return refuse('is an SVG drawing; wmark draws PNG, JPEG and WebP images (export it as a PNG)');
  }
  if (/^(<!doctype html|<html|<head|<body)/.test(text)) return refuse('is an HTML page, not an image');
  return refuse('is not a PNG, JPEG or WebP image');
}

const refuse = (problem: string): ImageHeader => ({ ok: false, problem });
const ascii = (b: Buffer, at: number, n: number) => b.subarray(at, at + n).toString('latin1');
const truncated = () => refuse('is cut short (its header is incomplete)');

function sized(format: ImageFormat, width: number, height: number): ImageHeader {
  if (!(width > 0 && height > 0)) return refuse(`declares an empty picture (${width}x${height})`);
  return { ok: true, format, width, height };
}

/** IHDR gives the size; an `acTL` chunk before the first IDAT makes it an animated PNG. */
function png(b: Buffer): ImageHeader {
  if (b.length < 24 || ascii(b, 12, 4) !== 'IHDR') return truncated();
  const width = b.readUInt32BE(16);
  const height = b.readUInt32BE(20);
  for (let at = 8; at + 8 <= b.length; ) {
    const length = b.readUInt32BE(at);
    const type = ascii(b, at + 4, 4);
    if (type === 'acTL') return refuse('is an animated PNG; wmark draws still images');
    if (type === 'IDAT' || type === 'IEND') break;
    at += 12 + length;
  }
  return sized('png', width, height);
}

/** The first start-of-frame marker (SOF0..SOF15, but for DHT, JPG and DAC) gives the size. */
function jpeg(b: Buffer): ImageHeader {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return refuse('is a damaged JPEG (no marker where one should be)');
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (at + 9 > b.length) return truncated();
      return sized('jpeg', b.readUInt16BE(at + 7), b.readUInt16BE(at + 5));
    }
    if (marker === 0xda || marker === 0xd9) break;
    at += 2 + length;
  }
  return refuse('is a JPEG without a frame header (damaged or cut short)');
}

/** VP8 (lossy), VP8L (lossless) or VP8X (extended: an animation flag, and the canvas size). */
function webp(b: Buffer): ImageHeader {
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8X') {
    if (b.length < 30) return truncated();
    if ((b[20]! & 0x02) !== 0) return refuse('is an animated WebP; wmark draws still images');
    return sized('webp', b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
  }
  if (chunk === 'VP8 ') {
    if (b.length < 30) return truncated();
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return refuse('is a damaged WebP (no VP8 start code)');
    return sized('webp', b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (b.length < 25) return truncated();
    if (b[20] !== 0x2f) return refuse('is a damaged WebP (no VP8L signature)');
    const bits = b.readUInt32LE(21);
    return sized('webp', (bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
  }
  return refuse('is a WebP of a kind wmark does not read');
}
