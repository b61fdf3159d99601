// What an operator watches of the engine behind a service: liveness and readiness (its dependencies), and the
// figures of `GET /metrics`: renders in flight and finished, work waiting, jobs by state, the database's pool. Each
// figure is read when asked (a scrape), from what the engine already keeps; nothing here counts on its own.
import type { DependencyListener, DependencyStatus } from '../../core/dependency.js';
import type { BandStats } from '../band/band-render.js';
import type { Engine } from '../engine.js';
import type { FarmTasks, RendererHealth, RenderListener, RenderUrgency } from '../render/segment-renderer.js';
import type { JobRecord, PoolUse, WatermarkRecord } from '../state/state-store.js';
import { watermarkStrategy } from '../watermark/band-strategy.js';

export interface JobCount {
  kind: JobRecord['kind'];
  status: JobRecord['status'];
  count: number;
}

export class Operations {
  constructor(private readonly engine: Engine) {}

  /** Where renders go and whether that answers (a render farm's queue, its depth and workers), for /healthz. */
  health(): Promise<RendererHealth> {
    return this.engine.renderer.health();
  }

  /** Whether every dependency answers now (/readyz), each with its state; an embedded engine on SQLite has none. */
  readiness(): { ready: boolean; dependencies: DependencyStatus[] } {
    const dependencies = this.engine.dependencies.statuses();
    return { ready: dependencies.every((d) => d.up), dependencies };
  }

  /** Hears each change of a dependency (lost, back), e.g. to log it once; returns what unsubscribes. */
  watchDependencies(listener: DependencyListener): () => void {
    return this.engine.dependencies.subscribe(listener);
  }

  /** Segment renders this process runs (or waits on a farm for) now, and those waiting their turn, by urgency. */
  renders(): { running: number; waiting: Record<RenderUrgency, number> } {
    const { running, ...waiting } = this.engine.renderer.depth();
    return { running, waiting };
  }

  /** Hears every segment render that finishes, with its seconds; returns what unsubscribes. */
  onRendered(listener: RenderListener): () => void {
    return this.engine.renderer.onRendered(listener);
  }

  /** Segments rendered as a band, and band renders that fell back to a full render, by reason. */
  bandRenders(): BandStats {
    return this.engine.renderer.bandStats();
  }

  /** Which render a watermark gets (`band` or `full`) and why (`watermark view`). */
  renderStrategy(w: WatermarkRecord): Promise<{ strategy: 'band' | 'full'; reason: string }> {
    return watermarkStrategy(this.engine, w);
  }

  /** A render farm's queue depth, when the engine renders on one and its queue answers; else undefined. */
  farmTasks(): Promise<FarmTasks | undefined> {
    return this.engine.renderer.taskDepth();
  }

  /** Counts for the service's index page. */
  async counts(): Promise<{ videos: number; ingested: number; watermarks: number; ready: number }> {
    const [videos, watermarks] = await Promise.all([this.engine.store.listVideos(), this.engine.store.listWatermarks()]);
    return {
      videos: videos.length,
      ingested: videos.filter((v) => v.status === 'INGESTED').length,
      watermarks: watermarks.length,
      ready: watermarks.filter((w) => w.status === 'READY').length,
    };
  }

  /** Jobs of every kind and status, counted by the state store in one query. */
  jobCounts(): Promise<JobCount[]> {
    return this.engine.store.countJobs();
  }

  /** The state database's connection pool now (PostgreSQL); undefined for SQLite, which has none. */
  /** The state database, named without its password (a URL), or the SQLite file. */
  async stateDatabase(): Promise<string> {
    return (await this.engine.store.describe()).database;
  }

  databasePool(): PoolUse | undefined {
    return this.engine.store.poolUse();
  }
}
