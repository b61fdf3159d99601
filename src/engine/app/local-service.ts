// The application layer: this machine's engine as the WatermarkService, one object holding a service per concern:
// videos, templates, watermarks (videos.ts, templates.ts, watermarks.ts), API credentials (credentials.ts), what an
// operator watches (operations.ts) and signed media (media-access.ts). `wmark serve` and the CLI both receive it; a
// remote service (remote/remote-service.ts) has the same videos, templates and watermarks.
import type { ApiVersion } from '../../core/api-version.js';
import type { WatermarkService } from '../../service/watermark-service.js';
import type { Engine } from '../engine.js';
import { type DetectOptions, type DetectResult, detectLeak } from '../forensic/detect.js';
import { FORENSIC_MIN_SECONDS } from '../ingest/register.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { RenderMode } from '../state/state-store.js';
import type { VideoRef } from '../watermark/request.js';
import { Credentials } from './credentials.js';
import { MediaAccess } from './media-access.js';
import { Operations } from './operations.js';
import { LocalTemplates } from './templates.js';
import { LocalVideos } from './videos.js';
import { LocalWatermarks } from './watermarks.js';

export type { WatermarkRecord } from '../state/state-store.js';

export interface LocalServiceOptions {
  queue: JobQueue;
  /** Links in answers start with this unless a call gives its own base (the server passes the request's). */
  baseUrl: string;
  /** API version of answers when a call does not say. */
  api?: ApiVersion;
  /** How long POST /2.0/watermark waits for a new watermark to become playable (its READY means playable now). */
  playableTimeoutMs?: number;
  /** What a video's source and IMAGE settings may read (an API client's); undefined: anything (the CLI). */
  sourcePolicy?: SourcePolicy;
  /** How new watermarks are rendered (default full: a CLI run wants every output; serve renders on demand). */
  render?: RenderMode;
}

export class LocalService implements WatermarkService {
  readonly kind = 'local' as const;
  readonly description: string;
  readonly videos: LocalVideos;
  readonly templates: LocalTemplates;
  readonly watermarks: LocalWatermarks;
  /** API keys, the tokens issued for them, and the failed-credential counter. */
  readonly credentials: Credentials;
  /** Health, readiness, counts and the figures of /metrics. */
  readonly operations: Operations;
  /** Signed links and the media behind them, for the HTTP server. */
  readonly media: MediaAccess;
  /** Forensic watermarks need videos at least this long. */
  readonly forensicMinimumSeconds = FORENSIC_MIN_SECONDS;
  private readonly api: ApiVersion;

  constructor(
    private readonly engine: Engine,
    private readonly options: LocalServiceOptions,
  ) {
    this.api = options.api ?? '2.0';
    this.description = `the local engine in ${engine.paths.root}`;
    this.videos = new LocalVideos(engine, options.queue, options.sourcePolicy);
    this.templates = new LocalTemplates(engine);
    this.watermarks = new LocalWatermarks(engine, { ...options, api: this.api });
    this.credentials = new Credentials(engine);
    this.operations = new Operations(engine);
    this.media = new MediaAccess(engine);
  }

  get queue(): JobQueue {
    return this.options.queue;
  }

  /** The data folder this service keeps its state and media in. */
  get dataDir(): string {
    return this.engine.paths.root;
  }

  /** The engine's clock (ms). */
  now(): number {
    return this.engine.now();
  }

  apiVersion(): Promise<ApiVersion> {
    return Promise.resolve(this.api);
  }

  /** Which viewer a leaked copy was made for (forensic watermarks). */
  detect(ref: VideoRef, file: string, onStage?: (stage: string) => void, options?: DetectOptions): Promise<DetectResult> {
    return detectLeak(this.engine, ref, file, onStage, options);
  }
}
