// The machine a report fixture says it ran on: the report prints it, its figures do not depend on it.
import type { MachineInfo } from '../lib/suite.js';

export const MACHINE: MachineInfo = {
  cpuModel: 'cpu',
  cores: 2,
  availableParallelism: 2,
  memoryGiB: 8,
  platform: 'linux',
  node: 'v20',
  ffmpeg: 'ffmpeg 7',
  ffmpegPath: 'ffmpeg',
  ffmpegSource: 'path',
};
