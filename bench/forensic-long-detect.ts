// The forensic-long bench's runs of `wmark detect`: what one run on a leak measured.
import type { Timed } from './forensic-long-copies.js';

export interface DetectRun extends Timed {
  name: string;
  file: string;
  leakMinutes: number;
  width: number;
  height: number;
  exitCode: number;
  timings: Record<string, number>;
  alignStats?: { windows: number; windowsAligned: number; votes: number };
  pieces: { leakStart: number; leakEnd: number; scale: number; offset: number; score: number }[];
  segmentsRead: number;
  slotsTotal: number;
  accused: number[];
  trueZ: number;
  bestZ: number;
  peakTop: string;
}
