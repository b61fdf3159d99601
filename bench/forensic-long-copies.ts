// The forensic-long bench's copies of its title: the forensic ingest and the viewer's copy, measured as process trees
// and kept between runs in a state file.
import type { TreeMeasured } from './lib/tree-measure.js';

export const MB = 1e6;

export interface Timed {
  wallS: number;
  cpuS: number;
  peakProcessMB: number;
  peakTreeMB: number;
}

export const timed = (m: TreeMeasured): Timed => ({
  wallS: m.wallMs / 1000,
  cpuS: m.cpuS,
  peakProcessMB: m.peakProcessRss / MB,
  peakTreeMB: m.peakTreeRss / MB,
});

export interface State {
  title: string;
  videoId: string;
  segments: number;
  ingest: Timed & { at: string };
  viewer?: { payload: number; id: string; mp4: string } & Timed;
}
