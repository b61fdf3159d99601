// How the bench's ffmpeg runs begin, spelled once for every suite.

/** No banner, no reading of the terminal (a suite's ffmpeg never asks), only errors on stderr, and outputs overwritten. */
export const FFMPEG_QUIET: readonly string[] = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];

/** For a run whose stderr is its figure (the psnr and ssim filters print their summaries at the info level): the quiet head but its log level. */
export const FFMPEG_MEASURING: readonly string[] = ['-hide_banner', '-nostdin', '-y'];
