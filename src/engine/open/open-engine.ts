// Opening the engine, built whole: state store, media store, render strategy, ingest path, ffmpeg, secret and clock,
// chosen once here and never changed after. A CLI run and `wmark serve` each open one; how the engine is deployed
// (everything in this process, or a render farm with or without a shared store) is a choice made here, by the
// `deployment` given, and nothing downstream asks which it was.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { EncodeOptions } from '../../core/plan/x264.js';
import { locateTools } from '../../ffmpeg/locate-tools.js';
import { createProcessRunner, type ProcessRunner } from '../../ffmpeg/run-ffmpeg.js';
import { type BandSupport, bandSupport } from '../band/band-support.js';
import { privateDir, tighten, tightenTree, usePrivateUmask } from '../data-folder/file-modes.js';
import { dataLayout } from '../data-folder/layout.js';
import { resolveSecret, SIGNING_SECRET } from '../data-folder/secret.js';
import { Dependencies } from '../dependencies.js';
import type { Deployment, EngineParts, EngineStrategies } from '../deployment.js';
import type { Engine } from '../engine.js';
import { EngineCaches } from '../engine-caches.js';
import { ChangeFeed } from '../jobs/change-feed.js';
import { openStateStore } from '../state/open-state-store.js';
import type { StateStore } from '../state/state-store.js';
import { embedded } from './embedded.js';

export interface EngineOptions {
  dataDir: string;
  ffmpeg?: string;
  ffprobe?: string;
  font?: string;
  workers: number;
  encode: EncodeOptions;
  runner?: ProcessRunner;
  now?: () => number;
  /** The state store (default: the PostgreSQL database of `database`, else the SQLite file in the data folder). */
  store?: StateStore;
  /** postgres://… : keep all state in that database (no SQLite file is made in the data folder), the secret too. */
  database?: string | undefined;
  /** How long the store keeps a repeated request's answer at most (config server.requestCacheSeconds; 0: never). */
  requestCacheMs?: number;
  /** The operator's secret (config `secret`, env WMARK_SECRET): base64url, 32 bytes or more. */
  secret?: string | undefined;
  /** How it is deployed (default: everything in this process, media in the data folder). */
  deployment?: Deployment;
  /** Band rendering (default: on when the patched x264 is found and WMARK_BAND is not `off`). */
  band?: BandSupport;
}

export async function openEngine(options: EngineOptions): Promise<Engine> {
  const paths = dataLayout(options.dataDir);
  usePrivateUmask();
  // Tightened before anything else touches the root: whether it was open decides whether the tree below is walked.
  mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  tightenTree(paths.root);
  for (const dir of [paths.media, paths.videos, paths.watermarks, paths.tmp]) privateDir(dir);
  for (const file of [paths.db, `${paths.db}-wal`, `${paths.db}-shm`, paths.secret]) tighten(file);
  const tools = locateTools({ ffmpeg: options.ffmpeg, ffprobe: options.ffprobe, font: options.font });
  const now = options.now ?? Date.now;
  const store = options.store ?? (await openStateStore({ file: paths.db, url: options.database, now, requestCacheMs: options.requestCacheMs }));
  const opened = async (): Promise<EngineStrategies & { parts: EngineParts }> => {
    const secret = await resolveSecret({
      file: paths.secret,
      given: options.secret,
      // Instances sharing a database server share its secret; nothing they need stays on one machine's disk.
      shared: options.database === undefined ? undefined : (candidate) => store.sharedSecret(SIGNING_SECRET, candidate),
    });
    const parts: EngineParts = {
      paths,
      tools,
      runner: options.runner ?? createProcessRunner(tools.ffmpeg.path, tools.ffprobe.path, { now }),
      secret,
      encode: options.encode,
      workers: Math.max(1, options.workers),
      now,
      band: options.band ?? (await bandSupport()),
    };
    return { ...(await (options.deployment ?? embedded)(parts)), parts };
  };
  const { parts, ...strategies } = await opened().catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  // A state store on a database server is watched too, first: every request needs it.
  const { dependencies, band, ...chosen } = strategies;
  return Object.freeze({
    ...parts,
    ...chosen,
    band: band ?? parts.band,
    dependencies: new Dependencies([...store.dependencies, ...(dependencies ?? [])], now),
    store,
    now,
    newId: randomUUID,
    owner: `${process.pid}:${randomUUID()}`,
    changes: new ChangeFeed(store.changeBus()),
    caches: new EngineCaches(),
    async close() {
      await strategies.renderer.close();
      strategies.media.close();
      await store.close();
    },
  });
}
