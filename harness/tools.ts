// Test access to the bundled ffmpeg/ffprobe and a process runner that counts invocations.
import { locateTools } from '../src/ffmpeg/locate-tools.js';
import { createProcessRunner, type ProcessRunner } from '../src/ffmpeg/run-ffmpeg.js';

const tools = locateTools({});
export const FFMPEG = tools.ffmpeg.path;
export const FFPROBE = tools.ffprobe.path;
export const FONT = tools.font.path;

export interface CountingRunner extends ProcessRunner {
  calls: { tool: 'ffmpeg' | 'ffprobe' | 'x264'; args: readonly string[] }[];
  /** ffmpeg invocations that encode video (libx264), i.e. real work. */
  encodes(): number;
}

export function countingRunner(inner: ProcessRunner = createProcessRunner(FFMPEG, FFPROBE)): CountingRunner {
  const calls: CountingRunner['calls'] = [];
  return {
    calls,
    encodes: () => calls.filter((c) => c.tool === 'ffmpeg' && c.args.includes('libx264')).length,
    ffmpeg: (args, options) => {
      calls.push({ tool: 'ffmpeg', args });
      return inner.ffmpeg(args, options);
    },
    ffprobe: (args, options) => {
      calls.push({ tool: 'ffprobe', args });
      return inner.ffprobe(args, options);
    },
    x264: (bin, args, options) => {
      calls.push({ tool: 'x264', args });
      return inner.x264(bin, args, options);
    },
  };
}
