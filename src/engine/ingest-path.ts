// The ingest strategy: how a registered video's source becomes its working segments (and forensic variants). An
// engine is built with one: ffmpeg in this process, or the render farm's workers.
import type { JobReporter } from './jobs/job-reporter.js';
import type { VideoRecord } from './state/state-store.js';

export interface IngestPath {
  /**
   * Normalises `video` from the local file `input` into its working media (in the engine's media store) and resolves
   * with the record's new fields (INGESTED, segment durations, time origin). Interrupted, it leaves what a resumed
   * ingest can pick up; failed, it leaves nothing.
   */
  normalise(video: VideoRecord, input: string, report: JobReporter, signal?: AbortSignal): Promise<Partial<VideoRecord>>;
}
