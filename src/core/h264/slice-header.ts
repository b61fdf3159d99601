// H.264 slice headers read and written field by field (the order of the standard's slice_header()), and where the
// slice data begins, so a slice can get a new header in front of its data unchanged.
import { WmarkError } from '../errors.js';
import { BitReader, BitWriter } from './bits.js';
import type { Pps, Sps } from './parameter-sets.js';

export const SLICE_P = 0;
export const SLICE_B = 1;
export const SLICE_I = 2;
const SLICE_SP = 3;
const SLICE_SI = 4;

/** dec_ref_pic_marking(): the IDR flags, or the adaptive flag and its memory-management ops as coded (all ue). */
type RefPicMarking = { idr: true; noOutputOfPriorPics: boolean; longTermReference: boolean } | { idr: false; adaptive: boolean; ops: number[] };

export interface SliceHeader {
  nalType: number;
  nalRefIdc: number;
  firstMbInSlice: number;
  /** slice_type as coded (5..9 say every slice of the picture has this type). */
  sliceType: number;
  ppsId: number;
  colourPlaneId: number;
  frameNum: number;
  fieldPic: boolean;
  bottomField: boolean;
  idrPicId: number;
  pocLsb: number;
  deltaPocBottom: number;
  deltaPoc: [number, number];
  redundantPicCnt: number;
  directSpatialMvPred: boolean;
  numRefIdxActiveOverride: boolean;
  numRefIdxL0Active: number;
  numRefIdxL1Active: number;
  /** ref_pic_list_modification() per list: undefined when its flag is 0, else the ue values as coded (ending in 3). */
  refListModification: [number[] | undefined, number[] | undefined];
  refPicMarking: RefPicMarking | undefined;
  cabacInitIdc: number;
  sliceQpDelta: number;
  spForSwitch: boolean;
  sliceQsDelta: number;
  disableDeblockingFilterIdc: number;
  sliceAlphaC0OffsetDiv2: number;
  sliceBetaOffsetDiv2: number;
}

export interface ParsedSlice {
  header: SliceHeader;
  /** Bit offset in the RBSP where slice_data() starts (after cabac_alignment_one_bits under CABAC). */
  dataBitOffset: number;
}

const kind = (sliceType: number) => sliceType % 5;

function isIdrNal(nalType: number): boolean {
  return nalType === 5;
}

/** Reads the slice header at the start of a slice NAL unit's RBSP. */
export function parseSliceHeader(rbsp: Uint8Array, nal: { type: number; refIdc: number }, sps: Sps, pps: Pps): ParsedSlice {
  const r = new BitReader(rbsp);
  const h: SliceHeader = {
    nalType: nal.type,
    nalRefIdc: nal.refIdc,
    firstMbInSlice: r.ue(),
    sliceType: r.ue(),
    ppsId: r.ue(),
    colourPlaneId: 0,
    frameNum: 0,
    fieldPic: false,
    bottomField: false,
    idrPicId: 0,
    pocLsb: 0,
    deltaPocBottom: 0,
    deltaPoc: [0, 0],
    redundantPicCnt: 0,
    directSpatialMvPred: false,
    numRefIdxActiveOverride: false,
    numRefIdxL0Active: pps.numRefIdxL0Default,
    numRefIdxL1Active: pps.numRefIdxL1Default,
    refListModification: [undefined, undefined],
    refPicMarking: undefined,
    cabacInitIdc: 0,
    sliceQpDelta: 0,
    spForSwitch: false,
    sliceQsDelta: 0,
    disableDeblockingFilterIdc: 0,
    sliceAlphaC0OffsetDiv2: 0,
    sliceBetaOffsetDiv2: 0,
  };
  const type = kind(h.sliceType);
  readPictureIdentity(r, h, sps, pps);
  if (type === SLICE_B) h.directSpatialMvPred = r.flag();
  if (type === SLICE_P || type === SLICE_SP || type === SLICE_B) {
    h.numRefIdxActiveOverride = r.flag();
    if (h.numRefIdxActiveOverride) {
      h.numRefIdxL0Active = r.ue() + 1;
      if (type === SLICE_B) h.numRefIdxL1Active = r.ue() + 1;
    }
  }
  if (type !== SLICE_I && type !== SLICE_SI) h.refListModification[0] = readModification(r);
  if (type === SLICE_B) h.refListModification[1] = readModification(r);
  if ((pps.weightedPred && (type === SLICE_P || type === SLICE_SP)) || (pps.weightedBipredIdc === 1 && type === SLICE_B)) {
    throw new WmarkError('BITSTREAM_INVALID', 'H.264 slices with explicit weighted prediction are not supported');
  }
  if (nal.refIdc !== 0) h.refPicMarking = readMarking(r, isIdrNal(nal.type));
  if (pps.cabac && type !== SLICE_I && type !== SLICE_SI) h.cabacInitIdc = r.ue();
  h.sliceQpDelta = r.se();
  if (type === SLICE_SP || type === SLICE_SI) {
    if (type === SLICE_SP) h.spForSwitch = r.flag();
    h.sliceQsDelta = r.se();
  }
  if (pps.deblockingFilterControlPresent) readDeblocking(r, h);
  if (pps.cabac) while (!r.byteAligned()) if (r.bit() !== 1) throw new WmarkError('BITSTREAM_INVALID', 'H.264 cabac_alignment_one_bit is 0');
  return { header: h, dataBitOffset: r.pos };
}

/** The header's fields that say which picture the slice belongs to: its colour plane, frame_num, field, IDR id and POC. */
function readPictureIdentity(r: BitReader, h: SliceHeader, sps: Sps, pps: Pps): void {
  if (sps.separateColourPlane) h.colourPlaneId = r.u(2);
  h.frameNum = r.u(sps.log2MaxFrameNum);
  if (!sps.frameMbsOnly) {
    h.fieldPic = r.flag();
    if (h.fieldPic) h.bottomField = r.flag();
  }
  if (isIdrNal(h.nalType)) h.idrPicId = r.ue();
  if (sps.pocType === 0) {
    h.pocLsb = r.u(sps.log2MaxPocLsb);
    if (pps.bottomFieldPicOrderInFramePresent && !h.fieldPic) h.deltaPocBottom = r.se();
  }
  if (sps.pocType === 1 && !sps.deltaPicOrderAlwaysZero) {
    h.deltaPoc[0] = r.se();
    if (pps.bottomFieldPicOrderInFramePresent && !h.fieldPic) h.deltaPoc[1] = r.se();
  }
  if (pps.redundantPicCntPresent) h.redundantPicCnt = r.ue();
}

/** disable_deblocking_filter_idc and, unless it turns the filter off, the filter's offsets. */
function readDeblocking(r: BitReader, h: SliceHeader): void {
  h.disableDeblockingFilterIdc = r.ue();
  if (h.disableDeblockingFilterIdc !== 1) {
    h.sliceAlphaC0OffsetDiv2 = r.se();
    h.sliceBetaOffsetDiv2 = r.se();
  }
}

function readModification(r: BitReader): number[] | undefined {
  if (!r.flag()) return undefined;
  const values: number[] = [];
  for (;;) {
    const idc = r.ue();
    values.push(idc);
    if (idc === 3) return values;
    if (idc > 5) throw new WmarkError('BITSTREAM_INVALID', `H.264 modification_of_pic_nums_idc ${idc}`);
    values.push(r.ue());
  }
}

function readMarking(r: BitReader, idr: boolean): RefPicMarking {
  if (idr) return { idr: true, noOutputOfPriorPics: r.flag(), longTermReference: r.flag() };
  const adaptive = r.flag();
  const ops: number[] = [];
  if (adaptive) {
    for (;;) {
      const op = r.ue();
      ops.push(op);
      if (op === 0) break;
      if (op === 1 || op === 3) ops.push(r.ue());
      if (op === 2) ops.push(r.ue());
      if (op === 3 || op === 6) ops.push(r.ue());
      if (op === 4) ops.push(r.ue());
    }
  }
  return { idr: false, adaptive, ops };
}

/** Writes a slice header; under CABAC it ends with the alignment one-bits, so slice data follows byte aligned. */
export function writeSliceHeader(h: SliceHeader, sps: Sps, pps: Pps): BitWriter {
  const w = new BitWriter();
  const type = kind(h.sliceType);
  w.ue(h.firstMbInSlice).ue(h.sliceType).ue(h.ppsId);
  if (sps.separateColourPlane) w.u(2, h.colourPlaneId);
  w.u(sps.log2MaxFrameNum, h.frameNum);
  if (!sps.frameMbsOnly) {
    w.flag(h.fieldPic);
    if (h.fieldPic) w.flag(h.bottomField);
  }
  if (isIdrNal(h.nalType)) w.ue(h.idrPicId);
  if (sps.pocType === 0) {
    w.u(sps.log2MaxPocLsb, h.pocLsb);
    if (pps.bottomFieldPicOrderInFramePresent && !h.fieldPic) w.se(h.deltaPocBottom);
  }
  if (sps.pocType === 1 && !sps.deltaPicOrderAlwaysZero) {
    w.se(h.deltaPoc[0]);
    if (pps.bottomFieldPicOrderInFramePresent && !h.fieldPic) w.se(h.deltaPoc[1]);
  }
  if (pps.redundantPicCntPresent) w.ue(h.redundantPicCnt);
  if (type === SLICE_B) w.flag(h.directSpatialMvPred);
  if (type === SLICE_P || type === SLICE_SP || type === SLICE_B) {
    w.flag(h.numRefIdxActiveOverride);
    if (h.numRefIdxActiveOverride) {
      w.ue(h.numRefIdxL0Active - 1);
      if (type === SLICE_B) w.ue(h.numRefIdxL1Active - 1);
    }
  }
  if (type !== SLICE_I && type !== SLICE_SI) writeModification(w, h.refListModification[0]);
  if (type === SLICE_B) writeModification(w, h.refListModification[1]);
  if (h.nalRefIdc !== 0) writeMarking(w, h.refPicMarking);
  if (pps.cabac && type !== SLICE_I && type !== SLICE_SI) w.ue(h.cabacInitIdc);
  w.se(h.sliceQpDelta);
  if (type === SLICE_SP || type === SLICE_SI) {
    if (type === SLICE_SP) w.flag(h.spForSwitch);
    w.se(h.sliceQsDelta);
  }
  if (pps.deblockingFilterControlPresent) {
    w.ue(h.disableDeblockingFilterIdc);
    if (h.disableDeblockingFilterIdc !== 1) w.se(h.sliceAlphaC0OffsetDiv2).se(h.sliceBetaOffsetDiv2);
  }
  if (pps.cabac) while (!w.byteAligned()) w.bit(1);
  return w;
}

function writeModification(w: BitWriter, values: number[] | undefined): void {
  w.flag(values !== undefined);
  for (const value of values ?? []) w.ue(value);
}

function writeMarking(w: BitWriter, marking: RefPicMarking | undefined): void {
  if (!marking) throw new WmarkError('BITSTREAM_INVALID', 'a reference slice needs dec_ref_pic_marking()');
  if (marking.idr) {
    w.flag(marking.noOutputOfPriorPics).flag(marking.longTermReference);
    return;
  }
  w.flag(marking.adaptive);
  for (const op of marking.ops) w.ue(op);
}

/** SliceQP_Y of a slice under its PPS. */
export function sliceQp(h: SliceHeader, pps: Pps): number {
  return pps.picInitQp + h.sliceQpDelta;
}
