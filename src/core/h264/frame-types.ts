// The frame types of an H.264 stream in decode order, as x264's qpfile names them, so a second encode can be given
// the same IDR and I frames as the first.
import { WmarkError } from '../errors.js';
import { groupAccessUnits, isSlice, NAL_IDR, splitNalUnits } from './annexb.js';
import { SLICE_B, SLICE_I, SLICE_P } from './slice-header.js';
import { ParameterSets, startsPicture } from './splice-band.js';

export type FrameType = 'I' | 'i' | 'P' | 'B';

export function frameTypesOf(stream: Uint8Array): FrameType[] {
  const sets = new ParameterSets();
  return groupAccessUnits(splitNalUnits(stream), startsPicture).map((unit) => {
    sets.read(unit);
    const slices = unit.filter(isSlice);
    const first = slices[0];
    if (!first) throw new WmarkError('BITSTREAM_INVALID', 'an H.264 access unit has no slice');
    if (first.type === NAL_IDR) return 'I';
    const kinds = new Set(slices.map((slice) => sets.slice(slice, true).parsed.header.sliceType % 5));
    if (kinds.has(SLICE_B)) return 'B';
    if (kinds.has(SLICE_P)) return 'P';
    if (kinds.size === 1 && kinds.has(SLICE_I)) return 'i';
    throw new WmarkError('BITSTREAM_INVALID', `an H.264 picture of slice types ${[...kinds].join(', ')}`);
  });
}
