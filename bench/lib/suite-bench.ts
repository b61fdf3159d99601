// What a suite's parts share while it runs, whichever the suite: its context and options, its working folder, where
// and how wmark runs, and the clip it measures. Each suite extends it with what only its own parts need.
import type { SuiteContext } from './suite.js';
import type { SourceClip } from './video.js';

export interface SuiteBench<O> {
  ctx: SuiteContext;
  /** The suite's options, parsed. */
  o: O;
  /** Its working folder under bench/out (removed afterwards unless --keep). */
  runDir: string;
  /** The folder wmark starts in and its environment (wmarkEnvironment). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  clip: SourceClip;
}
