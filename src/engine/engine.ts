// What an engine is: its state store, media store, render strategy, ingest path, ffmpeg, secret and clock, chosen
// once when it is opened (open/open-engine.ts) and never changed after. How it is deployed (everything in this process, or
// a render farm with or without a shared store) is a choice made there, and nothing downstream asks which it was.
import type { Dependencies } from './dependencies.js';
import type { EngineParts, EngineStrategies } from './deployment.js';
import type { EngineCaches } from './engine-caches.js';
import type { ChangeFeed } from './jobs/change-feed.js';
import type { StateStore } from './state/state-store.js';

export type { Deployment } from './deployment.js';

export interface Engine extends EngineParts, Omit<EngineStrategies, 'dependencies' | 'band'> {
  readonly store: StateStore;
  /** The deployment's dependencies beyond this machine, watched: requests that need one that is down get its 503. */
  readonly dependencies: Dependencies;
  readonly now: () => number;
  readonly newId: () => string;
  /** Identifies this process as a job lease owner. */
  readonly owner: string;
  /** Wakes watchers when a job moves on: in this process, and in the others on the same database server. */
  readonly changes: ChangeFeed;
  /** What this engine keeps in memory between calls (renderers of watermarks being played, font metrics, codebooks). */
  readonly caches: EngineCaches;
  close(): Promise<void>;
}
