// `GET /metrics` in Prometheus' text format (prom-client): each server counts its requests by route pattern and status
// in a registry of its own (several servers in one process do not mix), and reads the engine's figures when scraped:
// renders in flight and waiting, a farm's queue depth, jobs by state, the database's pool, its dependencies. The
// process's own figures (CPU, memory, event loop) are one set per process, made at the first scrape.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { methodLabel, type RequestRecord } from '../core/log-record.js';
import type { Operations } from '../engine/app/operations.js';

/** Request latency buckets (s): segment GETs take milliseconds, a 2.0 POST may wait up to 2 minutes for playable. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Segment render buckets (s): a lead segment renders in a fraction of a second, a 4 s segment in a few seconds. */
const RENDER_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64];

let processRegistry: Registry | undefined;

/** The process's own figures, made once, when first scraped (they start timers and observers of their own). */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class ServerMetrics {
  private readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly unsubscribe: () => void;

  constructor(operations: Operations) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'wmark_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'wmark_http_request_duration_seconds',
      help: 'Time from a request to the end of its answer, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.unsubscribe = renderMetrics(registers, operations);
    databasePoolMetrics(registers, operations);
    stateMetrics(registers, operations);
  }

  /** Counts a finished request. */
  observe(record: RequestRecord): void {
    const method = methodLabel(record.method);
    this.requests.inc({ method, route: record.route, status: String(record.status) });
    this.latency.observe({ method, route: record.route }, record.ms / 1000);
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([this.registry, processMetrics()]);
    return { contentType: this.registry.contentType, body: await merged.metrics() };
  }

  /** Stops hearing of renders (the server is closing). */
  close(): void {
    this.unsubscribe();
  }
}

type Registers = Registry[];

/** Segment renders: how long they took, how many were bands and which fell back, how many run and wait now. Returns the unsubscribe of the render hook. */
function renderMetrics(registers: Registers, operations: Operations): () => void {
  const renderSeconds = new Histogram({
    name: 'wmark_render_duration_seconds',
    help: 'Segment renders finished by this process (with a render farm: waited on, from hand-over to output), by urgency',
    labelNames: ['urgency'],
    buckets: RENDER_BUCKETS,
    registers,
  });
  const unsubscribe = operations.onRendered(({ seconds, urgency }) => renderSeconds.observe({ urgency }, seconds));
  new Counter({
    name: 'wmark_band_renders_total',
    help: 'Segments this process rendered as a band alone, spliced into the shared encode (with a render farm: its workers did, for this process)',
    registers,
    collect() {
      this.reset();
      this.inc(operations.bandRenders().rendered);
    },
  });
  new Counter({
    name: 'wmark_band_fallbacks_total',
    help: 'Band renders that failed (x264 missed the clamp, the splice found the streams unlike; BAND_OFF: a farm worker without the patched x264) and rendered the segment in full instead, by reason',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(operations.bandRenders().fallbacks)) this.inc({ reason }, n);
    },
  });
  new Gauge({
    name: 'wmark_renders_in_flight',
    help: 'Segment renders running in this process now (with a render farm: being waited on)',
    registers,
    collect() {
      this.set(operations.renders().running);
    },
  });
  new Gauge({
    name: 'wmark_renders_waiting',
    help: 'Segment renders waiting for a turn in this process, by urgency (now: a player waits; ahead; background)',
    labelNames: ['urgency'],
    registers,
    collect() {
      for (const [urgency, n] of Object.entries(operations.renders().waiting)) this.set({ urgency }, n);
    },
  });
  return unsubscribe;
}

/** The PostgreSQL pool's connections and the calls waiting for one. */
function databasePoolMetrics(registers: Registers, operations: Operations): void {
  // A database server's pool only: a SQLite file has none, and its figures are left out rather than shown as 0.
  // Read before the queries of a scrape (the jobs' counts) take a connection, so they show the pool as it was.
  if (operations.databasePool()) {
    new Gauge({
      name: 'wmark_db_pool_connections',
      help: "The PostgreSQL state database's connection pool: open, idle, and the most it opens",
      labelNames: ['state'],
      registers,
      collect() {
        const pool = operations.databasePool()!;
        for (const state of ['total', 'idle', 'max'] as const) this.set({ state }, pool[state]);
      },
    });
    new Gauge({
      name: 'wmark_db_pool_waiting',
      help: 'Calls waiting for a connection of the PostgreSQL pool',
      registers,
      collect() {
        this.set(operations.databasePool()!.waiting);
      },
    });
  }
}

/** What the state and the dependencies hold: a farm's queue depth, jobs by kind and state, which dependencies answer. */
function stateMetrics(registers: Registers, operations: Operations): void {
  new Gauge({
    name: 'wmark_farm_tasks',
    help: "A render farm's queue depth: tasks waiting for a worker and being rendered (absent without a farm, or while its queue does not answer)",
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const tasks = await operations.farmTasks().catch(() => undefined);
      if (tasks) for (const [state, n] of Object.entries(tasks)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'wmark_jobs',
    help: 'Ingest and watermark jobs in the state store, by kind and state (absent while the database does not answer)',
    labelNames: ['kind', 'state'],
    registers,
    async collect() {
      this.reset();
      const counts = await operations.jobCounts().catch(() => []);
      for (const { kind, status, count } of counts) this.set({ kind, state: status }, count);
    },
  });
  new Gauge({
    name: 'wmark_dependency_up',
    help: "Whether each dependency answers now (1) or not (0): the database, a farm's queue, its media store (as /readyz)",
    labelNames: ['dependency'],
    registers,
    collect() {
      this.reset();
      for (const d of operations.readiness().dependencies) this.set({ dependency: d.name }, d.up ? 1 : 0);
    },
  });
}
