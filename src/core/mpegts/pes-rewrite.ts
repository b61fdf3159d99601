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

/** Packets carrying `pes`: the first with `adaptation` (stuffed as needed), continuity counters from `counter`. */
function packetize(pid: number, pes: Uint8Array, adaptation: Uint8Array, counter: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  let first = true;
  while (at < pes.length) {
    const field = first ? adaptation : new Uint8Array(0);
    const room = 184 - field.length;
    const take = Math.min(room, pes.length - at);
    const packet = new Uint8Array(PACKET).fill(0xff);
    packet[0] = 0x47;
    packet[1] = (first ? 0x40 : 0) | ((pid >> 8) & 0x1f);
    packet[2] = pid & 0xff;
    const stuffed = stuff(field, 184 - take);
    packet[3] = (stuffed.length > 0 ? 0x30 : 0x10) | (counter++ & 0x0f);
    packet.set(stuffed, 4);
    packet.set(pes.subarray(at, at + take), 4 + stuffed.length);
    out.push(packet);
    at += take;
    first = false;
  }
  return out;
}

/** An adaptation field of exactly `size` bytes (0: none) holding `field`'s flags and data, padded with 0xff. */
function stuff(field: Uint8Array, size: number): Uint8Array {
  if (size === 0) return field;
  const out = new Uint8Array(size).fill(0xff);
  out[0] = size - 1;
  if (size >= 2) {
    out.set(field.subarray(1), 1);
    if (field.length < 2) out[1] = 0;
  }
  return out;
}

/**
 * The segment with each video PES payload (one access unit, Annex B) replaced by `rewrite(payload, index)`. Other
 * streams, tables and timing fields are kept as they are.
 */
export function rewriteVideoPes(ts: Uint8Array, rewrite: (payload: Uint8Array, index: number) => Uint8Array): Uint8Array {
  const packets = packetsOf(ts);
  const pid = videoPid(packets);
  const list = videoPes(packets, pid);
  const replacement = new Map<number, Uint8Array[]>();
  let counter = list[0] ? ts[list[0].first * PACKET + 3]! & 0x0f : 0;
  list.forEach((pes, index) => {
    const { header, payload } = splitPes(concat(pes.packets.map((p) => p.payload)));
    const body = rewrite(payload, index);
    const length = header.length - 6 + body.length;
    // PES_packet_length 0 ("unbounded") is allowed for video and needed past 65535 bytes.
    const declared = (header[4]! << 8) | header[5]!;
    const size = declared === 0 || length > 0xffff ? 0 : length;
    header[4] = size >> 8;
    header[5] = size & 0xff;
    const out = packetize(pid, concat([header, body]), pes.packets[0]!.adaptation, counter);
    counter += out.length;
    replacement.set(pes.first, out);
  });
  const out: Uint8Array[] = [];
  packets.forEach((packet, index) => {
    if (packet.pid !== pid) out.push(ts.subarray(index * PACKET, (index + 1) * PACKET));
    else for (const p of replacement.get(index) ?? []) out.push(p);
  });
  return concat(out);
}

/** The video PES payloads of a segment, in order: one access unit each for the segments wmark writes. */
export function videoPesPayloads(ts: Uint8Array): Uint8Array[] {
  const packets = packetsOf(ts);
  return videoPes(packets, videoPid(packets)).map((pes) => splitPes(concat(pes.packets.map((p) => p.payload))).payload);
}
