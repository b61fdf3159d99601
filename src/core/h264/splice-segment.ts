// A shared HLS segment (MPEG-TS) spliced with a viewer's band stream: each video PES (one access unit, its AUD
// first) gets the band's slice in place of the shared band slice; timing, audio and tables stay as they are.
import { WmarkError } from '../errors.js';
import { rewriteVideoPes } from '../mpegts/pes-rewrite.js';
import { groupAccessUnits, joinNalUnits, splitNalUnits } from './annexb.js';
import { type BandRows, ParameterSets, spliceAccessUnit, startsPicture } from './splice-band.js';

export function spliceTsSegment(ts: Uint8Array, band: Uint8Array, rows: BandRows): Uint8Array {
  const bandUnits = groupAccessUnits(splitNalUnits(band), startsPicture);
  const sets = { shared: new ParameterSets(), band: new ParameterSets() };
  let pictures = 0;
  const out = rewriteVideoPes(ts, (payload, index) => {
    const units = splitNalUnits(payload);
    if (groupAccessUnits(units, startsPicture).length !== 1) throw new WmarkError('BITSTREAM_INVALID', `video PES ${index} does not hold exactly one picture`);
    const bandUnit = bandUnits[index];
    if (!bandUnit) throw new WmarkError('SPLICE_MISMATCH', `the band stream ends before picture ${index + 1} of the segment`);
    sets.shared.read(units);
    sets.band.read(bandUnit);
    pictures++;
    return joinNalUnits(spliceAccessUnit(units, bandUnit, sets, rows));
  });
  if (pictures !== bandUnits.length) throw new WmarkError('SPLICE_MISMATCH', `the segment has ${pictures} pictures, the band stream ${bandUnits.length}`);
  return out;
}
