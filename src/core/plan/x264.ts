// The x264 encoder settings every ffmpeg plan shares: the caller's preset and CRF, and the fixed closed GOP that makes segments cut cleanly.

export interface EncodeOptions {
  preset: string;
  crf: number;
}

export function x264Gop(gop: number): string[] {
  // Fixed GOPs, no scene-cut keyframes, closed GOPs: segment boundaries land on IDR frames and each segment decodes alone.
  return ['-g', String(gop), '-keyint_min', String(gop), '-sc_threshold', '0', '-x264-params', 'open-gop=0'];
}
