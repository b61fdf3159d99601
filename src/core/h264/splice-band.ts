// The band splice: into each access unit of a shared stream, the band stream's slice goes in place of the shared
// stream's band slice, under a rewritten header that makes it one slice of the shared picture. The slice data is
// copied as it is: intra prediction, CABAC contexts and motion-vector prediction never cross a slice boundary.
import { WmarkError } from '../errors.js';
import { groupAccessUnits, isSlice, joinNalUnits, makeNalUnit, NAL_PPS, NAL_SPS, type NalUnit, rbspOf, splitNalUnits, toRbsp } from './annexb.js';
import { BitReader } from './bits.js';
import { type Pps, parsePps, parseSps, type Sps, slicesDecodeAlike } from './parameter-sets.js';
import { type ParsedSlice, parseSliceHeader, type SliceHeader, sliceQp, writeSliceHeader } from './slice-header.js';

/** The band's macroblock rows in the shared picture: top included, bottom excluded. */
export interface BandRows {
  top: number;
  bottom: number;
}

/** The parameter sets seen so far in one stream, updated access unit by access unit. */
export class ParameterSets {
  private readonly sps = new Map<number, Sps>();
  private readonly pps = new Map<number, Pps>();

  /** Takes in the SPS and PPS units among `units`. */
  read(units: readonly NalUnit[]): void {
    for (const unit of units) {
      if (unit.type === NAL_SPS) {
        const sps = parseSps(rbspOf(unit));
        this.sps.set(sps.id, sps);
      } else if (unit.type === NAL_PPS) {
        const pps = parsePps(rbspOf(unit), (id) => this.spsOf(id));
        this.pps.set(pps.id, pps);
      }
    }
  }

  spsOf(id: number): Sps {
    const sps = this.sps.get(id);
    if (!sps) throw new WmarkError('BITSTREAM_INVALID', `H.264 SPS ${id} is used before it is sent`);
    return sps;
  }

  ppsOf(id: number): Pps {
    const pps = this.pps.get(id);
    if (!pps) throw new WmarkError('BITSTREAM_INVALID', `H.264 PPS ${id} is used before it is sent`);
    return pps;
  }

  /**
   * Parses a slice unit's header under the parameter sets its PPS id names. `headerOnly` reads just the unit's first
   * bytes (a slice header is far shorter), for slices whose data is not needed: the RBSP returned is then partial.
   */
  slice(unit: NalUnit, headerOnly = false): { parsed: ParsedSlice; rbsp: Uint8Array; sps: Sps; pps: Pps } {
    if (headerOnly && unit.bytes.length > HEADER_PREFIX) {
      try {
        return this.parseSlice(unit, toRbsp(unit.bytes.subarray(1, HEADER_PREFIX)));
      } catch {
        // A header longer than the prefix (long reordering or marking lists): read the whole unit.
      }
    }
    return this.parseSlice(unit, rbspOf(unit));
  }

  private parseSlice(unit: NalUnit, rbsp: Uint8Array): { parsed: ParsedSlice; rbsp: Uint8Array; sps: Sps; pps: Pps } {
    const pps = this.ppsOf(new BitReader(rbsp).skipUe(2));
    const sps = this.spsOf(pps.spsId);
    return { parsed: parseSliceHeader(rbsp, unit, sps, pps), rbsp, sps, pps };
  }
}

/** Bytes of a slice unit read for its header alone. */
const HEADER_PREFIX = 256;

const mismatch = (message: string) => new WmarkError('SPLICE_MISMATCH', message);

/** An access unit of the shared stream read once: its units and each slice's header, ready for any viewer's band. */
export interface SharedPicture {
  units: readonly NalUnit[];
  /** Per unit: its slice header in context (undefined for units that are not slices). */
  slices: readonly (SliceInContext | undefined)[];
}

/** Reads a shared access unit's slice headers under `sets` (which must have read the parameter sets up to it). */
function readSharedPicture(units: readonly NalUnit[], sets: ParameterSets): SharedPicture {
  return { units, slices: units.map((unit) => (isSlice(unit) ? sets.slice(unit, true) : undefined)) };
}

/** A shared picture with its band slice replaced by the slices of `band`, read under `bandSets`. */
function splicePicture(shared: SharedPicture, band: readonly NalUnit[], bandSets: ParameterSets, rows: BandRows): NalUnit[] {
  const bandSlices = band.filter(isSlice).map((unit) => bandSets.slice(unit));
  if (bandSlices.length === 0) throw mismatch('a band access unit has no slice');
  const out: NalUnit[] = [];
  let replaced = false;
  // The slice after the band's must start at the band's bottom row (a picture may hold several bands' slices).
  let next: number | undefined;
  let heightInMbs = 0;
  shared.units.forEach((unit, i) => {
    const target = shared.slices[i];
    if (!target) {
      out.push(unit);
      return;
    }
    const width = target.sps.widthInMbs;
    heightInMbs = target.sps.heightInMapUnits;
    const first = target.parsed.header.firstMbInSlice;
    if (next !== undefined && first !== next) throw bandEndsElsewhere(rows);
    next = undefined;
    if (first < rows.top * width || first >= rows.bottom * width) {
      if (target.parsed.header.disableDeblockingFilterIdc === 0)
        throw mismatch('a shared slice is deblocked across slice edges (disable_deblocking_filter_idc 0)');
      out.push(unit);
      return;
    }
    if (first !== rows.top * width || replaced) throw mismatch(`the shared stream's band slice does not start at macroblock row ${rows.top}`);
    for (const source of bandSlices) out.push(rewriteBandSlice(source, target, rows));
    replaced = true;
    next = rows.bottom * width;
  });
  if (!replaced) throw mismatch(`a shared access unit has no slice at macroblock row ${rows.top}`);
  if (next !== undefined && rows.bottom !== heightInMbs) throw bandEndsElsewhere(rows);
  return out;
}

const bandEndsElsewhere = (rows: BandRows) => mismatch(`the shared stream's band slice does not end at macroblock row ${rows.bottom}`);

type SliceInContext = ReturnType<ParameterSets['slice']>;

/** A band slice made a slice of the shared picture: numbers from the shared slice, coding choices from the band's. */
function rewriteBandSlice(source: SliceInContext, target: SliceInContext, rows: BandRows): NalUnit {
  checkFits(source, target, rows);
  const from = source.parsed.header;
  const into = target.parsed.header;
  const header: SliceHeader = {
    ...from,
    nalType: into.nalType,
    nalRefIdc: into.nalRefIdc,
    firstMbInSlice: from.firstMbInSlice + rows.top * target.sps.widthInMbs,
    sliceType: into.sliceType >= 5 ? (from.sliceType % 5) + 5 : from.sliceType % 5,
    ppsId: into.ppsId,
    frameNum: into.frameNum,
    idrPicId: into.idrPicId,
    pocLsb: into.pocLsb,
    deltaPocBottom: into.deltaPocBottom,
    deltaPoc: into.deltaPoc,
    // Explicit, so the band's reference count holds whatever the shared PPS's default is.
    numRefIdxActiveOverride: true,
    refPicMarking: into.refPicMarking,
    // SliceQP_Y stays the band's: CABAC's initial state and every macroblock QP depend on it.
    sliceQpDelta: sliceQp(from, source.pps) - target.pps.picInitQp,
    disableDeblockingFilterIdc: from.disableDeblockingFilterIdc === 1 ? 1 : 2,
  };
  const writer = writeSliceHeader(header, target.sps, target.pps);
  const data = new BitReader(source.rbsp);
  data.pos = source.parsed.dataBitOffset;
  let rbsp: Uint8Array;
  if (source.pps.cabac) rbsp = writer.bytes(source.rbsp.subarray(source.parsed.dataBitOffset / 8));
  else {
    // CAVLC data is not byte aligned: copy it up to the stop bit and end the RBSP again.
    writer.copyBits(data, data.stopBitPosition() - data.pos).bit(1);
    while (!writer.byteAligned()) writer.bit(0);
    rbsp = writer.bytes();
  }
  return makeNalUnit(into.nalType, into.nalRefIdc, rbsp);
}

function checkFits(source: SliceInContext, target: SliceInContext, rows: BandRows): void {
  const from = source.parsed.header;
  const into = target.parsed.header;
  if (source.sps.widthInMbs !== target.sps.widthInMbs)
    throw mismatch(`the band is ${source.sps.widthInMbs} macroblocks wide, the shared picture ${target.sps.widthInMbs}`);
  if (!source.sps.frameMbsOnly || !target.sps.frameMbsOnly) throw mismatch('the band splice needs progressive frames');
  if (source.sps.heightInMapUnits !== rows.bottom - rows.top)
    throw mismatch(`the band stream is ${source.sps.heightInMapUnits} macroblock rows high, the band ${rows.bottom - rows.top}`);
  const unlike = slicesDecodeAlike(source.pps, target.pps);
  if (unlike.length > 0) throw mismatch(`the band's PPS differs from the shared PPS in ${unlike.join(', ')}`);
  if (!target.pps.deblockingFilterControlPresent) throw mismatch('the shared PPS cannot turn deblocking off at slice edges');
  if (from.sliceType % 5 !== into.sliceType % 5) throw mismatch(`frame ${into.frameNum}: band slice type ${from.sliceType % 5}, shared ${into.sliceType % 5}`);
  if (from.nalType !== into.nalType) throw mismatch(`frame ${into.frameNum}: the band and the shared picture disagree on IDR`);
  if ((from.nalRefIdc === 0) !== (into.nalRefIdc === 0))
    throw mismatch(`frame ${into.frameNum}: the band and the shared picture disagree on being a reference`);
  if (JSON.stringify(from.refPicMarking) !== JSON.stringify(into.refPicMarking) && !into.refPicMarking?.idr) {
    throw mismatch(`frame ${into.frameNum}: the band marks reference pictures unlike the shared stream`);
  }
  if (from.refListModification.some((list) => list !== undefined) && from.frameNum !== into.frameNum) {
    throw mismatch(`frame ${into.frameNum}: a reordered band reference list needs the shared frame_num`);
  }
  if (from.numRefIdxL0Active > target.sps.maxNumRefFrames && from.sliceType % 5 !== 2) {
    throw mismatch(`the band refers to ${from.numRefIdxL0Active} pictures, the shared stream keeps ${target.sps.maxNumRefFrames}`);
  }
}

/** The first slice of a picture: first_mb_in_slice 0 (the first ue of the RBSP). */
export function startsPicture(unit: NalUnit): boolean {
  // first_mb_in_slice is an exp-Golomb code of a few bytes at most.
  return new BitReader(toRbsp(unit.bytes.subarray(1, 33))).skipUe(0) === 0;
}

/** A whole shared Annex-B stream spliced with a band stream of as many access units. */
export function spliceStreams(shared: Uint8Array, band: Uint8Array, rows: BandRows): Uint8Array {
  return joinNalUnits(spliceBandInto(prepareSharedStream(shared), band, rows).flat());
}

/** A shared Annex-B stream read once into its pictures, for splicing many band streams into it. */
export function prepareSharedStream(shared: Uint8Array): SharedPicture[] {
  return readSharedPictures(groupAccessUnits(splitNalUnits(shared), startsPicture));
}

/** Shared access units read in order (their parameter sets first). */
export function readSharedPictures(units: readonly (readonly NalUnit[])[]): SharedPicture[] {
  const sets = new ParameterSets();
  return units.map((unit) => {
    sets.read(unit);
    return readSharedPicture(unit, sets);
  });
}

/** The spliced access units of `pictures` with the band stream `band` (one access unit per picture) in `rows`. */
export function spliceBandInto(pictures: readonly SharedPicture[], band: Uint8Array, rows: BandRows): NalUnit[][] {
  const bandUnits = groupAccessUnits(splitNalUnits(band), startsPicture);
  if (pictures.length !== bandUnits.length) throw mismatch(`the shared stream has ${pictures.length} pictures, the band stream ${bandUnits.length}`);
  const sets = new ParameterSets();
  return pictures.map((picture, i) => {
    sets.read(bandUnits[i]!);
    return splicePicture(picture, bandUnits[i]!, sets, rows);
  });
}
