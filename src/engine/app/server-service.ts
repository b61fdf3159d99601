// The application layer as `wmark serve` runs it: jobs run in the serving process and take over any job left
// unfinished in the data folder, API clients' sources are checked by the server's source policy, and new watermarks
// render on demand.
import type { Engine } from '../engine.js';
import { type SourcePolicy, serverSourcePolicy } from '../ingest/source-policy.js';
import type { RenderMode } from '../state/state-store.js';
import { inProcessJobQueue } from './job-runs.js';
import { LocalService } from './local-service.js';

export interface ServerServiceOptions {
  /** The interface the server binds: a server reachable beyond loopback reads no local source files by default. */
  host: string;
  /** How new watermarks are rendered (default on demand). */
  render?: RenderMode;
  /** What API clients may make the server read when they ingest (default: the policy for `host` and `sources`). */
  sourcePolicy?: SourcePolicy;
  /** The source roots API clients may read files under, and whether they may reach private addresses (`serve`'s flags). */
  sources?: { sourceRoots?: readonly string[]; allowPrivateSources?: boolean };
  /** How long POST /2.0/watermark waits for a new watermark to play. */
  playableTimeoutMs?: number;
  /** Ingest and watermark jobs at once (default: what the engine's renderer suits). */
  jobConcurrency?: number;
  watermarkJobConcurrency?: number;
  log?: (line: string) => void;
}

/** The service a server answers with, once it knows its own address (the links' default base). */
export function serverService(engine: Engine, options: ServerServiceOptions): (baseUrl: string) => LocalService {
  const sourcePolicy = options.sourcePolicy ?? serverSourcePolicy(options.host, options.sources);
  const queue = inProcessJobQueue(engine, {
    ...(options.jobConcurrency !== undefined ? { concurrency: options.jobConcurrency } : {}),
    ...(options.watermarkJobConcurrency !== undefined ? { watermarkConcurrency: options.watermarkJobConcurrency } : {}),
    adoptAll: true,
    ...(options.log ? { log: options.log } : {}),
    sourcePolicy,
  });
  return (baseUrl) =>
    new LocalService(engine, { queue, baseUrl, playableTimeoutMs: options.playableTimeoutMs, sourcePolicy, render: options.render ?? 'on-demand' });
}
