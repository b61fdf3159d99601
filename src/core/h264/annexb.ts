// Annex-B byte streams: splitting them into NAL units and joining them back, emulation-prevention bytes removed and
// inserted, and NAL units grouped into access units.
export interface NalUnit {
  /** nal_unit_type: 1 slice, 5 IDR slice, 6 SEI, 7 SPS, 8 PPS, 9 access unit delimiter. */
  type: number;
  refIdc: number;
  /** The whole NAL unit as it is in the stream: header byte, then the payload with its emulation prevention. */
  bytes: Uint8Array;
}

const NAL_SLICE = 1;
export const NAL_IDR = 5;
const NAL_SEI = 6;
export const NAL_SPS = 7;
export const NAL_PPS = 8;
const NAL_AUD = 9;

export function isSlice(nal: NalUnit): boolean {
  return nal.type === NAL_SLICE || nal.type === NAL_IDR;
}

const START_CODE = Buffer.from([0, 0, 1]);

/** The NAL units of an Annex-B stream, in order; zero bytes before a start code belong to the start code. */
export function splitNalUnits(stream: Uint8Array): NalUnit[] {
  const starts: number[] = [];
  const bytes = Buffer.from(stream.buffer, stream.byteOffset, stream.byteLength);
  // Start codes found with the native byte search: scanning byte by byte in JS cost most of a splice.
  for (let i = bytes.indexOf(START_CODE); i >= 0; i = bytes.indexOf(START_CODE, i + 3)) starts.push(i + 3);
  const units: NalUnit[] = [];
  starts.forEach((start, k) => {
    let end = k + 1 < starts.length ? starts[k + 1]! - 3 : stream.length;
    // A NAL unit never ends in a zero byte (emulation prevention sees to it): those are the next start code's.
    while (end > start && stream[end - 1] === 0) end--;
    if (end <= start) return;
    const header = stream[start]!;
    units.push({ type: header & 0x1f, refIdc: (header >> 5) & 3, bytes: stream.subarray(start, end) });
  });
  return units;
}

/** An Annex-B stream of `units`, each behind a 4-byte start code. */
export function joinNalUnits(units: readonly NalUnit[]): Uint8Array {
  const size = units.reduce((sum, unit) => sum + 4 + unit.bytes.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const unit of units) {
    out.set([0, 0, 0, 1], at);
    out.set(unit.bytes, at + 4);
    at += 4 + unit.bytes.length;
  }
  return out;
}

/** The RBSP of a NAL unit's payload (header byte excluded): every 0x03 after two zero bytes dropped. */
export function toRbsp(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(payload.length);
  let length = 0;
  let zeros = 0;
  for (const byte of payload) {
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    out[length++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, length);
}

/** A NAL unit payload from an RBSP: 0x03 put before any byte <= 3 that follows two zero bytes, and after a final 0. */
export function fromRbsp(rbsp: Uint8Array): Uint8Array {
  // At most one 0x03 per two bytes, and one more at the end.
  const out = new Uint8Array(rbsp.length + (rbsp.length >> 1) + 1);
  let length = 0;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[length++] = 3;
      zeros = 0;
    }
    out[length++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  if (length > 0 && out[length - 1] === 0) out[length++] = 3;
  return out.slice(0, length);
}

/** A NAL unit built from its header fields and RBSP. */
export function makeNalUnit(type: number, refIdc: number, rbsp: Uint8Array): NalUnit {
  const payload = fromRbsp(rbsp);
  const bytes = new Uint8Array(payload.length + 1);
  bytes[0] = (refIdc << 5) | type;
  bytes.set(payload, 1);
  return { type, refIdc, bytes };
}

/** The RBSP of a whole NAL unit (its header byte dropped). */
export function rbspOf(unit: NalUnit): Uint8Array {
  return toRbsp(unit.bytes.subarray(1));
}

/**
 * NAL units grouped into access units. A unit opens a new access unit when it is an access unit delimiter, or a
 * parameter set or SEI after a slice, or a slice that starts a picture (`startsPicture`) after a slice.
 */
export function groupAccessUnits(units: readonly NalUnit[], startsPicture: (slice: NalUnit) => boolean): NalUnit[][] {
  const groups: NalUnit[][] = [];
  let current: NalUnit[] = [];
  let sawSlice = false;
  for (const unit of units) {
    const opens =
      unit.type === NAL_AUD ||
      (sawSlice && (unit.type === NAL_SPS || unit.type === NAL_PPS || unit.type === NAL_SEI)) ||
      (sawSlice && isSlice(unit) && startsPicture(unit));
    if (opens && current.length > 0) {
      groups.push(current);
      current = [];
      sawSlice = false;
    }
    current.push(unit);
    if (isSlice(unit)) sawSlice = true;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
