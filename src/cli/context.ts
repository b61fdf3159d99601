// Per-run state shared by commands: parsed global flags, output, config (loaded once) and the local engine (opened on demand).
import { loadConfig, type ConfigFlags, type ResolvedConfig } from '../config/load-config.js';
import { openEngine, type Engine } from '../engine/engine.js';
import type { CliIO } from './io.js';
import { Output } from './output.js';

export interface GlobalFlags {
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  config?: string;
  dataDir?: string;
}

export class CliContext {
  readonly output: Output;
  private config?: Promise<ResolvedConfig>;
  private engine?: Engine;
  private readonly extraFlags: ConfigFlags = {};

  constructor(
    readonly io: CliIO,
    readonly flags: GlobalFlags,
  ) {
    this.output = new Output(io, { json: Boolean(flags.json), quiet: Boolean(flags.quiet), verbose: Boolean(flags.verbose), color: flags.color === false ? false : undefined });
  }

  get signal(): AbortSignal | undefined {
    return this.io.signal;
  }

  /** Command-specific flags that also exist in config (e.g. --workers, --port) join the flag layer. */
  setConfigFlags(flags: ConfigFlags): void {
    if (this.config) throw new Error('config flags must be set before the config is loaded');
    for (const [k, v] of Object.entries(flags)) if (v !== undefined) (this.extraFlags as Record<string, unknown>)[k] = v;
  }

  loadConfig(): Promise<ResolvedConfig> {
    this.config ??= loadConfig({
      cwd: this.io.cwd,
      env: this.io.env,
      explicitFile: this.flags.config,
      flags: { ...this.extraFlags, dataDir: this.flags.dataDir, color: this.flags.color === false ? false : undefined },
    });
    return this.config;
  }

  async openEngine(): Promise<Engine> {
    if (this.engine) return this.engine;
    const config = await this.loadConfig();
    this.engine = openEngine({
      dataDir: config.dataDir,
      ffmpeg: config.ffmpeg,
      ffprobe: config.ffprobe,
      font: config.font,
      workers: config.workers,
      encode: config.encode,
    });
    return this.engine;
  }

  close(): void {
    this.output.stopSpinner();
    this.engine?.close();
    this.engine = undefined;
  }
}
