// Keyed pseudo-random material for forensic marks: each segment's ±1 pattern grid and each payload's A/B codeword.
import { createHash, createHmac } from 'node:crypto';

export const GRID_COLUMNS = 16;
export const GRID_ROWS = 9;
export const PAYLOAD_COUNT = 65536;

/** Separate key for forensic material, derived from the service secret (never used for signing URLs). */
export function forensicKey(secret: Buffer): Buffer {
  return createHmac('sha256', secret).update('wmark forensic v1').digest();
}

function expand(seed: Buffer, bits: number): Uint8Array {
  const out = new Uint8Array(bits);
  for (let block = 0; block * 256 < bits; block++) {
    const digest = createHash('sha256')
      .update(seed)
      .update(Uint8Array.of(block >>> 8, block & 255))
      .digest();
    for (let i = 0; i < 256 && block * 256 + i < bits; i++) out[block * 256 + i] = (digest[i >>> 3]! >>> (7 - (i & 7))) & 1;
  }
  return out;
}

/** Segment k's pattern: GRID_COLUMNS x GRID_ROWS values of +1/-1, row-major. */
export function patternGrid(key: Buffer, videoId: string, segment: number): Int8Array {
  const seed = createHmac('sha256', key).update(`pattern|${videoId}|${segment}`).digest();
  const bits = expand(seed, GRID_COLUMNS * GRID_ROWS);
  return Int8Array.from(bits, (b) => (b ? 1 : -1));
}

/** Payload u's codeword over `segments` segments: +1 = variant A, -1 = variant B. */
export function codeword(key: Buffer, videoId: string, payload: number, segments: number): Int8Array {
  const seed = createHmac('sha256', key).update(`code|${videoId}|${payload}`).digest();
  return Int8Array.from(expand(seed, segments), (b) => (b ? 1 : -1));
}

/** All 65,536 codewords, row-major [payload][segment], for scoring a leak against every payload at once. */
export function allCodewords(key: Buffer, videoId: string, segments: number): Int8Array {
  const out = new Int8Array(PAYLOAD_COUNT * segments);
  for (let u = 0; u < PAYLOAD_COUNT; u++) out.set(codeword(key, videoId, u, segments), u * segments);
  return out;
}

/**
 * A packed codebook: every payload's first `bits` code bits, one bit per slot (1 = A, 0 = B), MSB first, in
 * `stride` bytes per payload. The same bits `codeword` spells as ±1; 1/8 of the memory, so a 2-hour title's book
 * (3,600 bits) is 29 MB instead of 236 MB, and scoring can add a whole byte of bits with one table lookup.
 */
export interface PackedCodebook {
  bits: number;
  stride: number;
  bytes: Uint8Array;
}

export function packedCodebook(key: Buffer, videoId: string, bits: number, payloads = PAYLOAD_COUNT): PackedCodebook {
  const stride = Math.ceil(bits / 8);
  const bytes = new Uint8Array(payloads * stride);
  for (let u = 0; u < payloads; u++) {
    const seed = createHmac('sha256', key).update(`code|${videoId}|${u}`).digest();
    for (let block = 0; block * 32 < stride; block++) {
      const digest = createHash('sha256')
        .update(seed)
        .update(Uint8Array.of(block >>> 8, block & 255))
        .digest();
      bytes.set(digest.subarray(0, Math.min(32, stride - block * 32)), u * stride + block * 32);
    }
  }
  return { bits, stride, bytes };
}

/** Bit `bit` of payload u in a packed book, as ±1. */
export function packedBit(book: PackedCodebook, payload: number, bit: number): 1 | -1 {
  return (book.bytes[payload * book.stride + (bit >>> 3)]! >>> (7 - (bit & 7))) & 1 ? 1 : -1;
}
