// The sequence and picture parameter set fields a slice header's syntax depends on, and the PPS fields that shape
// how slice data decodes (so two streams' slices can share one PPS).
import { WmarkError } from '../errors.js';
import { BitReader } from './bits.js';

export interface Sps {
  id: number;
  profileIdc: number;
  chromaFormatIdc: number;
  separateColourPlane: boolean;
  bitDepthLuma: number;
  bitDepthChroma: number;
  log2MaxFrameNum: number;
  pocType: number;
  log2MaxPocLsb: number;
  deltaPicOrderAlwaysZero: boolean;
  maxNumRefFrames: number;
  widthInMbs: number;
  heightInMapUnits: number;
  frameMbsOnly: boolean;
  direct8x8Inference: boolean;
}

export interface Pps {
  id: number;
  spsId: number;
  cabac: boolean;
  bottomFieldPicOrderInFramePresent: boolean;
  numRefIdxL0Default: number;
  numRefIdxL1Default: number;
  weightedPred: boolean;
  weightedBipredIdc: number;
  picInitQp: number;
  chromaQpIndexOffset: number;
  deblockingFilterControlPresent: boolean;
  constrainedIntraPred: boolean;
  redundantPicCntPresent: boolean;
  transform8x8Mode: boolean;
  /** The scaling matrices as coded (empty when absent), compared bit for bit. */
  scalingMatrixBits: string;
  secondChromaQpIndexOffset: number;
}

/** Profiles whose SPS carries chroma format, bit depths and scaling matrices. */
const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

export function parseSps(rbsp: Uint8Array): Sps {
  const r = new BitReader(rbsp);
  const profileIdc = r.u(8);
  r.u(16); // constraint flags, reserved bits, level_idc
  const id = r.ue();
  let chromaFormatIdc = 1;
  let separateColourPlane = false;
  let bitDepthLuma = 8;
  let bitDepthChroma = 8;
  if (HIGH_PROFILES.has(profileIdc)) {
    chromaFormatIdc = r.ue();
    if (chromaFormatIdc === 3) separateColourPlane = r.flag();
    bitDepthLuma = r.ue() + 8;
    bitDepthChroma = r.ue() + 8;
    r.flag(); // qpprime_y_zero_transform_bypass_flag
    if (r.flag()) skipScalingMatrices(r, chromaFormatIdc === 3 ? 12 : 8);
  }
  const log2MaxFrameNum = r.ue() + 4;
  const pocType = r.ue();
  let log2MaxPocLsb = 0;
  let deltaPicOrderAlwaysZero = false;
  if (pocType === 0) log2MaxPocLsb = r.ue() + 4;
  else if (pocType === 1) {
    deltaPicOrderAlwaysZero = r.flag();
    r.se();
    r.se();
    const cycle = r.ue();
    for (let i = 0; i < cycle; i++) r.se();
  }
  const maxNumRefFrames = r.ue();
  r.flag(); // gaps_in_frame_num_value_allowed_flag
  const widthInMbs = r.ue() + 1;
  const heightInMapUnits = r.ue() + 1;
  const frameMbsOnly = r.flag();
  if (!frameMbsOnly) r.flag(); // mb_adaptive_frame_field_flag
  const direct8x8Inference = r.flag();
  return {
    id,
    profileIdc,
    chromaFormatIdc,
    separateColourPlane,
    bitDepthLuma,
    bitDepthChroma,
    log2MaxFrameNum,
    pocType,
    log2MaxPocLsb,
    deltaPicOrderAlwaysZero,
    maxNumRefFrames,
    widthInMbs,
    heightInMapUnits,
    frameMbsOnly,
    direct8x8Inference,
  };
}

export function parsePps(rbsp: Uint8Array, spsById: (id: number) => Sps): Pps {
  const r = new BitReader(rbsp);
  const id = r.ue();
  const spsId = r.ue();
  const cabac = r.flag();
  const bottomFieldPicOrderInFramePresent = r.flag();
  if (r.ue() !== 0) throw new WmarkError('BITSTREAM_INVALID', 'H.264 slice groups (FMO) are not supported');
  const numRefIdxL0Default = r.ue() + 1;
  const numRefIdxL1Default = r.ue() + 1;
  const weightedPred = r.flag();
  const weightedBipredIdc = r.u(2);
  const picInitQp = 26 + r.se();
  r.se(); // pic_init_qs_minus26
  const chromaQpIndexOffset = r.se();
  const deblockingFilterControlPresent = r.flag();
  const constrainedIntraPred = r.flag();
  const redundantPicCntPresent = r.flag();
  let transform8x8Mode = false;
  let scalingMatrixBits = '';
  let secondChromaQpIndexOffset = chromaQpIndexOffset;
  if (r.moreRbspData()) {
    transform8x8Mode = r.flag();
    if (r.flag()) {
      const sps = spsById(spsId);
      const start = r.pos;
      skipScalingMatrices(r, 6 + (sps.chromaFormatIdc === 3 ? 6 : 2) * (transform8x8Mode ? 1 : 0));
      const end = r.pos;
      r.pos = start;
      for (let i = start; i < end; i++) scalingMatrixBits += r.bit();
    }
    secondChromaQpIndexOffset = r.se();
  }
  return {
    id,
    spsId,
    cabac,
    bottomFieldPicOrderInFramePresent,
    numRefIdxL0Default,
    numRefIdxL1Default,
    weightedPred,
    weightedBipredIdc,
    picInitQp,
    chromaQpIndexOffset,
    deblockingFilterControlPresent,
    constrainedIntraPred,
    redundantPicCntPresent,
    transform8x8Mode,
    scalingMatrixBits,
    secondChromaQpIndexOffset,
  };
}

/** Skips `count` scaling_list() entries, each behind its present flag (4x4 lists first, then 8x8). */
function skipScalingMatrices(r: BitReader, count: number): void {
  for (let i = 0; i < count; i++) {
    if (!r.flag()) continue;
    const size = i < 6 ? 16 : 64;
    let last = 8;
    let next = 8;
    for (let j = 0; j < size && next !== 0; j++) {
      next = (last + r.se() + 256) % 256;
      if (next !== 0) last = next;
    }
  }
}

/** The PPS fields that change how a slice's data decodes; two slices may share a PPS only when these agree. */
export function slicesDecodeAlike(a: Pps, b: Pps): string[] {
  const keys = [
    'cabac',
    'weightedPred',
    'weightedBipredIdc',
    'chromaQpIndexOffset',
    'constrainedIntraPred',
    'transform8x8Mode',
    'scalingMatrixBits',
    'secondChromaQpIndexOffset',
  ] as const;
  return keys.filter((key) => a[key] !== b[key]);
}
