// MPEG-TS segments with their video PES payloads replaced: each PES keeps its header (PTS/DTS) and its first
// packet's adaptation field (PCR, random access), is cut into packets again, and goes where it was; every other
// packet passes through untouched. One access unit per PES stays one access unit per PES.
import { WmarkError } from '../errors.js';

const PACKET = 188;
const H264_STREAM_TYPE = 0x1b;

interface Packet {
  pid: number;
  start: boolean;
  /** The adaptation field, length byte included (empty when absent). */
  adaptation: Uint8Array;
  payload: Uint8Array;
}

const invalid = (message: string) => new WmarkError('BITSTREAM_INVALID', `MPEG-TS: ${message}`);

function readPacket(ts: Uint8Array, at: number): Packet {
  if (ts[at] !== 0x47) throw invalid(`no sync byte at ${at}`);
  const pid = ((ts[at + 1]! & 0x1f) << 8) | ts[at + 2]!;
  const control = (ts[at + 3]! >> 4) & 3;
  let offset = at + 4;
  let adaptation: Uint8Array = new Uint8Array(0);
  if (control & 2) {
    adaptation = ts.subarray(offset, offset + 1 + ts[offset]!);
    offset += adaptation.length;
  }
  const payload = control & 1 ? ts.subarray(offset, at + PACKET) : new Uint8Array(0);
  return { pid, start: (ts[at + 1]! & 0x40) !== 0, adaptation, payload };
}

function packetsOf(ts: Uint8Array): Packet[] {
  if (ts.length % PACKET !== 0) throw invalid(`${ts.length} bytes is not a whole number of packets`);
  const packets: Packet[] = [];
  for (let at = 0; at < ts.length; at += PACKET) packets.push(readPacket(ts, at));
  return packets;
}

/** The PID of the first H.264 stream of the first program (PAT, then that program's PMT). */
function videoPid(packets: readonly Packet[]): number {
  const section = (p: Packet) => p.payload.subarray(1 + p.payload[0]!);
  const pat = packets.find((p) => p.pid === 0 && p.start);
  if (!pat) throw invalid('no PAT');
  const patSection = section(pat);
  const patEnd = 3 + (((patSection[1]! & 0x0f) << 8) | patSection[2]!) - 4;
  let pmtPid = -1;
  for (let i = 8; i + 4 <= patEnd; i += 4) {
    const program = (patSection[i]! << 8) | patSection[i + 1]!;
    if (program !== 0) {
      pmtPid = ((patSection[i + 2]! & 0x1f) << 8) | patSection[i + 3]!;
      break;
    }
  }
  const pmt = packets.find((p) => p.pid === pmtPid && p.start);
  if (!pmt) throw invalid('no PMT');
  const s = section(pmt);
  const end = 3 + (((s[1]! & 0x0f) << 8) | s[2]!) - 4;
  for (let i = 12 + (((s[10]! & 0x0f) << 8) | s[11]!); i + 5 <= end; i += 5 + (((s[i + 3]! & 0x0f) << 8) | s[i + 4]!)) {
    if (s[i] === H264_STREAM_TYPE) return ((s[i + 1]! & 0x1f) << 8) | s[i + 2]!;
  }
  throw invalid('no H.264 stream in the PMT');
}

interface Pes {
  /** Index of its first packet. */
  first: number;
  packets: Packet[];
}

function videoPes(packets: readonly Packet[], pid: number): Pes[] {
  const list: Pes[] = [];
  packets.forEach((packet, index) => {
    if (packet.pid !== pid) return;
    if (packet.start) list.push({ first: index, packets: [] });
    list[list.length - 1]?.packets.push(packet);
  });
  return list;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A PES's header bytes and its payload. */
function splitPes(data: Uint8Array): { header: Uint8Array; payload: Uint8Array } {
  if (data[0] !== 0 || data[1] !== 0 || data[2] !== 1) throw invalid('a video PES without a start code');
  const headerLength = 9 + data[8]!;
  return { header: data.slice(0, headerLength), payload: data.subarray(headerLength) };
}

/** How many packets carry a PES of `length` bytes whose first packet holds an adaptation field of `adaptation` bytes. */
function packetCount(length: number, adaptation: number): number {
  if (length === 0) return 0;
  const first = 184 - adaptation;
  return length <= first ? 1 : 1 + Math.ceil((length - first) / 184);
}

/**
 * Writes the packets carrying `pes` at `out[at]`: the first with `adaptation` (stuffed as needed), continuity counters
 * from `counter`. Returns where the next packet goes.
 */
function packetizeInto(out: Uint8Array, at: number, pid: number, pes: Uint8Array, adaptation: Uint8Array, counter: number): number {
  let from = 0;
  let first = true;
  while (from < pes.length) {
    const field = first ? adaptation : EMPTY;
    const take = Math.min(184 - field.length, pes.length - from);
    const packet = out.subarray(at, at + PACKET);
    packet.fill(0xff);
    packet[0] = 0x47;
    packet[1] = (first ? 0x40 : 0) | ((pid >> 8) & 0x1f);
    packet[2] = pid & 0xff;
    const stuffed = 184 - take;
    packet[3] = (stuffed > 0 ? 0x30 : 0x10) | (counter++ & 0x0f);
    writeStuffing(packet, field, stuffed);
    packet.set(pes.subarray(from, from + take), 4 + stuffed);
    at += PACKET;
    from += take;
    first = false;
  }
  return at;
}

const EMPTY = new Uint8Array(0);

/** An adaptation field of exactly `size` bytes (0: none) after a packet's header, holding `field`'s flags and data, padded with 0xff. */
function writeStuffing(packet: Uint8Array, field: Uint8Array, size: number): void {
  if (size === 0) return;
  packet[4] = size - 1;
  if (size >= 2) {
    packet.set(field.subarray(1), 5);
    if (field.length < 2) packet[5] = 0;
  }
}

/** A segment read once, so its video PES payloads can be replaced many times over (once per viewer). */
export interface PreparedTs {
  ts: Uint8Array;
  pid: number;
  /** Per packet: -1 a packet that passes through, -2 a video packet inside a PES, k >= 0 the first packet of PES k. */
  layout: Int32Array;
  pes: { header: Uint8Array; adaptation: Uint8Array; payload: Uint8Array }[];
  /** The first video packet's continuity counter. */
  counter: number;
}

export function prepareVideoPes(ts: Uint8Array): PreparedTs {
  const packets = packetsOf(ts);
  const pid = videoPid(packets);
  const list = videoPes(packets, pid);
  const layout = new Int32Array(packets.length).map((_, i) => (packets[i]!.pid === pid ? -2 : -1));
  const pes = list.map((entry, k) => {
    layout[entry.first] = k;
    return { ...splitPes(concat(entry.packets.map((p) => p.payload))), adaptation: entry.packets[0]!.adaptation };
  });
  return { ts, pid, layout, pes, counter: list[0] ? ts[list[0].first * PACKET + 3]! & 0x0f : 0 };
}

/** The prepared segment with video PES k's payload replaced by `bodies[k]`; other packets, tables and timing kept. */
export function writeVideoPes(prepared: PreparedTs, bodies: readonly Uint8Array[]): Uint8Array {
  const { ts, pid, layout, pes } = prepared;
  if (bodies.length !== pes.length) throw new RangeError(`${pes.length} video PES, ${bodies.length} bodies`);
  const whole = pes.map((entry, k) => {
    const header = entry.header.slice();
    const body = bodies[k]!;
    const length = header.length - 6 + body.length;
    // PES_packet_length 0 ("unbounded") is allowed for video and needed past 65535 bytes.
    const declared = (header[4]! << 8) | header[5]!;
    const size = declared === 0 || length > 0xffff ? 0 : length;
    header[4] = size >> 8;
    header[5] = size & 0xff;
    return concat([header, body]);
  });
  let packets = 0;
  for (const kind of layout) if (kind === -1) packets++;
  whole.forEach((bytes, k) => {
    packets += packetCount(bytes.length, pes[k]!.adaptation.length);
  });
  const out = new Uint8Array(packets * PACKET);
  let at = 0;
  let counter = prepared.counter;
  layout.forEach((kind, index) => {
    if (kind === -1) {
      out.set(ts.subarray(index * PACKET, (index + 1) * PACKET), at);
      at += PACKET;
    } else if (kind >= 0) {
      const next = packetizeInto(out, at, pid, whole[kind]!, pes[kind]!.adaptation, counter);
      counter += (next - at) / PACKET;
      at = next;
    }
  });
  return out;
}

/**
 * The segment with each video PES payload (one access unit, Annex B) replaced by `rewrite(payload, index)`. Other
 * streams, tables and timing fields are kept as they are.
 */
export function rewriteVideoPes(ts: Uint8Array, rewrite: (payload: Uint8Array, index: number) => Uint8Array): Uint8Array {
  const prepared = prepareVideoPes(ts);
  return writeVideoPes(
    prepared,
    prepared.pes.map((entry, index) => rewrite(entry.payload, index)),
  );
}

/** The video PES payloads of a segment, in order: one access unit each for the segments wmark writes. */
export function videoPesPayloads(ts: Uint8Array): Uint8Array[] {
  const packets = packetsOf(ts);
  return videoPes(packets, videoPid(packets)).map((pes) => splitPes(concat(pes.packets.map((p) => p.payload))).payload);
}
