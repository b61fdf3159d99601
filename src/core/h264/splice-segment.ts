// A shared segment (an HLS MPEG-TS segment or a raw H.264 stream) spliced with viewers' band streams. The segment is
// read once (prepareSharedSegment: packets, PES, NAL units, slice headers), then each viewer's band goes in
// (spliceViewer), which reads only the band stream: each video PES (one access unit, its AUD first) gets the band's
// slice in place of the shared band slice; timing, audio and tables stay as they are.
import { WmarkError } from '../errors.js';
import { type PreparedTs, prepareVideoPes, writeVideoPes } from '../mpegts/pes-rewrite.js';
import { groupAccessUnits, joinNalUnits, splitNalUnits } from './annexb.js';
import { type BandRows, prepareSharedStream, readSharedPictures, type SharedPicture, spliceBandInto, startsPicture } from './splice-band.js';

/** A shared segment read once, ready for any number of viewers' band streams. */
export interface PreparedSegment {
  pictures: SharedPicture[];
  /** The segment's packets and PES when it is MPEG-TS; absent for a raw H.264 stream. */
  ts?: PreparedTs;
}

/** MPEG-TS starts with a sync byte every 188 bytes; raw H.264 starts with a start code. */
export function isTransportStream(bytes: Uint8Array): boolean {
  return bytes[0] === 0x47 && (bytes.length < 189 || bytes[188] === 0x47);
}

export function prepareSharedSegment(bytes: Uint8Array): PreparedSegment {
  if (!isTransportStream(bytes)) return { pictures: prepareSharedStream(bytes) };
  const ts = prepareVideoPes(bytes);
  const units = ts.pes.map((pes, index) => {
    const unit = splitNalUnits(pes.payload);
    if (groupAccessUnits(unit, startsPicture).length !== 1) throw new WmarkError('BITSTREAM_INVALID', `video PES ${index} does not hold exactly one picture`);
    return unit;
  });
  return { pictures: readSharedPictures(units), ts };
}

/** The prepared segment with a viewer's band stream (one access unit per picture) spliced into `rows`. */
export function spliceViewer(prepared: PreparedSegment, band: Uint8Array, rows: BandRows): Uint8Array {
  const spliced = spliceBandInto(prepared.pictures, band, rows);
  if (!prepared.ts) return joinNalUnits(spliced.flat());
  return writeVideoPes(prepared.ts, spliced.map(joinNalUnits));
}

export function spliceTsSegment(ts: Uint8Array, band: Uint8Array, rows: BandRows): Uint8Array {
  if (!isTransportStream(ts)) throw new WmarkError('BITSTREAM_INVALID', 'MPEG-TS: no sync bytes at the start of the segment');
  return spliceViewer(prepareSharedSegment(ts), band, rows);
}
