// Bit-level reading and writing of H.264 RBSP data: fixed-width fields and the exp-Golomb codes (ue/se) that slice
// headers and parameter sets are made of.
import { WmarkError } from '../errors.js';

export class BitReader {
  /** Position in bits from the start of the buffer. */
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get bitLength(): number {
    return this.bytes.length * 8;
  }

  bit(): number {
    if (this.pos >= this.bytes.length * 8) throw truncated();
    const value = (this.bytes[this.pos >> 3]! >> (7 - (this.pos & 7))) & 1;
    this.pos++;
    return value;
  }

  /** An unsigned field of up to 32 bits. */
  u(width: number): number {
    let value = 0;
    for (let i = 0; i < width; i++) value = value * 2 + this.bit();
    return value;
  }

  flag(): boolean {
    return this.bit() === 1;
  }

  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) {
      zeros++;
      if (zeros > 31) throw new WmarkError('BITSTREAM_INVALID', 'H.264 exp-Golomb code longer than 32 bits');
    }
    return 2 ** zeros - 1 + this.u(zeros);
  }

  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : k === 0 ? 0 : -(k / 2);
  }

  byteAligned(): boolean {
    return (this.pos & 7) === 0;
  }

  /** Skips `count` exp-Golomb codes and returns the next one. */
  skipUe(count: number): number {
    for (let i = 0; i < count; i++) this.ue();
    return this.ue();
  }

  /** The bit position of the rbsp_stop_one_bit (the last 1 bit of the data). */
  stopBitPosition(): number {
    let last = this.bytes.length - 1;
    while (last >= 0 && this.bytes[last] === 0) last--;
    if (last < 0) throw truncated();
    return last * 8 + (7 - countTrailingZeros(this.bytes[last]!));
  }

  /** True while RBSP data remains before the rbsp_stop_one_bit and its trailing zeros. */
  moreRbspData(): boolean {
    if (this.pos >= this.bytes.length * 8 || this.bytes.every((byte) => byte === 0)) return false;
    return this.pos < this.stopBitPosition();
  }
}

export class BitWriter {
  private readonly out: number[] = [];
  private current = 0;
  private used = 0;

  get bitLength(): number {
    return this.out.length * 8 + this.used;
  }

  bit(value: number): this {
    this.current = (this.current << 1) | (value & 1);
    this.used++;
    if (this.used === 8) {
      this.out.push(this.current);
      this.current = 0;
      this.used = 0;
    }
    return this;
  }

  u(width: number, value: number): this {
    if (value < 0 || value >= 2 ** width) throw new WmarkError('BITSTREAM_INVALID', `H.264 field value ${value} does not fit ${width} bits`);
    for (let i = width - 1; i >= 0; i--) this.bit(Math.floor(value / 2 ** i) % 2);
    return this;
  }

  flag(value: boolean): this {
    return this.bit(value ? 1 : 0);
  }

  ue(value: number): this {
    const coded = value + 1;
    const width = Math.floor(Math.log2(coded));
    for (let i = 0; i < width; i++) this.bit(0);
    return this.u(width + 1, coded);
  }

  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Copies `count` bits of `reader` from its position on. */
  copyBits(reader: BitReader, count: number): this {
    for (let i = 0; i < count; i++) this.bit(reader.bit());
    return this;
  }

  byteAligned(): boolean {
    return this.used === 0;
  }

  /** Whole bytes; only when byte aligned. */
  bytes(extra: Uint8Array = new Uint8Array(0)): Uint8Array {
    if (this.used !== 0) throw new WmarkError('BITSTREAM_INVALID', 'BitWriter.bytes() before byte alignment');
    const result = new Uint8Array(this.out.length + extra.length);
    result.set(this.out);
    result.set(extra, this.out.length);
    return result;
  }
}

function countTrailingZeros(byte: number): number {
  let n = 0;
  while (n < 8 && ((byte >> n) & 1) === 0) n++;
  return n;
}

function truncated(): WmarkError {
  return new WmarkError('BITSTREAM_INVALID', 'H.264 data ends inside a field');
}
