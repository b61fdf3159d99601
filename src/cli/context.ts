// Per-run state shared by commands: parsed global flags, output, config (loaded once), and the service a command
// talks to: the local engine (opened on demand, with the job queue the command needs) or a remote service.

import { existsSync } from 'node:fs';
import type { ConfigFlags, ResolvedConfig } from '../config/load-config.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { localUrl } from '../core/listen-url.js';
import type { Engine, EngineChoice } from '../engine/app/configured-engine.js';
import type { LocalService, LocalServiceOptions } from '../engine/app/local-service.js';
import type { RemoteService } from '../remote/remote-service.js';
import { flagError } from './flag-error.js';
import type { CliIO } from './io.js';
import { Output } from './output.js';
import { openRemote, type RemoteFlags } from './remote-flags.js';
import { readServeRecord } from './serve-record.js';

export interface GlobalFlags {
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  config?: string;
  dataDir?: string;
  /** `--db URL`; `true` for a bare `--db`, which only `doctor --db` takes (check the configured database). */
  db?: string | true;
}

/** Who runs the jobs a local command starts: this process (it waits for them), a detached one, or nobody. */
type QueueChoice = 'in-process' | 'detached';

export interface LocalOptions {
  queue?: QueueChoice;
  /** Base of the links in answers (--public-url); else the running `wmark serve`'s address, config, or the default. */
  publicUrl?: string;
  api?: ApiVersion;
}

/** The service a command talks to: its kind says which, so local-only capabilities need no cast. */
export type AnyService = LocalService | RemoteService;

/** The commands that start a new data folder where none is, by design; any other refuses a missing --data-dir. */
const CREATES_DATA_FOLDER = new Set(['ingest', 'demo', 'serve', 'template create', 'auth keys create']);

export class CliContext {
  readonly output: Output;
  private config?: Promise<ResolvedConfig>;
  private engine?: Promise<Engine>;
  private queue?: LocalServiceOptions['queue'];
  private readonly extraFlags: ConfigFlags = {};
  private bareDbTaken = false;

  constructor(
    readonly io: CliIO,
    readonly flags: GlobalFlags,
    /** The command run, as typed without its flags (`watermark list`). */
    readonly command = '',
  ) {
    this.output = new Output(io, {
      json: Boolean(flags.json),
      quiet: Boolean(flags.quiet),
      verbose: Boolean(flags.verbose),
      color: flags.color === false ? false : undefined,
    });
  }

  get signal(): AbortSignal | undefined {
    return this.io.signal;
  }

  /** Command-specific flags that also exist in config (e.g. --workers, --port) join the flag layer. */
  setConfigFlags(flags: ConfigFlags): void {
    if (this.config) throw new Error('config flags must be set before the config is loaded');
    for (const [k, v] of Object.entries(flags)) if (v !== undefined) (this.extraFlags as Record<string, unknown>)[k] = v;
  }

  /** For `doctor --db`: whether a bare `--db` was given (the configured database is to be checked), which it then takes. */
  takeBareDb(): boolean {
    this.bareDbTaken = true;
    return this.flags.db === true;
  }

  loadConfig(): Promise<ResolvedConfig> {
    if (this.flags.db === true && !this.bareDbTaken) return Promise.reject(flagError('--db', 'a postgres:// URL', ''));
    const db = typeof this.flags.db === 'string' ? this.flags.db : undefined;
    // The config loaders (cosmiconfig, YAML, the schema) load with the first command that reads config, not at start.
    this.config ??= import('../config/load-config.js').then(({ loadConfig }) =>
      loadConfig({
        cwd: this.io.cwd,
        env: this.io.env,
        explicitFile: this.flags.config,
        flags: { ...this.extraFlags, dataDir: this.flags.dataDir, db, color: this.flags.color === false ? false : undefined },
      }),
    );
    return this.config;
  }

  /**
   * The engine on this run's data dir, opened once (closed with the run), as the command chose it (`serve` a farm's,
   * `detect --media` one reading a farm's store; the embedded one by default); only `serve` and the job runner hold it.
   */
  openEngine(choice: EngineChoice = {}): Promise<Engine> {
    // The engine (SQLite, ffmpeg, the renderers) loads here, not at start: --help and --version never pay for it.
    this.engine ??= this.loadConfig().then(async (config) => {
      const fresh = this.checkDataFolder(config);
      const { openConfiguredEngine } = await import('../engine/app/configured-engine.js');
      const engine = openConfiguredEngine(config, choice);
      if (!fresh) return engine;
      return engine.then((opened) => {
        this.output.info(`created a new data folder at ${config.dataDir}`);
        return opened;
      });
    });
    return this.engine;
  }

  /**
   * Whether opening the engine starts a new data folder (to be said); refused when the folder was named (flag, env or
   * config file) and this command is not one that starts a data folder by design.
   */
  private checkDataFolder(config: ResolvedConfig): boolean {
    if (existsSync(config.dataDir)) return false;
    const named = config.sources.dataDir;
    // With a state database the data folder holds media only, and a new one on this machine is expected.
    if (named !== undefined && !config.db && !CREATES_DATA_FOLDER.has(this.command))
      throw new WmarkError('DATA_DIR_MISSING', `the data folder ${config.dataDir} (${named}) does not exist`);
    return true;
  }

  /** The local engine as a service. Jobs it starts run in this process (waited for) unless `queue` says detached. */
  async localService(options: LocalOptions = {}): Promise<LocalService> {
    const config = await this.loadConfig();
    const engine = await this.openEngine();
    const [{ LocalService }, { commandJobQueue }] = await Promise.all([import('../engine/app/local-service.js'), import('../engine/app/job-runs.js')]);
    this.queue ??= commandJobQueue(engine, {
      log: (line) => this.output.warn(line),
      ...(options.queue === 'detached' ? { detached: { configFile: this.flags.config, database: config.db?.url, io: this.io } } : {}),
    });
    return new LocalService(engine, { queue: this.queue, baseUrl: this.linkBase(options.publicUrl, config, config.dataDir), api: options.api });
  }

  /**
   * The base of the links local commands print: --public-url, else the `wmark serve` running on this data folder (its
   * public URL or where it listens), else publicUrl from config or env, else where `serve` listens by default.
   */
  private linkBase(publicUrl: string | undefined, config: ResolvedConfig, dataDir: string): string {
    if (publicUrl !== undefined) return publicUrl;
    const running = readServeRecord(dataDir);
    if (running) return running.baseUrl;
    return config.publicUrl ?? localUrl(config.server.host, config.server.port);
  }

  /** The service a command talks to: a remote one with --remote, else the local engine. */
  async service(flags: RemoteFlags & { publicUrl?: string }, options: LocalOptions & { apiFlag?: string; defaultTimeout?: string } = {}): Promise<AnyService> {
    if (flags.remote === undefined) return this.localService({ ...options, publicUrl: flags.publicUrl ?? options.publicUrl });
    const remote = await openRemote(this, flags, {
      ...('apiFlag' in options ? { apiFlag: options.apiFlag } : {}),
      ...(options.defaultTimeout ? { defaultTimeout: options.defaultTimeout } : {}),
    });
    const { RemoteService } = await import('../remote/remote-service.js');
    return new RemoteService(remote.session, remote.api);
  }

  async close(): Promise<void> {
    this.output.stopSpinner();
    await this.queue?.close();
    const engine = this.engine;
    this.engine = undefined;
    await (await engine?.catch(() => undefined))?.close();
  }
}
