// What an engine is built from: its parts that exist before its strategies, and the strategies a deployment chooses
// (where media lives, who renders segments, who ingests). A deployment is a function from the one to the other.
import type { Dependency } from '../core/dependency.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import type { MediaTools } from '../ffmpeg/locate-tools.js';
import type { ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import type { MediaStore } from '../media/media-store.js';
import type { BandSupport } from './band/band-support.js';
import type { DataLayout } from './data-folder/layout.js';
import type { IngestPath } from './ingest-path.js';
import type { SegmentRenderer } from './render/segment-renderer.js';

export interface EngineParts {
  paths: DataLayout;
  tools: MediaTools;
  runner: ProcessRunner;
  secret: Buffer;
  encode: EncodeOptions;
  workers: number;
  /** The engine's clock: every time the engine reads goes through it. */
  now: () => number;
  /** Whether marks that fit a band render there (the patched x264 found), or why not. */
  band: BandSupport;
}

export interface EngineStrategies {
  media: MediaStore;
  renderer: SegmentRenderer;
  ingest: IngestPath;
  /** What the strategies reach over the network and watch (a farm's queue, a bucket); none for the embedded one. */
  dependencies?: readonly Dependency[];
  /** Band rendering as the renderer does it, when it differs from this machine's (a farm's workers each bring their x264). */
  band?: BandSupport;
}

/** Builds an engine's strategies from its parts (the embedded default, or a render farm's). */
export type Deployment = (parts: EngineParts) => Promise<EngineStrategies>;
