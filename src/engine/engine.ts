// The local engine's wiring: state store, media paths, ffmpeg runner, secret and clock, opened once per CLI run or server.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dataPaths, type DataPaths } from '../config/paths.js';
import type { EncodeOptions } from '../core/plan/x264.js';
import { locateTools, type MediaTools } from '../ffmpeg/locate-tools.js';
import type { MediaStore } from '../media/media-store.js';
import { createProcessRunner, type ProcessRunner } from '../ffmpeg/run-ffmpeg.js';
import { ChangeFeed } from './change-feed.js';
import { privateDir, tighten, tightenTree, usePrivateUmask } from './file-modes.js';
import { RenderScheduler } from './render-scheduler.js';
import type { IngestFarm } from './ingest-farm.js';
import type { SegmentFarm } from './segment-farm.js';
import { loadOrCreateSecret } from './secret.js';
import type { StateStore } from './state-store.js';
import { Store } from './store.js';

export interface Engine {
  store: StateStore;
  paths: DataPaths;
  tools: MediaTools;
  runner: ProcessRunner;
  secret: Buffer;
  encode: EncodeOptions;
  workers: number;
  now: () => number;
  newId: () => string;
  /** Identifies this process as a job lease owner. */
  owner: string;
  /** Wakes watchers in this process when a job moves on. */
  changes: ChangeFeed;
  /** Every segment render of this process shares its `workers` threads through here, most urgent first. */
  renders: RenderScheduler;
  /** With `wmark serve --queue`: segment renders run on the render farm's workers (segment-farm.ts). */
  farm?: SegmentFarm;
  /** With `wmark serve --queue`: ingest transcodes and forensic preparation run on the farm's workers (ingest-farm.ts). */
  ingestFarm?: IngestFarm;
  /**
   * With `wmark serve --queue … --media URL`: the store shared with the farm's workers (media-publish.ts). Media serve
   * makes is published there, rendered segments and mp4s live only there, and the media route streams from it.
   * Unset, paths.media is the only copy (embedded, or workers that mount it).
   */
  media?: MediaStore;
  close(): void;
}

export interface EngineOptions {
  dataDir: string;
  ffmpeg?: string;
  ffprobe?: string;
  font?: string;
  workers: number;
  encode: EncodeOptions;
  runner?: ProcessRunner;
  now?: () => number;
  /** The state store (default: the SQLite file in the data folder). */
  store?: StateStore;
}

export function openEngine(options: EngineOptions): Engine {
  const paths = dataPaths(options.dataDir);
  usePrivateUmask();
  // Tightened before anything else touches the root: whether it was open decides whether the tree below is walked.
  mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  tightenTree(paths.root);
  for (const dir of [paths.media, paths.videos, paths.watermarks, paths.tmp]) privateDir(dir);
  for (const file of [paths.db, `${paths.db}-wal`, `${paths.db}-shm`, paths.secret]) tighten(file);
  const tools = locateTools({ ffmpeg: options.ffmpeg, ffprobe: options.ffprobe, font: options.font });
  const store = options.store ?? new Store(paths.db);
  const workers = Math.max(1, options.workers);
  return {
    store,
    paths,
    tools,
    runner: options.runner ?? createProcessRunner(tools.ffmpeg.path, tools.ffprobe.path),
    secret: loadOrCreateSecret(paths.secret),
    encode: options.encode,
    workers,
    now: options.now ?? Date.now,
    newId: randomUUID,
    owner: `${process.pid}:${randomUUID()}`,
    changes: new ChangeFeed(),
    renders: new RenderScheduler(workers),
    close: () => store.close(),
  };
}
